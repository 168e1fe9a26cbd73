"""RemotingServer: an asyncio TCP server speaking the RocketMQ remoting protocol.

Handlers are registered per request code and receive the connection's
:class:`~brokers.engine.remoting.channel.ChannelContext` with the request.  A handler returns the
response, or None to answer later with ``ctx.write_response`` (long polling) or not at all
(oneway requests never get a reply).  A handler exception is answered SYSTEM_ERROR with the
exception text as remark; a code without a handler (and no default handler) is answered
REQUEST_CODE_NOT_SUPPORTED.  Connections idle (no read, no write) for ``idle_close_s`` are closed;
close listeners fire whenever a connection closes, for whatever reason, once a request of it got
through (one that never did ran no handler, so it left nothing to clean up). An optional
:class:`~brokers.engine.remoting.request_guard.RequestGuard` (the ACL) sees every request before
its handler: a refused request is answered NO_PERMISSION and runs nothing. With a
:class:`~brokers.engine.remoting.tls.TlsConfig` the port serves TLS per its mode (``tls_listener.py``).

Every connection is held to the server's :class:`~brokers.engine.remoting.limits.ConnectionLimits`
(defaults when none are given). At the total cap, or at the per-address cap (which counts only
connections that have not authenticated), a new connection makes room: the oldest connection that
has not authenticated (of that address, for the per-address cap) makes way, idle ones before ones
in the middle of a frame; only when every connection has authenticated is the new one aborted, as
it is accepted, before anything is read from it (with TLS: once its handshake is done; connections
still in their handshake are capped by the TLS listener). At the total cap the one making way is
closed. At the per-address cap it is *set aside* instead when it holds no bytes of the budget: not
read any more, not counted against its address, closed at its first-request deadline (or first at
the total cap). A peer that reopens every socket the server closes, at once, would otherwise make
the server accept and close sockets as fast as it can open them; this way its sockets stay open,
unread, until the deadline, and it gets about one new connection per socket and deadline. A
connection that has not authenticated within ``first_frame_deadline_s`` is closed by the watchdog,
and the bytes of frames being received are held to the port's
:class:`~brokers.engine.remoting.budget.BufferBudget`. A port whose clients speak first has the
kernel hold silent connections back (``TCP_DEFER_ACCEPT``, ``tls_listener.defer_accept``).
"""

from __future__ import annotations

import asyncio
import itertools
import logging

from brokers.engine import event_loop, speedups
from brokers.engine.common.constants import MAX_FRAME_SIZE
from brokers.engine.remoting.budget import BufferBudget
from brokers.engine.remoting.channel import ChannelContext, Handler, format_peer, idle_watchdog
from brokers.engine.remoting.close_listeners import CloseListener, notify_close_listeners
from brokers.engine.remoting.request_guard import RequestGuard
from brokers.engine.remoting.limits import DEFAULT_LIMITS, ConnectionLimits, limit_log
from brokers.engine.remoting.tls import TlsConfig
from brokers.engine.remoting.tls_listener import TlsListener, defer_accept, start_server

__all__ = ["ChannelContext", "CloseListener", "Handler", "RemotingServer"]

log = logging.getLogger("brokers.engine.remoting")

IDLE_CLOSE_S = 120.0  # RocketMQ serverChannelMaxIdleTimeSeconds
SHUTDOWN_GRACE_S = 1.0  # how long stop() lets running handlers finish before cancelling them
# At a connection cap, how many of the oldest unauthenticated connections (and addresses) are looked at
# for an idle one to close: a bounded cost per new connection whatever the number held.
_EVICTION_SCAN = 64


class RemotingServer:
    """Listen on ``host:port`` (port 0 = an ephemeral port, read back from ``.port``)."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        max_frame_size: int = MAX_FRAME_SIZE,
        name: str = "remoting",
        idle_close_s: float | None = IDLE_CLOSE_S,
        guard: RequestGuard | None = None,
        limits: ConnectionLimits = DEFAULT_LIMITS,
        tls: TlsConfig | None = None,
    ) -> None:
        self.limits = limits
        self.host = host
        self.tls = tls
        self.guard = guard
        self.name = name
        self.max_frame_size = max_frame_size
        self.idle_close_s = idle_close_s
        self._requested_port = port
        self._port: int | None = None
        self._processors: dict[int, Handler] = {}
        self._body_limits: dict[int, tuple[int, str]] = {}  # code -> (max body bytes, its setting): before the body
        self._default: Handler | None = None
        self._close_listeners: list[CloseListener] = []
        self._channels: dict[int, ChannelContext] = {}
        self._unauthenticated: dict[
            str, dict[int, ChannelContext]
        ] = {}  # remote IP -> not yet authenticated, oldest first
        self._set_aside: dict[int, ChannelContext] = {}  # made way at an address's cap, unread, oldest first
        self.budget = BufferBudget(limits, name)
        self._server: asyncio.base_events.Server | TlsListener | None = None
        self._background: set[asyncio.Task[None]] = set()
        self._watchdog: asyncio.Task[None] | None = None

    # -- configuration -------------------------------------------------------------------------

    def register_processor(self, code: int, handler: Handler) -> None:
        self._processors[int(code)] = handler

    def limit_body(self, code: int, max_bytes: int, setting: str) -> None:
        """Refuse a request of ``code`` whose body is over ``max_bytes`` from its header alone: the connection
        is answered and closed without the body being read (a peer sending megabytes it knows will be refused
        costs the server one header, not the megabytes)."""
        self._body_limits[int(code)] = (max_bytes, setting)

    def processor_for(self, code: int) -> Handler | None:
        """The handler registered for ``code`` (None: the default one answers it)."""
        return self._processors.get(int(code))

    def register_default_processor(self, handler: Handler) -> None:
        """Handle every code without its own processor (otherwise REQUEST_CODE_NOT_SUPPORTED)."""
        self._default = handler

    def add_close_listener(self, listener: CloseListener) -> None:
        """Call ``listener(ctx)`` (sync or async) after a connection closed."""
        self._close_listeners.append(listener)

    def _lookup(self, code: int) -> Handler | None:
        return self._processors.get(code, self._default)

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        if self._server is not None:
            raise RuntimeError(f"{self.name} server already started")
        self._server = await start_server(self._on_connect, self.host, self._requested_port, self.tls, name=self.name)
        self._port = self._server.sockets[0].getsockname()[1]
        for sock in self._server.sockets:
            defer_accept(sock, self.limits.defer_accept_s, name=self.name)
        self._watchdog = asyncio.get_running_loop().create_task(
            idle_watchdog(
                lambda: list(self._channels.values()),
                self.idle_close_s,
                self.limits.frame_receive_deadline_s,
                first_frame_deadline_s=self.limits.first_frame_deadline_s,
                budget=self.budget,
            )
        )
        log.info(
            "%s remoting server listening on %s:%s (codecs: %s; event loop: %s)",
            self.name,
            self.host,
            self._port,
            "compiled" if speedups.active() else "pure Python",
            event_loop.loop_name(asyncio.get_running_loop()),
        )

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError(f"{self.name} server not started")
        return self._port

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def channels(self) -> list[ChannelContext]:
        """The open connections."""
        return [ctx for ctx in self._channels.values() if not ctx.closed]

    async def stop(self) -> None:
        """Stop listening, close every connection, and wait for close listeners to run."""
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        if self._watchdog is not None:
            self._watchdog.cancel()
            await asyncio.gather(self._watchdog, return_exceptions=True)
            self._watchdog = None
        channels = list(self._channels.values())
        for ctx in channels:
            ctx.close()
        await asyncio.gather(*(ctx.cancel_tasks(SHUTDOWN_GRACE_S) for ctx in channels))
        await asyncio.gather(*(ctx.wait_closed() for ctx in channels))
        if self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)
        try:
            await asyncio.wait_for(server.wait_closed(), timeout=SHUTDOWN_GRACE_S)
        except TimeoutError:
            pass
        log.info("%s remoting server on port %s stopped", self.name, self._port)

    # -- connections ---------------------------------------------------------------------------

    async def _on_connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = format_peer(writer.get_extra_info("peername"))
        if not self._make_room(_host(peer), peer):
            writer.transport.abort()
            return
        ctx = ChannelContext(
            reader,
            writer,
            lookup=self._lookup,
            on_closed=self._on_channel_closed,
            max_frame_size=self.max_frame_size,
            name=self.name,
            guard=self.guard,
            limits=self.limits,
            budget=self.budget,
            on_established=self._leave_unauthenticated,
            body_limits=self._body_limits,
        )
        if self._server is None:  # stopping
            ctx.close()
            return
        self._channels[ctx.id] = ctx
        self._unauthenticated.setdefault(_host(ctx.remote_addr), {})[ctx.id] = ctx
        log.debug("%s: connection opened", ctx)
        await ctx.run()

    @property
    def unauthenticated_count(self) -> int:
        return sum(len(v) for v in self._unauthenticated.values())

    def _make_room(self, host: str, peer: str) -> bool:
        """Whether a new connection from ``peer`` may come in, closing an older unauthenticated one to
        make room at a cap; False (it is refused) only when every connection has authenticated."""
        limits = self.limits
        if len(self._channels) >= limits.max_connections:
            victim = next(iter(self._set_aside.values()), None) or self._oldest_unauthenticated(None)
            if victim is None:
                limit_log.refused(
                    "connections",
                    peer,
                    "%s: %d connections open, every one authenticated; %s refused",
                    self.name,
                    len(self._channels),
                    peer,
                )
                return False
            self._evict(victim, "connections", f"{len(self._channels)} connections open")
        mine = self._unauthenticated.get(host)
        if mine is not None and len(mine) >= limits.max_connections_per_address:
            victim = self._oldest_unauthenticated(host)
            if victim is not None:
                why = f"{len(mine)} unauthenticated connections from {host}"
                if self.budget.held(victim) or victim.queued_bytes:
                    self._evict(victim, "connections-per-address", why)
                else:
                    self._put_aside(victim, why)
        return True

    def _oldest_unauthenticated(self, host: str | None) -> ChannelContext | None:
        """The oldest connection not yet authenticated (of ``host``, or of any address), idle ones first.

        The pools keep connections in the order they opened, so this looks at the oldest few only
        (``_EVICTION_SCAN``): the first idle one among them, else the oldest. A flood of new sockets
        costs the server O(1) per connection here, not a pass over every connection it holds."""
        if host is not None:
            pools = [self._unauthenticated.get(host, {})]
        else:
            pools = list(itertools.islice(self._unauthenticated.values(), _EVICTION_SCAN))
        oldest: ChannelContext | None = None
        for pool in pools:
            for seen, ctx in enumerate(pool.values()):
                if ctx.closed:
                    continue
                if ctx.frame_started_at is None:
                    return ctx
                if oldest is None or ctx.opened_at < oldest.opened_at:
                    oldest = ctx
                if seen >= _EVICTION_SCAN:
                    break
        return oldest

    def _evict(self, victim: ChannelContext, limit: str, why: str) -> None:
        limit_log.refused(
            limit,
            victim.remote_addr,
            "%s: %s; the oldest unauthenticated one, %s, closed to make room",
            self.name,
            why,
            victim,
        )
        self._forget(victim)
        victim.abort()

    def _put_aside(self, victim: ChannelContext, why: str) -> None:
        limit_log.refused(
            "connections-per-address",
            victim.remote_addr,
            "%s: %s; the oldest unauthenticated one, %s, set aside unread until its first-request deadline",
            self.name,
            why,
            victim,
        )
        self._leave_pool(victim)  # out of its address's count
        victim.stop_reading()
        self._set_aside[victim.id] = victim

    def _leave_unauthenticated(self, ctx: ChannelContext) -> None:
        """Out of its address's pool and of the set-aside connections (established, or closed)."""
        self._leave_pool(ctx)
        self._set_aside.pop(ctx.id, None)

    def _leave_pool(self, ctx: ChannelContext) -> None:
        pool = self._unauthenticated.get(_host(ctx.remote_addr))
        if pool is not None and pool.pop(ctx.id, None) is not None and not pool:
            del self._unauthenticated[_host(ctx.remote_addr)]

    def _forget(self, ctx: ChannelContext) -> bool:
        """Stop counting ``ctx``; False when it was not counted (any more)."""
        self._leave_unauthenticated(ctx)
        return self._channels.pop(ctx.id, None) is not None

    def _on_channel_closed(self, ctx: ChannelContext) -> None:
        self._forget(ctx)
        log.debug("%s: connection closed", ctx)
        if self._close_listeners and ctx.established:  # one that never got a request through left no state
            task = asyncio.get_running_loop().create_task(notify_close_listeners(list(self._close_listeners), ctx))
            self._background.add(task)
            task.add_done_callback(self._background.discard)


def _host(addr: str) -> str:
    """The IP of an ``ip:port`` peer address."""
    return addr.rsplit(":", 1)[0]
