"""BufferBudget: the bytes a server holds for its peers' frames, all its connections together.

A connection reserves a frame's declared size before reading its body (``FrameReader``) and
releases it once the frame is read, so what peers can make a server buffer is what they reserved,
and the budget bounds it:

- ``max_unauthenticated_bytes`` for connections that have not authenticated (sent a request
  their port's guard let through; with no guard, any decoded request);
- ``max_buffered_bytes`` for all connections. Responses queued for peers that do not read count
  here too: the watchdog calls :meth:`BufferBudget.check_queued` every period.

When a frame does not fit, the connection holding the most is closed to make room if it holds
more than the new frame needs (those not authenticated go first, and an authenticated connection's
frame always displaces theirs); otherwise the new frame *waits* for room, its bytes left unread in
the kernel, until a holder finishes or closes (first come, first served among the frames that fit)
or the connection's own deadline (first request, frame receive) closes it. A frame larger than its
whole budget can never fit: its connection is closed at once (a fatal
:class:`~brokers.engine.remoting.errors.RemotingProtocolError`).

Waiting rather than closing is what keeps a flood cheap: peers that stall large frames by the
hundred are not read, closed and reconnected in a loop; they sit unread until their deadline, while
a client with a small frame displaces them at once. Every close is logged by the rate-limited
:data:`~brokers.engine.remoting.limits.limit_log` as limit ``buffer-budget``, every wait as
``buffer-budget-wait``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Protocol

from brokers.engine.remoting.errors import RemotingProtocolError
from brokers.engine.remoting.limits import ConnectionLimits, limit_log

__all__ = ["BufferBudget"]


class Holder(Protocol):
    """What the budget uses of a connection (``channel.ChannelContext``, which imports this module)."""

    established: bool
    remote_addr: str
    closed: bool

    @property
    def queued_bytes(self) -> int: ...

    def abort(self) -> None: ...


class BufferBudget:
    """Reservations of one server's connections against its two limits, and the frames waiting for room."""

    def __init__(self, limits: ConnectionLimits, name: str = "remoting") -> None:
        self.max_total = limits.max_buffered_bytes
        self.max_unauthenticated = limits.max_unauthenticated_bytes
        self.name = name
        self._held: dict[Holder, int] = {}
        self._waiting: dict[Holder, tuple[int, asyncio.Future[None]]] = {}  # in arrival order
        # The smallest waiting frame, and whether any waiting connection has authenticated: every frame's
        # release asks whether a waiter could fit, and this answers it without a pass over the waiters.
        self._smallest_waiting = 0
        self._established_waiting = False
        self.total = 0  # bytes reserved by every connection
        self.unauthenticated = 0  # the part of it reserved by connections that have not authenticated
        self.closed_for_budget = 0
        self.waited = 0  # frames that had to wait for room

    def held(self, ctx: Holder) -> int:
        return self._held.get(ctx, 0)

    @property
    def waiting(self) -> int:
        """Frames waiting for room now."""
        return len(self._waiting)

    def _fits(self, ctx: Holder, size: int) -> bool:
        if self.total + size > self.max_total:
            return False
        return ctx.established or self.unauthenticated + size <= self.max_unauthenticated

    def reserve(self, ctx: Holder, size: int) -> asyncio.Future[None] | None:
        """Reserve ``size`` bytes for ``ctx``'s next frame: None when reserved, or a future to await
        that is done once they are (closing larger holders first when that makes room; see the module
        docstring). RemotingProtocolError (fatal) when the frame can never fit; the future fails the
        same way if ``ctx`` closes while it waits."""
        cap = self.max_total if ctx.established else min(self.max_total, self.max_unauthenticated)
        if size > cap:
            which = "receive" if ctx.established else "unauthenticated receive"
            self.closed_for_budget += 1
            limit_log.refused(
                "buffer-budget",
                ctx.remote_addr,
                "%s: a %d-byte frame is larger than the whole %s budget (%d bytes); connection closed",
                ctx,
                size,
                which,
                cap,
            )
            raise RemotingProtocolError(f"a {size}-byte frame is larger than the server's {which} budget", fatal=True)
        closed = False
        while not self._fits(ctx, size):
            victim = self._victim(ctx, size)
            if victim is None:
                return self._wait(ctx, size)
            self.closed_for_budget += 1
            limit_log.refused(
                "buffer-budget",
                victim.remote_addr,
                "%s: holds %d bytes, the most, when a %d-byte frame of %s needs room; connection closed",
                victim,
                self._held.get(victim, 0),
                size,
                ctx,
            )
            self._drop(victim)
            victim.abort()
            closed = True
        self._take(ctx, size)
        if closed:
            self._grant()  # what the closes freed beyond this frame's need
        return None

    def _victim(self, ctx: Holder, size: int) -> Holder | None:
        """The holder to close for ``ctx``'s frame, or None: the frame waits."""
        unauth_over = not ctx.established and self.unauthenticated + size > self.max_unauthenticated
        tier = [c for c in self._held if not c.established and c is not ctx]
        if not tier and not unauth_over and ctx.established:
            tier = [c for c in self._held if c is not ctx]
        if not tier:
            return None
        victim = max(tier, key=lambda c: self._held[c])
        if self._held[victim] > size or (ctx.established and not victim.established):
            return victim
        return None

    def _wait(self, ctx: Holder, size: int) -> asyncio.Future[None]:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting[ctx] = (size, future)
        self._waiters_changed()
        self.waited += 1
        limit_log.refused(
            "buffer-budget-wait",
            ctx.remote_addr,
            "%s: a %d-byte frame waits for room (%d of %d bytes held, %d of %d unauthenticated); not read until then",
            ctx,
            size,
            self.total,
            self.max_total,
            self.unauthenticated,
            self.max_unauthenticated,
        )
        return future

    def _take(self, ctx: Holder, size: int) -> None:
        self._held[ctx] = self._held.get(ctx, 0) + size
        self.total += size
        if not ctx.established:
            self.unauthenticated += size

    def _drop(self, ctx: Holder) -> None:
        size = self._held.pop(ctx, 0)
        if size:
            self.total -= size
            if not ctx.established:
                self.unauthenticated -= size

    def _grant(self) -> None:
        """Reserve for the waiting frames that fit now, in arrival order (a larger one does not hold up
        a smaller one that fits)."""
        if not self._waiting or self.max_total - self.total < self._smallest_waiting:
            return
        if not self._established_waiting and self.max_unauthenticated - self.unauthenticated < self._smallest_waiting:
            return
        for ctx, (size, future) in list(self._waiting.items()):
            if future.done() or ctx.closed:
                del self._waiting[ctx]
            elif self._fits(ctx, size):
                del self._waiting[ctx]
                self._take(ctx, size)
                future.set_result(None)
        self._waiters_changed()

    def _waiters_changed(self) -> None:
        self._smallest_waiting = min((size for size, _ in self._waiting.values()), default=0)
        self._established_waiting = any(c.established for c in self._waiting)

    def release(self, ctx: Holder) -> None:
        """Give back what ``ctx`` reserved (its frame is read, or it closed) and stop its wait if any."""
        self._drop(ctx)
        self.forget(ctx)
        self._grant()

    def forget(self, ctx: Holder) -> None:
        """``ctx`` closed: a frame of it still waiting fails (fatal RemotingProtocolError)."""
        waiting = self._waiting.pop(ctx, None)
        if waiting is None:
            return
        self._waiters_changed()
        if not waiting[1].done():
            waiting[1].set_exception(RemotingProtocolError("the connection closed while its frame waited", fatal=True))

    def authenticated(self, ctx: Holder) -> None:
        """``ctx`` has just authenticated: what it holds leaves the unauthenticated part (call before
        setting ``ctx.established``)."""
        self.unauthenticated -= self._held.get(ctx, 0)
        self._grant()

    def check_queued(self, channels: Iterable[Holder]) -> None:
        """Close the connections with the most unread responses (unauthenticated first) while reserved
        plus queued bytes are over ``max_buffered_bytes``."""
        queued = {ctx: ctx.queued_bytes for ctx in channels if not ctx.closed}
        excess = self.total + sum(queued.values()) - self.max_total
        while excess > 0 and queued:
            victim = max(queued, key=lambda c: (not c.established, queued[c]))
            if queued[victim] <= 0:
                break
            limit_log.refused(
                "buffer-budget",
                victim.remote_addr,
                "%s: %d bytes of responses unread when the budget of %d bytes is spent; connection closed",
                victim,
                queued[victim],
                self.max_total,
            )
            excess -= queued.pop(victim)
            self.closed_for_budget += 1
            victim.abort()
