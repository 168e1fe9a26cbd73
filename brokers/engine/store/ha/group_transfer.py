"""GroupTransfer: the synchronous double write's wait list (RocketMQ's ``GroupTransferService``).

A SYNC_MASTER put waits until some slave has acknowledged the commit log up to the end of its
record. Waits are group-committed like the flush (``flush.py``): every waiter sits in one heap
ordered by the offset it needs, and each slave report resolves, in one pass, every waiter it
covers; a waiter not covered within the timeout gets False (FLUSH_SLAVE_TIMEOUT). Everything runs
on the broker's event loop (acks arrive on the HA connections served by that loop), so there is
no lock; ``ack`` from another thread would be a bug.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools


class GroupTransfer:
    def __init__(self) -> None:
        self._waiters: list[tuple[int, int, asyncio.Future[bool], asyncio.TimerHandle | None]] = []
        self._seq = itertools.count()
        self.acked = 0  # the highest offset any slave has acknowledged (push2SlaveMaxOffset)
        self.requests_completed = 0
        self.requests_timed_out = 0

    @property
    def waiting(self) -> int:
        return sum(1 for _o, _s, fut, _t in self._waiters if not fut.done())

    def register(self, offset: int, timeout_s: float) -> asyncio.Future[bool]:
        """A future that becomes True once a slave has acknowledged ``offset``, False after
        ``timeout_s``. Registering is the wait's start: a caller can start other waits (the
        flush) and await them all, so they run at once rather than one after the other."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[bool] = loop.create_future()
        if offset <= self.acked:
            self.requests_completed += 1
            fut.set_result(True)
            return fut
        timer = loop.call_later(timeout_s, self._expire, fut)
        heapq.heappush(self._waiters, (offset, next(self._seq), fut, timer))
        return fut

    async def wait(self, offset: int, timeout_s: float) -> bool:
        """True once a slave has acknowledged ``offset``; False after ``timeout_s``."""
        return await self.register(offset, timeout_s)

    def _expire(self, fut: asyncio.Future[bool]) -> None:
        if not fut.done():
            self.requests_timed_out += 1
            fut.set_result(False)

    def ack(self, offset: int) -> None:
        """A slave holds the log up to ``offset``: release every waiter it covers, lowest
        offset first, in one pass (one wake-up per report however many puts it covers)."""
        if offset <= self.acked:
            return
        self.acked = offset
        waiters = self._waiters
        while waiters and waiters[0][0] <= offset:
            _offset, _seq, fut, timer = heapq.heappop(waiters)
            if timer is not None:
                timer.cancel()
            if not fut.done():
                self.requests_completed += 1
                fut.set_result(True)

    def fail_all(self) -> None:
        """Answer every waiter False (the master stops or stops being a master)."""
        waiters, self._waiters = self._waiters, []
        for _offset, _seq, fut, timer in waiters:
            if timer is not None:
                timer.cancel()
            if not fut.done():
                fut.set_result(False)
