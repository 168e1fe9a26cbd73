"""DirectConnections: blocking sockets a caller's own thread sends requests on, one request at a time.

The blocking :class:`~.producer.Producer` sends from the caller's thread on these instead of
handing each send to the client instance's event-loop thread and waiting for it: the hop cost two
thread wake-ups and GIL hand-offs per send (about as long as the broker's whole answer on
loopback). A connection carries one request and then its response, so a thread holds one while it
sends; idle connections go back to a small pool per address, so concurrent threads get one each
and a thread that ends leaves nothing behind.

The requests are the ones the asyncio client sends: the same :class:`RemotingCommand` frames,
signed by the same :class:`~brokers.engine.remoting.request_guard.RequestSigner` (ACL) right
before they are encoded, over TLS with the same (cached) SSL context when the
:class:`~brokers.engine.remoting.tls.TlsConfig` says so. The errors are the asyncio client's too:
RemotingConnectError when the broker cannot be reached or the connection drops before the answer,
RemotingTimeoutError when no answer comes within the timeout (connecting included); a connection
that failed either way is closed, never reused. A pooled connection the broker closed meanwhile
(brokers close connections idle for two minutes) is noticed before a request is written on it, and
a new one is opened instead: an idle spell never costs a failed attempt. A request the broker
sends over the connection (these connections never heartbeat, so brokers have no reason to) is
dropped unanswered. A forked child does not use its parent's connections; it opens its own.
"""

from __future__ import annotations

import logging
import os
import select
import socket
import ssl
import threading
import time

from brokers.engine.common.constants import MAX_FRAME_SIZE
from brokers.engine.remoting.client import CONNECT_TIMEOUT_S, split_addr
from brokers.engine.remoting.command import FLAG_RESPONSE, LENGTH_PREFIX, RemotingCommand, check_frame_length
from brokers.engine.remoting.errors import RemotingConnectError, RemotingTimeoutError
from brokers.engine.remoting.request_guard import RequestSigner
from brokers.engine.remoting.tls import TlsConfig
from brokers.engine.remoting.tls_connect import client_context

__all__ = ["DirectConnection", "DirectConnections"]

log = logging.getLogger("brokers.engine.client")

MAX_IDLE_PER_ADDR = 8  # idle connections kept per address; more (after a burst of threads) are closed
_RECV_SIZE = 256 * 1024


class DirectConnection:
    """One blocking socket to one address; :meth:`invoke` sends a request and reads its response."""

    def __init__(self, addr: str, sock: socket.socket, max_frame_size: int = MAX_FRAME_SIZE) -> None:
        self.addr = addr
        self.sock = sock
        self.max_frame_size = max_frame_size
        self._buf = bytearray()

    @classmethod
    def open(
        cls, addr: str, tls: TlsConfig | None, timeout_s: float, max_frame_size: int = MAX_FRAME_SIZE
    ) -> DirectConnection:
        """Connect (and shake hands) within ``timeout_s``; RemotingConnectError when that fails."""
        try:
            host, port = split_addr(addr)
        except ValueError as exc:
            raise RemotingConnectError(str(exc), addr) from None
        context = client_context(tls) if tls is not None else None
        try:
            sock = socket.create_connection((host, port), timeout=timeout_s)
        except TimeoutError:
            raise RemotingConnectError(f"connect to {addr} timed out after {timeout_s}s", addr) from None
        except OSError as exc:
            raise RemotingConnectError(f"connect to {addr} failed: {exc}", addr) from None
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if context is not None:
                assert tls is not None
                sock = context.wrap_socket(sock, server_hostname=tls.server_hostname or host)
        except TimeoutError:
            sock.close()
            raise RemotingConnectError(f"connect to {addr} timed out after {timeout_s}s", addr) from None
        except OSError as exc:  # ssl.SSLError included
            sock.close()
            raise RemotingConnectError(
                f"connect to {addr} failed: {_handshake_failure(exc, host, port, tls)}", addr
            ) from None
        return cls(addr, sock, max_frame_size)

    def invoke(self, request: RemotingCommand, timeout_s: float) -> RemotingCommand:
        """Send ``request`` (already signed) and return the response with its opaque.

        Raises RemotingTimeoutError or RemotingConnectError; the connection is then unusable (close it).
        """
        frame = request.encode(self.max_frame_size)
        deadline = time.monotonic() + timeout_s
        sock = self.sock
        try:
            sock.settimeout(timeout_s)
            sock.sendall(frame)
            if request.is_oneway:
                return request
            while True:
                response = RemotingCommand.decode(self._read_frame(deadline))
                if response.flag & FLAG_RESPONSE and response.opaque == request.opaque:
                    return response
                log.debug("direct connection to %s: unexpected frame dropped: %r", self.addr, response)
        except TimeoutError:
            raise RemotingTimeoutError(
                f"no response to request code {request.code} (opaque {request.opaque}) from {self.addr} "
                f"within {timeout_s}s",
                self.addr,
                timeout_s,
            ) from None
        except OSError as exc:
            raise RemotingConnectError(
                f"connection to {self.addr} closed before the response (opaque {request.opaque}): {exc}", self.addr
            ) from None

    def _read_frame(self, deadline: float) -> bytes:
        """The next frame without its length prefix (header word onwards)."""
        buf = self._buf
        while True:
            if len(buf) >= 4:
                (total,) = LENGTH_PREFIX.unpack_from(buf)
                check_frame_length(total, self.max_frame_size)
                if len(buf) >= 4 + total:
                    frame = bytes(buf[4 : 4 + total])
                    del buf[: 4 + total]
                    return frame
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            self.sock.settimeout(remaining)
            chunk = self.sock.recv(_RECV_SIZE)
            if not chunk:
                raise ConnectionResetError("the peer closed the connection")
            buf += chunk

    def closed_by_peer(self) -> bool:
        """True when the idle socket is readable: the peer closed it (or sent what nobody asked for)."""
        try:
            return bool(select.select((self.sock,), (), (), 0)[0])
        except (OSError, ValueError):
            return True

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


class DirectConnections:
    """Pools of :class:`DirectConnection` per address; thread-safe. See the module docstring."""

    def __init__(
        self,
        *,
        signer: RequestSigner | None = None,
        tls: TlsConfig | None = None,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
        max_idle_per_addr: int = MAX_IDLE_PER_ADDR,
    ) -> None:
        self.signer = signer
        self.tls = tls
        self.connect_timeout_s = connect_timeout_s
        self.max_idle_per_addr = max_idle_per_addr
        self._idle: dict[str, list[DirectConnection]] = {}
        self._lock = threading.Lock()
        self._closed = False
        self._pid = os.getpid()

    def invoke(self, addr: str, request: RemotingCommand, timeout_s: float) -> RemotingCommand:
        """Send ``request`` to ``addr`` on an idle (or new) connection; ``timeout_s`` bounds connect and wait."""
        if self._closed:
            raise RemotingConnectError("client is closed", addr)
        if self.signer is not None:
            self.signer.sign_request(request)
        conn = self._idle_connection(addr)
        if conn is not None:
            remaining = timeout_s
        else:
            begin = time.monotonic()
            conn = DirectConnection.open(addr, self.tls, min(self.connect_timeout_s, timeout_s))
            remaining = timeout_s - (time.monotonic() - begin)
            if remaining <= 0:
                conn.close()
                raise RemotingTimeoutError(
                    f"no time left for request code {request.code} to {addr}", addr, timeout_s
                ) from None
        try:
            response = conn.invoke(request, remaining)
        except BaseException:
            conn.close()
            raise
        self._put_back(conn)
        return response

    def _idle_connection(self, addr: str) -> DirectConnection | None:
        """A pooled connection to ``addr`` the broker has not closed, or None."""
        if self._pid != os.getpid():  # a forked child: the parent's sockets are not ours to talk on
            with self._lock:
                stale = [c for idle in self._idle.values() for c in idle]
                self._idle, self._pid = {}, os.getpid()
            for c in stale:
                c.close()
        idle = self._idle.get(addr)
        while idle:
            try:
                conn = idle.pop()
            except IndexError:  # another thread took the last one
                return None
            if not conn.closed_by_peer():
                return conn
            log.debug("direct connection to %s was closed by the peer; opening another", addr)
            conn.close()
        return None

    def _put_back(self, conn: DirectConnection) -> None:
        with self._lock:
            idle = self._idle.setdefault(conn.addr, [])
            if not self._closed and len(idle) < self.max_idle_per_addr:
                idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        """Close the idle connections; those in use are closed when their request ends."""
        with self._lock:
            self._closed = True
            conns = [c for idle in self._idle.values() for c in idle]
            self._idle.clear()
        for conn in conns:
            conn.close()


def _handshake_failure(exc: OSError, host: str, port: int, tls: TlsConfig | None) -> str:
    """What went wrong in a TLS handshake, worded as :mod:`~brokers.engine.remoting.tls_connect` words it."""
    if tls is None:
        return str(exc)
    hostname = tls.server_hostname or host
    if isinstance(exc, ssl.SSLCertVerificationError):
        return (
            f"TLS: the certificate of {host}:{port} failed verification ({exc.verify_message or exc.reason}); "
            f"check that the CA file ({tls.ca_file or 'the system CAs'}) signed it and that it names {hostname}"
        )
    if isinstance(exc, ssl.SSLError):
        return (
            f"TLS handshake with {host}:{port} failed: {exc.reason or exc} "
            "(does the server speak TLS, and does it want a client certificate?)"
        )
    if isinstance(exc, ConnectionResetError):
        return (
            f"TLS handshake with {host}:{port} failed: the server closed the connection ({exc}); "
            "does it speak TLS (--tls-mode), and does it want a client certificate?"
        )
    return str(exc)
