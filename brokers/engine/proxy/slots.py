"""Receive slots: how many receives of the gRPC endpoint work at once, shared fairly between peers.

A receive holds a slot through its set-up (the pop before it parks) and through the delivery of what it
found; the other receives wait without working. Waiting receives are granted in turn by peer (the remote
host): one per peer with a receive waiting, round after round, so a peer with 2,000 polls queued gets
a slot as often as a peer with one, not 2,000 times first. A held slot gives itself back after its hold
time, so a call stalled on a client that does not read cannot keep it.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque


class FairSlots:
    """``capacity`` slots; waiters are granted one per peer in rotation (peers in the order they first waited)."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        self.capacity = capacity
        self.in_use = 0
        self._waiting: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()

    @property
    def waiting(self) -> int:
        return sum(len(queue) for queue in self._waiting.values())

    async def acquire(self, peer: str) -> None:
        if self.in_use < self.capacity and not self._waiting:
            self.in_use += 1
            return
        granted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        queue = self._waiting.get(peer)
        if queue is None:
            queue = self._waiting[peer] = deque()
        queue.append(granted)
        try:
            await granted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():
                self.release()  # granted as it was cancelled: pass the slot on
            else:
                self._forget(peer, granted)
            raise

    def release(self) -> None:
        """Give a slot back: to the next peer's oldest waiter, or to the pool."""
        while self._waiting:
            peer, queue = next(iter(self._waiting.items()))
            granted = queue.popleft()
            if queue:
                self._waiting.move_to_end(peer)  # its next waiter comes after every other peer's
            else:
                del self._waiting[peer]
            if not granted.done():
                granted.set_result(None)  # the slot moves to it: in_use is unchanged
                return
        self.in_use -= 1

    def _forget(self, peer: str, granted: asyncio.Future[None]) -> None:
        queue = self._waiting.get(peer)
        if queue is None:
            return
        try:
            queue.remove(granted)
        except ValueError:
            return
        if not queue:
            del self._waiting[peer]


class Slot:
    """One receive's hold on a slot of ``slots``: taken by :meth:`take`, given back by :meth:`give_back` or
    by itself ``hold_s`` after it was (last) taken, whichever comes first."""

    __slots__ = ("_slots", "_peer", "_timer")

    def __init__(self, slots: FairSlots, peer: str) -> None:
        self._slots = slots
        self._peer = peer
        self._timer: asyncio.TimerHandle | None = None

    @property
    def held(self) -> bool:
        return self._timer is not None

    async def take(self, hold_s: float) -> None:
        """Take a slot (waiting for one) unless this holds one already; either way hold it ``hold_s`` from now."""
        if self._timer is None:
            await self._slots.acquire(self._peer)
        else:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(hold_s, self.give_back)

    def give_back(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
            self._slots.release()
