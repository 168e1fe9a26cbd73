"""RequestIntake: how many calls' request messages the 5.x port reads at once, and for how long.

grpc holds a call's request bytes as they arrive. Before the handler asks for the message it holds at
most the call's HTTP/2 window (``STREAM_WINDOW`` in ``endpoint.py``); once the handler asks, grpc opens
the window to the whole message the length prefix announces, up to the port's request cap (2 x
maxMessageSize + 1 MiB). Had every call asked at once, as grpc's unary handlers do, a peer that
announces 4 MiB requests and stalls halfway would make the port hold megabytes per call: 200 such
connections took a broker from 55 to 872 MB.

So a call's request is asked for only with a read slot, and the slots are few: the budget
(``grpc_request_budget``) divided by the request cap. They come in three pools: calls of *established*
clients (a client id with a session, signed as that session's owner when the ACL is on), calls of
*newcomers* (everything else: a new client's first calls, calls with no client id), a quarter of the
slots, and the messages of request *streams* (Telemetry), another quarter. Unsigned calls under the ACL
are refused before their request is read at all (the handlers).

A call's read ends when its message is in, when ``read_timeout_s`` passes, or when a newer call of the
same pool takes its slot: a full pool gives the slot of its oldest read to the newcomer at once, so a
stalled read lasts only until the next call needs a slot and never makes anyone wait. A small
request, already within its window when the handler runs, is read at once; what a flood of stalled
requests can displace is a large request still arriving, which its client sends again. The call whose
read ended unfinished is answered RESOURCE_EXHAUSTED, and grpc frees what it held.

A Telemetry stream is read the same way, message by message, but a stream waits for its messages:
after the first (the client's settings, sent as the stream opens) the next comes when the client sends
its settings again, every 5 minutes with Apache's clients. A read that waits for it would let grpc take
in a whole announced message at any moment, and grpc cannot take a read back, so a stream is not read
between its messages. Its next read is asked for ``period_s - lead_s`` after its last message, holding
a permit of the streams' pool: the client's next settings are then in the stream's window already, or
due within ``lead_s``. A later read waits for a permit, in turn. A read holds its permit until its
message is in, or ``period_s + grace_s`` (the client sent nothing: the stream ends). Between reads a
stream holds at most its window (two, when its next message came on its settings' heels: grpc opens the
window further as it reads the settings); the few that read hold a message each.

A stream's first read cannot wait long: Java's client gives up starting if its settings are not
answered within seconds. It takes a free permit, or the first one given back (ahead of later reads in
turn), or the permit of the newest stream's first read once that has waited ``silent_s`` for its
message, whichever comes first; that stream ends, and its client opens another. Clients send their
settings as they open a stream, so a first read that has waited a second is a stream that is silent:
Apache's Python client opens one silent when it rebuilds a broken stream, and sends its settings at its
next 5-minute tick. The newest gives way, so the older ones keep their permits until their tick, and a
pool full of rebuilt streams empties a few per 5 minutes instead of churning. When the permits are all
held by later reads, a first read takes the newest one's only once it is overdue (``2 x lead_s``: the
client's settings were due by then), so new streams do not end established ones that are being read.

A call that is not an established client's and is refused (unsigned or badly signed under the ACL, a
malformed request) is answered after a hold (:class:`RefusalHold`) that grows with each refusal on the
same connection, as the remoting ports hold a connection's reading: a peer looping on requests it may not
make gets a handful answered, then one a second per connection, instead of as many as the port can answer.

Pure asyncio; the grpc context is only awaited (``context.read()``).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from typing import Any

from brokers.engine.remoting.channel import next_refusal_hold

__all__ = ["ReadRefused", "RefusalHold", "RequestIntake"]

READ_TIMEOUT_S = 10.0
SETTINGS_PERIOD_S = 300.0  # Apache's 5.x clients (Java, Python) send their settings again every 5 minutes
STREAM_READ_LEAD_S = 5.0  # a stream's next read is asked for this long before its client's settings are due
STREAM_READ_GRACE_S = 30.0  # and ends the stream if nothing came this long after they were due
STREAM_SILENT_S = 1.0  # a stream read waiting this long for its message may give its permit to a new stream


class ReadRefused(Exception):
    """A call's request did not arrive in time or its slot went to a newer call."""


class _Pool:
    """Read slots: a read holds one, found by its future, resolved if the slot is taken from it."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        # read -> (when it took its slot, whether a stream's first), oldest first
        self._readers: OrderedDict[asyncio.Future[None], tuple[float, bool]] = OrderedDict()
        # reads in turn for a slot: streams' first reads ahead of later ones
        self._waiting: dict[bool, deque[asyncio.Future[asyncio.Future[None]]]] = {True: deque(), False: deque()}

    def __len__(self) -> int:
        return len(self._readers)

    @property
    def waiting(self) -> int:
        return sum(map(len, self._waiting.values()))  # a turn leaves its queue when handed, timed out or cancelled

    def _add(self, first: bool = False) -> asyncio.Future[None]:
        loop = asyncio.get_running_loop()
        displaced: asyncio.Future[None] = loop.create_future()
        self._readers[displaced] = (loop.time(), first)
        return displaced

    def _take(self, displaced: asyncio.Future[None]) -> None:
        del self._readers[displaced]
        if not displaced.done():
            displaced.set_result(None)

    def enter(self) -> asyncio.Future[None]:
        """A slot for a new read at once, the oldest read's if the pool is full (its future is resolved)."""
        if len(self._readers) >= self.capacity:
            self._take(next(iter(self._readers)))
        return self._add()

    async def enter_first(self, silent_s: float, overdue_s: float) -> asyncio.Future[None]:
        """A slot for a stream's first read: a free one, or the first given back, or the slot of the newest
        stream's first read once it has waited ``silent_s`` for its message (with none, of the newest later
        read once it has waited ``overdue_s``), whichever comes first."""
        loop = asyncio.get_running_loop()
        while len(self._readers) >= self.capacity:
            firsts = [(since, read) for read, (since, first) in self._readers.items() if first]
            since, newest = max(firsts or [(since, read) for read, (since, _) in self._readers.items()], key=_since)
            wait = since + (silent_s if firsts else overdue_s) - loop.time()
            if wait <= 0:
                self._take(newest)
                break
            turn = await self._turn(True, wait)
            if turn is not None:
                return turn
        return self._add(first=True)

    async def wait_turn(self) -> asyncio.Future[None]:
        """A slot once one is free and the reads in turn before this one have theirs."""
        if len(self._readers) < self.capacity and not any(self._waiting.values()):
            return self._add()
        turn = await self._turn(False, None)
        assert turn is not None
        return turn

    async def _turn(self, first: bool, timeout_s: float | None) -> asyncio.Future[None] | None:
        """The slot handed to this read in turn (None: ``timeout_s`` passed first)."""
        turns = self._waiting[first]
        turn: asyncio.Future[asyncio.Future[None]] = asyncio.get_running_loop().create_future()
        turns.append(turn)
        try:
            await asyncio.wait((turn,), timeout=timeout_s)
        except asyncio.CancelledError:  # the stream ended
            if turn.done():  # handed a slot as it was cancelled: pass it on
                self.leave(turn.result())
            else:
                turns.remove(turn)
            raise
        if not turn.done():
            turns.remove(turn)
            return None
        return turn.result()

    def leave(self, displaced: asyncio.Future[None]) -> None:
        if displaced in self._readers:  # it still held its slot (not taken by a newer read): the next in turn has it
            del self._readers[displaced]
            for first in (True, False):
                turns = self._waiting[first]
                while turns and len(self._readers) < self.capacity:
                    turn = turns.popleft()
                    if not turn.done():
                        turn.set_result(self._add(first))

    async def read(self, context: Any, displaced: asyncio.Future[None], timeout_s: float) -> Any:
        """The message ``context.read()`` gives while holding the slot ``displaced``; ``_Ended`` if the
        slot is taken or ``timeout_s`` passes first."""
        read = asyncio.ensure_future(context.read())
        try:
            done, _ = await asyncio.wait((read, displaced), timeout=timeout_s, return_when="FIRST_COMPLETED")
            if read in done:
                return read.result()
            raise _Ended(displaced in done)
        finally:
            self.leave(displaced)
            if not read.done():
                read.cancel()


def _since(holder: tuple[float, asyncio.Future[None]]) -> float:
    return holder[0]


class _Ended(Exception):
    def __init__(self, displaced: bool) -> None:
        self.displaced = displaced


class RequestIntake:
    def __init__(
        self,
        *,
        slots: int,
        read_timeout_s: float = READ_TIMEOUT_S,
        period_s: float = SETTINGS_PERIOD_S,
        lead_s: float = STREAM_READ_LEAD_S,
        grace_s: float = STREAM_READ_GRACE_S,
        silent_s: float = STREAM_SILENT_S,
    ) -> None:
        if slots < 3:
            raise ValueError(f"the request intake needs at least 3 read slots, got {slots}")
        quarter = max(1, slots // 4)
        self.read_timeout_s = read_timeout_s
        self.period_s, self.lead_s, self.grace_s, self.silent_s = period_s, lead_s, grace_s, silent_s
        self._pools = {True: _Pool(slots - 2 * quarter), False: _Pool(quarter)}
        self._streams = _Pool(quarter)
        self.displaced = 0  # reads ended by a newer call or stream
        self.timed_out = 0

    @classmethod
    def for_budget(cls, budget: int, max_request: int) -> RequestIntake:
        """As many slots as requests of ``max_request`` bytes fit in ``budget`` (3 at least)."""
        return cls(slots=max(3, budget // max_request))

    @property
    def capacity(self) -> tuple[int, int, int]:
        """(established, newcomer, stream) slots."""
        return self._pools[True].capacity, self._pools[False].capacity, self._streams.capacity

    def reading(self, established: bool) -> int:
        return len(self._pools[established])

    @property
    def streams_reading(self) -> tuple[int, int]:
        """(stream reads holding a permit, stream reads waiting for one)."""
        return len(self._streams), self._streams.waiting

    @property
    def next_stream_read_s(self) -> float:
        """How long after a stream's message its next is read."""
        return max(0.0, self.period_s - self.lead_s)

    async def read(self, context: Any, established: bool) -> Any:
        """The call's request message (or grpc's EOF), read holding a slot of the caller's pool."""
        pool = self._pools[established]
        return await self._read(
            pool,
            context,
            pool.enter(),
            self.read_timeout_s,
            "the request was still arriving when a newer call needed its read slot",
            f"the request did not arrive within {self.read_timeout_s:.0f} s",
        )

    async def read_stream(self, context: Any, first: bool) -> Any:
        """A request stream's next message (or grpc's EOF), read holding a permit of the streams' pool: a
        first message gets one within ``silent_s`` or so, a later one waits its turn (the module docstring)."""
        pool, timeout_s = self._streams, self.period_s + self.grace_s
        displaced = await (pool.enter_first(self.silent_s, 2 * self.lead_s) if first else pool.wait_turn())
        return await self._read(
            pool,
            context,
            displaced,
            timeout_s,
            "a newer stream took the read permit this stream held for its message",
            f"no message on the stream within {timeout_s:.0f} s",
        )

    async def _read(
        self, pool: _Pool, context: Any, displaced: asyncio.Future[None], timeout_s: float, taken: str, late: str
    ) -> Any:
        try:
            return await pool.read(context, displaced, timeout_s)
        except _Ended as ended:
            if ended.displaced:
                self.displaced += 1
                raise ReadRefused(taken) from None
            self.timed_out += 1
            raise ReadRefused(late) from None


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
