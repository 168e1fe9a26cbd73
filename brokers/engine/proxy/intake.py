"""RequestIntake: how many calls' request messages the 5.x port reads at once, and for how long.

grpc holds a call's request bytes as they arrive. Before the handler asks for the message it holds at
most the call's HTTP/2 window (``STREAM_WINDOW`` in ``endpoint.py``); once the handler asks, grpc opens
the window to the whole message the length prefix announces, up to the port's request cap (2 x
maxMessageSize + 1 MiB). Had every call asked at once, as grpc's unary handlers do, a peer that
announces 4 MiB requests and stalls halfway would make the port hold megabytes per call: 200 such
connections took a broker from 55 to 872 MB.

So a call's request is asked for only with a read slot, and the slots are few: the budget
(``grpc_request_budget``) divided by the request cap. They come in two pools: calls of *established*
clients (a client id with a session, signed as that session's owner when the ACL is on) and calls of
*newcomers* (everything else: a new client's first calls, calls with no client id), a quarter of the
slots. Unsigned calls under the ACL are refused before their request is read at all (the handlers).

A read ends when its message is in, when ``read_timeout_s`` passes, or when a newer call of the same
pool takes its slot: a full pool gives the slot of its oldest read to the newcomer at once, so a
stalled read lasts only until the next call needs a slot and never makes anyone wait. A small
request, already within its window when the handler runs, is read at once; what a flood of stalled
requests can displace is a large request still arriving, which its client sends again. The call whose
read ended unfinished is answered RESOURCE_EXHAUSTED, and grpc frees what it held.

A call that is not an established client's and is refused (unsigned or badly signed under the ACL, a
malformed request) is answered after a hold (:class:`RefusalHold`) that grows with each refusal on the
same connection, as the remoting ports hold a connection's reading: a peer looping on requests it may not
make gets a handful answered, then one a second per connection, instead of as many as the port can answer.

Pure asyncio; the grpc context is only awaited (``context.read()``).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Any

from brokers.engine.remoting.channel import next_refusal_hold

__all__ = ["ReadRefused", "RefusalHold", "RequestIntake"]

READ_TIMEOUT_S = 10.0


class ReadRefused(Exception):
    """A call's request did not arrive in time or its slot went to a newer call."""


class _Pool:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._readers: OrderedDict[asyncio.Future[None], None] = OrderedDict()  # oldest first

    def __len__(self) -> int:
        return len(self._readers)

    def enter(self) -> asyncio.Future[None]:
        """A slot for a new read, the oldest read's if the pool is full (its future is resolved)."""
        if len(self._readers) >= self.capacity:
            oldest, _ = self._readers.popitem(last=False)
            if not oldest.done():
                oldest.set_result(None)
        displaced: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._readers[displaced] = None
        return displaced

    def leave(self, displaced: asyncio.Future[None]) -> None:
        self._readers.pop(displaced, None)


class RequestIntake:
    def __init__(self, *, slots: int, read_timeout_s: float = READ_TIMEOUT_S) -> None:
        if slots < 2:
            raise ValueError(f"the request intake needs at least 2 read slots, got {slots}")
        newcomers = max(1, slots // 4)
        self.read_timeout_s = read_timeout_s
        self._pools = {True: _Pool(slots - newcomers), False: _Pool(newcomers)}
        self.displaced = 0  # reads ended by a newer call: gantry_grpc_request_reads_ended_total
        self.timed_out = 0

    @classmethod
    def for_budget(cls, budget: int, max_request: int) -> RequestIntake:
        """As many slots as requests of ``max_request`` bytes fit in ``budget`` (2 at least)."""
        return cls(slots=max(2, budget // max_request))

    @property
    def capacity(self) -> tuple[int, int]:
        """(established, newcomer) slots."""
        return self._pools[True].capacity, self._pools[False].capacity

    def reading(self, established: bool) -> int:
        return len(self._pools[established])

    async def read(self, context: Any, established: bool) -> Any:
        """The call's request message (or grpc's EOF), read holding a slot of the caller's pool."""
        pool = self._pools[established]
        displaced = pool.enter()
        read = asyncio.ensure_future(context.read())
        try:
            done, _ = await asyncio.wait((read, displaced), timeout=self.read_timeout_s, return_when="FIRST_COMPLETED")
            if read in done:
                return read.result()
            if displaced in done:
                self.displaced += 1
                raise ReadRefused("the request was still arriving when a newer call needed its read slot")
            self.timed_out += 1
            raise ReadRefused(f"the request did not arrive within {self.read_timeout_s:.0f} s")
        finally:
            pool.leave(displaced)
            if not read.done():
                read.cancel()


class RefusalHold:
    """How long to hold a refused call's answer, per connection (grpc's ``context.peer()``): nothing for its
    first refusal, then the remoting ports' schedule (``next_refusal_hold``: 10 ms doubling to 1 s). A connection with no refusal for ``forget_s`` starts over; ``max_peers`` connections are
    remembered, the least recently refused forgotten first."""

    def __init__(self, *, forget_s: float = 10.0, max_peers: int = 4096) -> None:
        self.forget_s = forget_s
        self.max_peers = max_peers
        self._peers: OrderedDict[str, tuple[float, float]] = OrderedDict()  # peer -> (hold, last refusal)
        self.held = 0  # refusals answered after a hold

    def next(self, peer: str, now: float) -> float:
        """The hold for a refusal on ``peer`` now (and the next one's grows)."""
        hold, last = self._peers.pop(peer, (0.0, now))
        if now - last > self.forget_s:
            hold = 0.0
        self._peers[peer] = (next_refusal_hold(hold), now)
        while len(self._peers) > self.max_peers:
            self._peers.popitem(last=False)
        if hold:
            self.held += 1
        return hold

    async def wait(self, peer: str) -> None:
        hold = self.next(peer, asyncio.get_running_loop().time())
        if hold:
            await asyncio.sleep(hold)
