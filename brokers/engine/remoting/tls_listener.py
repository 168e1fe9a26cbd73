"""TlsListener: a listening port that serves TLS, or TLS and plain TCP, per :class:`TlsConfig`'s mode.

:func:`start_server` is ``asyncio.start_server`` for the remoting and HA ports: with TLS disabled it
*is* ``asyncio.start_server`` (nothing changes); in ``permissive`` or ``enforcing`` mode it returns
a TlsListener with the same three things the servers use (``sockets``, ``close()``,
``wait_closed()``) and hands the callback the same ``(reader, writer)`` pair, decrypted.

How a connection is told apart (RocketMQ's ``HandshakeHandler`` reads the first byte too): the
listener accepts sockets itself (``loop.sock_accept``), waits until the new socket is readable,
and peeks at its first byte with ``MSG_PEEK``, so nothing is consumed. ``0x16`` (a TLS handshake
record) goes to ``loop.connect_accepted_socket(..., ssl=context)``, which runs the server-side
handshake and then calls back with streams over the decrypted transport; any other byte in
permissive mode goes to the same call without ``ssl``. Why not ``start_server`` plus a peek or
``start_tls`` afterwards: asyncio's transport starts reading as soon as the callback runs, so the
ClientHello would already sit in the plain StreamReader's buffer, where no TLS layer can get it
back; a socket with no transport yet can be peeked with public APIs only.

Refusals close the connection with a log line, at most one per reason every
``REFUSAL_LOG_INTERVAL_S`` (with a count of the ones not logged): a plain connection in enforcing
mode, a failed handshake (no shared version, an untrusted client certificate, a peer that closed),
a peer silent for the handshake timeout, more than ``MAX_PENDING`` connections not yet past their
handshake.
"""

from __future__ import annotations

import asyncio
import logging
import math
import socket
import ssl
import time
from collections.abc import Awaitable, Callable
from typing import Any

from brokers.engine.remoting.tls import TlsConfig

__all__ = ["MAX_PENDING", "TlsListener", "defer_accept", "start_server"]

log = logging.getLogger("brokers.engine.remoting.tls")
# Connections the kernel holds for a port before they are accepted (capped by net.core.somaxconn). A
# flood of connects fills a short queue, and a newcomer's connect dropped there is retried only after
# a second (TCP's first SYN retransmission); 1024 keeps room for it behind a burst of thousands.
LISTEN_BACKLOG = 1024

SYNCOOKIES = "/proc/sys/net/ipv4/tcp_syncookies"

ConnectedCallback = Callable[[asyncio.StreamReader, asyncio.StreamWriter], "Awaitable[None] | None"]

TLS_HANDSHAKE_RECORD = 0x16
MAX_PENDING = 256  # connections between accept and the end of their handshake
REFUSAL_LOG_INTERVAL_S = 10.0
STREAM_LIMIT = 2**16  # asyncio.start_server's StreamReader limit


class RateLimitedLog:
    """Log a warning per reason at most once every ``interval_s``, counting the ones skipped."""

    def __init__(self, logger: logging.Logger, interval_s: float = REFUSAL_LOG_INTERVAL_S) -> None:
        self._log = logger
        self._interval_s = interval_s
        self._last: dict[str, float] = {}
        self._skipped: dict[str, int] = {}

    def warning(self, reason: str, message: str, *args: object) -> None:
        now = time.monotonic()
        last = self._last.get(reason)
        if last is not None and now - last < self._interval_s:
            self._skipped[reason] = self._skipped.get(reason, 0) + 1
            return
        self._last[reason] = now
        skipped = self._skipped.pop(reason, 0)
        suffix = f" ({skipped} more like it in the last {self._interval_s:.0f} s not logged)" if skipped else ""
        self._log.warning(message + suffix, *args)


async def start_server(
    callback: ConnectedCallback, host: str, port: int, tls: TlsConfig | None, *, name: str = "remoting"
) -> asyncio.Server | TlsListener:
    """Listen on ``host:port``; plain ``asyncio.start_server`` unless ``tls`` serves TLS."""
    if tls is None or not tls.serves_tls:
        return await asyncio.start_server(callback, host, port, backlog=LISTEN_BACKLOG)
    listener = TlsListener(callback, tls, name=name)
    await listener.start(host, port)
    return listener


def defer_accept(sock: socket.socket | Any, seconds: float, *, name: str = "remoting") -> bool:
    """Have the kernel hold each new connection on ``sock`` until its first bytes arrive, or for about
    ``seconds`` (``TCP_DEFER_ACCEPT``), for a port whose clients speak first; True when it is set.

    Not set where SYN cookies are off: the connections held count against the listener's SYN
    queue, and with it full and no cookies, the kernel would drop every newcomer's connect. With
    cookies (Linux's default), a newcomer past a full queue is answered with one and accepted."""
    if seconds <= 0 or not hasattr(socket, "TCP_DEFER_ACCEPT"):
        return False
    try:
        with open(SYNCOOKIES) as f:
            cookies = f.read().strip()
    except OSError:
        cookies = "?"
    if cookies == "0":
        log.warning(
            "%s: net.ipv4.tcp_syncookies is 0, so silent connections are accepted at once (no TCP_DEFER_ACCEPT): "
            "they would fill the SYN queue and shut out newcomers",
            name,
        )
        return False
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, max(1, math.ceil(seconds)))
    except OSError as e:
        log.warning("%s: TCP_DEFER_ACCEPT not set (%s); silent connections are accepted at once", name, e)
        return False
    return True


def _peer(sock: socket.socket) -> str:
    try:
        host, port = sock.getpeername()[:2]
        return f"{host}:{port}"
    except OSError:
        return "?"


class TlsListener:
    """One listening socket; connections peeked, wrapped or refused per the mode (module docstring)."""

    def __init__(self, callback: ConnectedCallback, tls: TlsConfig, *, name: str = "remoting") -> None:
        self.tls = tls
        self.name = name
        self.refused = 0  # connections closed before reaching the callback
        self._callback = callback
        self._context = tls.server_context()
        self._refusals = RateLimitedLog(log)
        self._sock: socket.socket | None = None
        self._accepting: asyncio.Task[None] | None = None
        self._pending: set[asyncio.Task[None]] = set()

    @property
    def sockets(self) -> list[socket.socket]:
        return [self._sock] if self._sock is not None else []

    async def start(self, host: str, port: int) -> None:
        loop = asyncio.get_running_loop()
        infos = await loop.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, _, _, _, address = infos[0]
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
            sock.listen(LISTEN_BACKLOG)
            sock.setblocking(False)
        except OSError:
            sock.close()
            raise
        self._sock = sock
        self._accepting = loop.create_task(self._accept_loop(sock), name=f"{self.name}-tls-accept")
        log.info(
            "%s: TLS %s on %s:%s (client auth %s)",
            self.name,
            self.tls.mode,
            host,
            sock.getsockname()[1],
            self.tls.client_auth,
        )

    def close(self) -> None:
        """Stop accepting and drop connections still in their handshake (served ones stay open)."""
        if self._accepting is not None:
            self._accepting.cancel()
        for task in list(self._pending):
            task.cancel()
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    async def wait_closed(self) -> None:
        tasks = [t for t in (self._accepting, *self._pending) if t is not None]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _accept_loop(self, sock: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                conn, _ = await loop.sock_accept(sock)
            except asyncio.CancelledError:
                raise
            except OSError as exc:  # out of descriptors and the like: back off a little, keep listening
                self._refusals.warning("accept", "%s: accept failed: %s", self.name, exc)
                await asyncio.sleep(0.1)
                continue
            conn.setblocking(False)
            if len(self._pending) >= MAX_PENDING:
                self._refuse(
                    conn,
                    "pending",
                    "%s: connection from %s closed: %d connections are already in their TLS handshake",
                    self.name,
                    _peer(conn),
                    len(self._pending),
                )
                continue
            task = loop.create_task(self._serve(conn))
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)

    def _refuse(self, conn: socket.socket, reason: str, message: str, *args: object) -> None:
        self.refused += 1
        self._refusals.warning(reason, message, *args)
        conn.close()

    async def _serve(self, conn: socket.socket) -> None:
        peer = _peer(conn)
        try:
            first = await self._peek(conn)
        except TimeoutError:
            self._refuse(
                conn,
                "silent",
                "%s: connection from %s closed: nothing received within %.0f s",
                self.name,
                peer,
                self.tls.handshake_timeout_s,
            )
            return
        except OSError as exc:
            log.debug("%s: connection from %s failed before its first byte: %s", self.name, peer, exc)
            conn.close()
            return
        except asyncio.CancelledError:
            conn.close()
            raise
        if not first:  # the peer closed before saying anything
            conn.close()
            return
        wrap = first[0] == TLS_HANDSHAKE_RECORD
        if not wrap and not self.tls.serves_plain:
            self._refuse(
                conn, "plain", "%s: plain connection from %s refused: TLS is enforced on this port", self.name, peer
            )
            return
        await self._hand_over(conn, peer, self._context if wrap else None)

    async def _peek(self, conn: socket.socket) -> bytes:
        """The first byte the peer sent, left unread in the socket (b"" when it closed)."""
        loop = asyncio.get_running_loop()
        readable: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            if not readable.done():
                readable.set_result(None)

        loop.add_reader(conn.fileno(), wake)
        try:
            await asyncio.wait_for(readable, self.tls.handshake_timeout_s)
        finally:
            loop.remove_reader(conn.fileno())
        return conn.recv(1, socket.MSG_PEEK)

    async def _hand_over(self, conn: socket.socket, peer: str, context: ssl.SSLContext | None) -> None:
        """Give the socket a transport (wrapped when ``context``) and its streams to the callback."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=STREAM_LIMIT, loop=loop)
        protocol = asyncio.StreamReaderProtocol(reader, self._callback, loop=loop)
        try:
            if context is None:
                await loop.connect_accepted_socket(lambda: protocol, conn)
            else:
                await loop.connect_accepted_socket(
                    lambda: protocol, conn, ssl=context, ssl_handshake_timeout=self.tls.handshake_timeout_s
                )
        except asyncio.CancelledError:
            conn.close()
            raise
        except (OSError, TimeoutError) as exc:  # ssl.SSLError is an OSError
            self._refuse(conn, "handshake", "%s: TLS handshake with %s failed: %s", self.name, peer, _reason(exc))


def _reason(exc: BaseException) -> str:
    """What went wrong in a handshake, in a few words (never empty)."""
    if isinstance(exc, ssl.SSLError):
        text = getattr(exc, "verify_message", None) or exc.reason
        if text:
            return str(text)
    if isinstance(exc, TimeoutError):
        return "no handshake within the timeout"
    return str(exc) or type(exc).__name__
