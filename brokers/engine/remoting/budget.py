"""BufferBudget: the bytes a server holds for its peers' frames, all its connections together.

A connection reserves a frame's declared size before reading its body (``FrameReader``) and
releases it once the frame is read, so what peers can make a server buffer is what they reserved,
and the budget bounds it:

- ``max_unauthenticated_bytes`` for connections that have not authenticated (sent a request
  their port's guard let through; with no guard, any decoded request): a reservation past it
  closes the unauthenticated connections holding the most first;
- ``max_buffered_bytes`` for all connections: past it, unauthenticated holders go first, then
  authenticated ones, largest first. Responses queued for peers that do not read count here too:
  the watchdog calls :meth:`BufferBudget.check_queued` every period.

When the reserving connection itself holds the most, it is the one closed (its read loop gets a
fatal :class:`~brokers.engine.remoting.errors.RemotingProtocolError`). Every close is logged by the
rate-limited :data:`~brokers.engine.remoting.limits.limit_log` as limit ``buffer-budget``.
"""

from __future__ import annotations

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
    """Reservations of one server's connections against its two limits."""

    def __init__(self, limits: ConnectionLimits, name: str = "remoting") -> None:
        self.max_total = limits.max_buffered_bytes
        self.max_unauthenticated = limits.max_unauthenticated_bytes
        self.name = name
        self._held: dict[Holder, int] = {}
        self.total = 0  # bytes reserved by every connection
        self.unauthenticated = 0  # the part of it reserved by connections that have not authenticated
        self.closed_for_budget = 0

    def held(self, ctx: Holder) -> int:
        return self._held.get(ctx, 0)

    def reserve(self, ctx: Holder, size: int) -> None:
        """Reserve ``size`` bytes for ``ctx``'s next frame, closing the largest holders when it does not
        fit; RemotingProtocolError (fatal) when ``ctx`` is the one to go."""
        while True:
            unauth_over = not ctx.established and self.unauthenticated + size > self.max_unauthenticated
            total_over = self.total + size > self.max_total
            if not unauth_over and not total_over:
                break
            tier = [c for c in self._held if not c.established]
            if not ctx.established:
                tier.append(ctx)
            if not tier and not unauth_over:
                tier = [c for c in self._held if c.established] + ([ctx] if ctx.established else [])
            victim = max(tier, key=lambda c: self._held.get(c, 0) + (size if c is ctx else 0))
            which = "unauthenticated" if unauth_over else "all"
            limit = self.max_unauthenticated if unauth_over else self.max_total
            self.closed_for_budget += 1
            if victim is ctx:
                limit_log.refused(
                    "buffer-budget",
                    ctx.remote_addr,
                    "%s: a %d-byte frame does not fit the %s budget (%d of %d bytes held); connection closed",
                    ctx,
                    size,
                    which,
                    self.unauthenticated if unauth_over else self.total,
                    limit,
                )
                raise RemotingProtocolError(
                    f"the server's {which} receive budget of {limit} bytes is spent", fatal=True
                )
            limit_log.refused(
                "buffer-budget",
                victim.remote_addr,
                "%s: holds %d bytes, the most, when the %s budget (%d bytes) is spent; connection closed",
                victim,
                self._held.get(victim, 0),
                which,
                limit,
            )
            self.release(victim)
            victim.abort()
        self._held[ctx] = self._held.get(ctx, 0) + size
        self.total += size
        if not ctx.established:
            self.unauthenticated += size

    def release(self, ctx: Holder) -> None:
        """Give back what ``ctx`` reserved (its frame is read, or it closed)."""
        size = self._held.pop(ctx, 0)
        if size:
            self.total -= size
            if not ctx.established:
                self.unauthenticated -= size

    def authenticated(self, ctx: Holder) -> None:
        """``ctx`` has just authenticated: what it holds leaves the unauthenticated part (call before
        setting ``ctx.established``)."""
        self.unauthenticated -= self._held.get(ctx, 0)

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
