"""RemotingClient: asyncio connections to name servers and brokers, one per address.

A connection is opened on first use, reused by every later call to the same address, and opened
again after it closed.  Responses are matched by opaque; a call that gets no response within its
timeout raises RemotingTimeoutError (its pending entry is removed), an unreachable peer raises
RemotingConnectError, and calls still waiting when a connection drops fail with
RemotingConnectError.  Requests the server sends back over the connection
(NOTIFY_CONSUMER_IDS_CHANGED, GET_CONSUMER_RUNNING_INFO, ...) go to registered processors; others
are answered REQUEST_CODE_NOT_SUPPORTED unless oneway. With a
:class:`~brokers.engine.remoting.request_guard.RequestSigner` (the ACL's AclClientHook) every
request is signed right before it is written, each resend again. With a
:class:`~brokers.engine.remoting.tls.TlsConfig` whose outgoing side is on, connections speak TLS.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from brokers.engine.common.constants import MAX_FRAME_SIZE
from brokers.engine.remoting.channel import ChannelContext, Handler, idle_watchdog
from brokers.engine.remoting.close_listeners import CloseListener, notify_close_listeners
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.errors import RemotingConnectError, RemotingError, RemotingTimeoutError
from brokers.engine.remoting.request_guard import RequestSigner
from brokers.engine.remoting.tls import TlsConfig
from brokers.engine.remoting.tls_connect import client_context, open_connection

log = logging.getLogger("brokers.engine.remoting")

CONNECT_TIMEOUT_S = 3.0  # RocketMQ connectTimeoutMillis
DEFAULT_TIMEOUT_S = 3.0  # RocketMQ mqClientApiTimeout


def split_addr(addr: str) -> tuple[str, int]:
    """Split ``host:port`` (or ``[v6]:port``) into its parts; ValueError when malformed."""
    host, sep, port = addr.strip().rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"address {addr!r} is not host:port")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port)


class RemotingClient:
    """Send requests to many peers; safe to use from any task of the loop it runs on."""

    def __init__(
        self,
        *,
        connect_timeout_s: float = CONNECT_TIMEOUT_S,
        max_frame_size: int = MAX_FRAME_SIZE,
        idle_close_s: float | None = None,
        name: str = "client",
        signer: RequestSigner | None = None,
        tls: TlsConfig | None = None,
    ) -> None:
        self.connect_timeout_s = connect_timeout_s
        self.signer = signer
        self.tls = tls
        if tls is not None:
            client_context(tls)  # a CA or key file that cannot be loaded fails here, not at the first request
        self.max_frame_size = max_frame_size
        self.idle_close_s = idle_close_s
        self.name = name
        self._processors: dict[int, Handler] = {}
        self._close_listeners: list[CloseListener] = []
        self._channels: dict[str, ChannelContext] = {}
        self._connecting: dict[str, asyncio.Future[ChannelContext]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._watchdog: asyncio.Task[None] | None = None
        self._closed = False

    def register_processor(self, code: int, handler: Handler) -> None:
        """Handle requests the server sends over our connections (e.g. NOTIFY_CONSUMER_IDS_CHANGED)."""
        self._processors[int(code)] = handler

    def add_close_listener(self, listener: CloseListener) -> None:
        self._close_listeners.append(listener)

    async def invoke(
        self, addr: str, request: RemotingCommand, timeout_s: float = DEFAULT_TIMEOUT_S
    ) -> RemotingCommand:
        """Send ``request`` to ``addr`` and return the response; ``timeout_s`` bounds connect and wait."""
        if self.signer is not None:
            self.signer.sign_request(request)
        ctx = self._channels.get(addr)
        if ctx is not None and not ctx.closed and not self._closed:  # connected: the whole timeout is left
            return await ctx.invoke(request, timeout_s)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        ctx = await self.get_channel(addr, timeout_s=min(self.connect_timeout_s, timeout_s))
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise RemotingTimeoutError(f"no time left for request code {request.code} to {addr}", addr, timeout_s)
        return await ctx.invoke(request, remaining)

    async def invoke_oneway(self, addr: str, request: RemotingCommand, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        """Send ``request`` flagged ONEWAY; returns once it is written."""
        if self.signer is not None:
            self.signer.sign_request(request)
        ctx = await self.get_channel(addr, timeout_s=min(self.connect_timeout_s, timeout_s))
        try:
            await asyncio.wait_for(ctx.invoke_oneway(request), timeout_s)
        except TimeoutError as exc:
            if isinstance(exc, RemotingError):
                raise
            raise RemotingTimeoutError(
                f"oneway request code {request.code} to {addr} not written within {timeout_s}s", addr, timeout_s
            ) from None

    async def get_channel(self, addr: str, timeout_s: float | None = None) -> ChannelContext:
        """Return the open connection to ``addr``, connecting when there is none."""
        if self._closed:
            raise RemotingConnectError("client is closed", addr)
        ctx = self._channels.get(addr)
        if ctx is not None and not ctx.closed:
            return ctx
        pending = self._connecting.get(addr)
        if pending is None:
            pending = asyncio.get_running_loop().create_future()
            self._connecting[addr] = pending
            try:
                ctx = await self._connect(addr, self.connect_timeout_s if timeout_s is None else timeout_s)
            except BaseException as exc:
                if not pending.done():
                    error = (
                        exc
                        if isinstance(exc, RemotingError)
                        else RemotingConnectError(f"connect to {addr} failed: {exc!r}", addr)
                    )
                    pending.set_exception(error)
                    pending.exception()  # mark retrieved: nobody else may be waiting
                raise
            finally:
                self._connecting.pop(addr, None)
            pending.set_result(ctx)
            return ctx
        return await asyncio.shield(pending)

    async def _connect(self, addr: str, timeout_s: float) -> ChannelContext:
        try:
            host, port = split_addr(addr)
        except ValueError as exc:
            raise RemotingConnectError(str(exc), addr) from None
        try:
            reader, writer = await open_connection(host, port, self.tls, timeout_s)
        except TimeoutError:
            raise RemotingConnectError(f"connect to {addr} timed out after {timeout_s}s", addr) from None
        except OSError as exc:
            raise RemotingConnectError(f"connect to {addr} failed: {exc}", addr) from None
        ctx = ChannelContext(
            reader,
            writer,
            lookup=self._processors.get,
            on_closed=self._on_channel_closed,
            max_frame_size=self.max_frame_size,
            name=self.name,
            dialed=True,
        )
        ctx.attributes["addr"] = addr
        self._channels[addr] = ctx
        self._spawn(ctx.run())
        if self.idle_close_s and self._watchdog is None:
            self._watchdog = asyncio.get_running_loop().create_task(
                idle_watchdog(lambda: list(self._channels.values()), self.idle_close_s)
            )
        log.debug("%s: connected", ctx)
        return ctx

    def _on_channel_closed(self, ctx: ChannelContext) -> None:
        addr = ctx.attributes.get("addr")
        if isinstance(addr, str) and self._channels.get(addr) is ctx:
            del self._channels[addr]
        if self._close_listeners:
            self._spawn(notify_close_listeners(list(self._close_listeners), ctx))

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close_channel(self, addr: str) -> None:
        ctx = self._channels.pop(addr, None)
        if ctx is not None:
            ctx.close()
            await ctx.wait_closed()

    @property
    def addresses(self) -> list[str]:
        """Addresses with an open connection."""
        return [addr for addr, ctx in self._channels.items() if not ctx.closed]

    async def close(self) -> None:
        """Close every connection; later calls raise RemotingConnectError."""
        self._closed = True
        if self._watchdog is not None:
            self._watchdog.cancel()
            await asyncio.gather(self._watchdog, return_exceptions=True)
            self._watchdog = None
        channels = list(self._channels.values())
        self._channels.clear()
        for ctx in channels:
            ctx.close()
        await asyncio.gather(*(ctx.cancel_tasks() for ctx in channels))
        await asyncio.gather(*(ctx.wait_closed() for ctx in channels))
        if self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
