"""PopService: pops, acks and invisibility changes on PopState, journaled; owns its timers.

A pop takes, from each queue it visits (all readable queues for queueId -1, starting one further
each call so every queue gets its turn), first the group's expired deliveries of that queue
(again, reconsume times + 1, read from the same queue offset), then new messages from the cursor
through the pop's tag or SQL92 filter. An orderly pop takes nothing from a queue that has a
delivery still invisible, and redelivers its expired ones in offset order before anything new.

The timer (``TICK_S``) finds expired deliveries (a heap by deadline): a delivery whose reconsume
times reached the group's ``retry_max_times`` goes to ``%DLQ%<group>`` by the broker's
CONSUMER_SEND_MSG_BACK path (``processors/client.py``) and counts as acked; the others wake parked
pops of the topic. It also fsyncs the journal under ASYNC_FLUSH and compacts it when large.

After each change the group's committed offset of the queue (ConsumerOffsetManager) becomes the
lowest offset not done, so lag shows for POP groups as for pull groups. A committed offset that moved
otherwise (an operator's reset: UPDATE_CONSUMER_OFFSET, mqadmin resetOffsetByTime on an offline group)
moves the cursor there at the group's next pop of the queue, forgetting its deliveries in flight.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
from collections.abc import Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brokers.engine.broker.processors.offset import first_message_cold
from brokers.engine.broker.pop.journal import PopJournal
from brokers.engine.broker.pop.record_fields import record_offsets, with_reconsume_times
from brokers.engine.broker.pop.state import InFlight, PopState, QueueKey, QueueState
from brokers.engine.broker.processors.client import ClientManageProcessor
from brokers.engine.common.constants import MAX_RECONSUME_TIMES
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.headers.consume import ConsumerSendMsgBackRequestHeader
from brokers.engine.store.message_store import MessageFilter
from brokers.engine.store.results import GetMessageStatus

if TYPE_CHECKING:
    from brokers.engine.broker.broker_context import BrokerContext

log = logging.getLogger("brokers.engine.broker.pop")

TICK_S = 0.1  # expiry (redelivery, DLQ) lags the invisible time by at most this
DLQ_RETRY_MS = 5_000  # a DLQ write that failed is tried again after this
INIT_MODE_MIN = 0  # ConsumeInitMode.MIN: a group's first pop of a queue starts at its oldest message; MAX: at its end


@dataclass(frozen=True, slots=True)
class PopQuery:
    group: str
    topic: str
    queue_ids: tuple[int, ...]
    max_nums: int
    invisible_ms: int
    order: bool
    init_mode: int
    tag_codes: set[int] | None
    message_filter: MessageFilter | None


@dataclass(slots=True)
class PopOutcome:
    pop_time: int
    records: list[bytes] = field(default_factory=list)
    starts: dict[int, int] = field(default_factory=dict)  # queue id -> first offset (the handle's ckQueueOffset)
    offsets: dict[int, list[int]] = field(default_factory=dict)
    counts: dict[tuple[int, int], int] = field(default_factory=dict)  # (queue id, offset) -> reconsume times
    rest: int = 0
    full: bool = False  # the group's in-flight limit kept new messages back
    seq: int = 0  # the journal record to wait for


class PopService:
    """The POP state of one broker. Not replicated: a slave refuses POP/ACK/CHANGE."""

    def __init__(self, broker: BrokerContext) -> None:
        self.broker = broker
        self.state = PopState()
        self.journal: PopJournal | None = None
        self._heap: list[tuple[int, str, str, int, int, int]] = []  # deadline, group, topic, queue id, offset, popTime
        # topic -> group -> the events of its parked pops not woken yet, oldest first (a dict: O(1) to take the
        # oldest and to remove any; a list made every wake scan the woken ones still waiting to run)
        self._waiters: dict[str, dict[str, dict[asyncio.Event, None]]] = {}
        self._rotation: dict[tuple[str, str], int] = {}
        self._dlq_busy: set[tuple[QueueKey, int]] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._timer: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._last_flush = 0.0
        self._compacted_size = 0
        self._send_back = ClientManageProcessor(broker)
        self.stopped = False

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Replay ``<store_dir>/pop/journal`` and start the timer (the store is open)."""
        store_config = self.broker.config.store
        self.journal = PopJournal(Path(store_config.store_dir) / "pop", sync=store_config.sync_flush)
        for record in self.journal.open():
            try:
                self.state.apply(record)
            except (KeyError, TypeError, ValueError) as exc:
                log.warning("pop journal: record %r skipped: %s", record, exc)
        for (group, topic, qid), qs in self.state.queues.items():
            for f in qs.inflight.values():
                self._heap.append((f.deadline, group, topic, qid, f.offset, f.pop_time))
            self._commit((group, topic, qid), qs)
        heapq.heapify(self._heap)
        self._compacted_size = self.journal.size
        self._loop = asyncio.get_running_loop()
        self.broker.store.add_arrival_listener(self._on_arrival)
        self._timer = self._loop.create_task(self._tick_loop(), name="pop service")

    async def stop(self) -> None:
        self.stopped = True
        if self._timer is not None:
            self._timer.cancel()
            await asyncio.gather(self._timer, return_exceptions=True)
            self._timer = None
        for groups in self._waiters.values():
            for events in groups.values():
                for event in events:
                    event.set()
        if self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        if self.journal is not None:
            self.journal.close()

    # -- long polling -------------------------------------------------------------------------

    @property
    def parked_count(self) -> int:
        return sum(len(events) for groups in self._waiters.values() for events in groups.values())

    @contextmanager
    def waiter(self, topic: str, group: str) -> Iterator[asyncio.Event]:
        """An event set when ``topic`` may have something new for ``group`` (a message, an expiry, an ack).

        Each such change wakes one parked pop per group, the oldest (RocketMQ's PopLongPollingService
        wakes one request per arrival too): with every parked pop woken, one message arriving for 2,000
        parked pops made 2,000 pops run, and a producer's sends waited behind them."""
        event = asyncio.Event()
        if self.stopped:
            event.set()  # nothing parks once the broker stops
        else:
            self._waiters.setdefault(topic, {}).setdefault(group, {})[event] = None
        try:
            yield event
        finally:
            groups = self._waiters.get(topic)
            events = groups.get(group) if groups is not None else None
            if events is not None:
                events.pop(event, None)
                if not events and groups is not None:  # groups is set whenever events is
                    del groups[group]
                    if not groups:
                        del self._waiters[topic]

    def _on_arrival(self, topic: str, queue_id: int, *_: object) -> None:
        if topic in self._waiters and self._loop is not None:  # the putting thread: hand over to the loop
            try:
                self._loop.call_soon_threadsafe(self._wake, topic)
            except RuntimeError:
                pass

    def _wake(self, topic: str) -> None:
        for events in self._waiters.get(topic, {}).values():
            _wake_one(events)

    def wake_next(self, topic: str, group: str) -> None:
        """A pop of ``group`` took a full batch: more may be waiting, so wake its next parked pop."""
        events = self._waiters.get(topic, {}).get(group)
        if events:
            _wake_one(events)

    # -- pop ----------------------------------------------------------------------------------

    def pop(self, query: PopQuery) -> PopOutcome:
        """Take up to ``max_nums`` deliveries (no await: one consistent step on the event loop)."""
        now = self.broker.clock.now_ms()
        out = PopOutcome(pop_time=now)
        records: list[dict[str, Any]] = []
        queue_ids = query.queue_ids
        if len(queue_ids) > 1:
            turn = self._rotation.get((query.group, query.topic), 0)
            self._rotation[(query.group, query.topic)] = turn + 1
            queue_ids = queue_ids[turn % len(queue_ids) :] + queue_ids[: turn % len(queue_ids)]
        for qid in queue_ids:
            if len(out.records) < query.max_nums:
                self._pop_queue(query, qid, now, out, records)
            out.rest += max(
                0,
                self.broker.store.get_max_offset_in_queue(query.topic, qid)
                - self._cursor((query.group, query.topic, qid)),
            )
        if records:
            out.seq = self._journal(records)
        return out

    def _pop_queue(self, query: PopQuery, qid: int, now: int, out: PopOutcome, records: list[dict[str, Any]]) -> None:
        key = (query.group, query.topic, qid)
        qs = self._queue_state(key, query.init_mode, records)
        max_reconsume = self.max_reconsume(query.group)
        room = query.max_nums - len(out.records)
        if query.order:
            expired = self._all_expired(qs, now)
            if len(expired) < len(qs.inflight):
                return  # an orderly queue with a delivery still invisible gives nothing
        else:
            expired = qs.due(now, room, lambda f: f.reconsume < max_reconsume)
        taken: list[list[int]] = []
        bodies: list[bytes] = []
        for f in expired:
            if len(taken) >= room:
                break
            if f.reconsume >= max_reconsume:
                continue  # the timer sends it to the DLQ
            record = self._read_one(key, f.offset, records)
            if record is not None:
                taken.append([f.offset, f.reconsume + 1, f.phys_offset])
                bodies.append(with_reconsume_times(record, f.reconsume + 1))
        cursor = qs.cursor
        if len(taken) < room and not (query.order and qs.inflight):
            limit = self.broker.config.pop_max_inflight_per_group - self.state.inflight_count(
                query.group
            )  # taken: in flight already
            want = min(room - len(taken), limit)
            if want <= 0:
                out.full = True
            else:
                result = self.broker.store.get_message(
                    query.group, query.topic, qid, cursor, want, query.tag_codes, message_filter=query.message_filter
                )
                if result.status in (GetMessageStatus.OFFSET_TOO_SMALL, GetMessageStatus.OFFSET_OVERFLOW_BADLY):
                    log.info(
                        "pop: %s %s:%d cursor %d moved to %d (%s)",
                        query.group,
                        query.topic,
                        qid,
                        cursor,
                        result.next_begin_offset,
                        result.status.value,
                    )
                    cursor = result.next_begin_offset
                    result = self.broker.store.get_message(
                        query.group,
                        query.topic,
                        qid,
                        cursor,
                        want,
                        query.tag_codes,
                        message_filter=query.message_filter,
                    )
                if result.status in (GetMessageStatus.FOUND, GetMessageStatus.NO_MATCHED_MESSAGE):
                    for record in result.records:
                        offset, phys = record_offsets(record)
                        taken.append([offset, 0, phys])
                        bodies.append(bytes(record))
                    cursor = max(cursor, result.next_begin_offset)
        if not taken and cursor == qs.cursor:
            return
        ck = min((t[0] for t in taken), default=cursor)
        rec = {
            "op": "pop",
            "g": query.group,
            "t": query.topic,
            "q": qid,
            "cur": cursor,
            "pt": now,
            "it": query.invisible_ms,
            "ck": ck,
            "ord": int(query.order),
            "m": taken,
        }
        self._apply(rec, records)
        deadline = now + query.invisible_ms
        for (offset, reconsume, _), body in zip(taken, bodies):
            heapq.heappush(self._heap, (deadline, query.group, query.topic, qid, offset, now))
            out.records.append(body)
            out.offsets.setdefault(qid, []).append(offset)
            out.counts[(qid, offset)] = reconsume
        if taken:
            out.starts[qid] = ck

    @staticmethod
    def _all_expired(qs: QueueState, now: int) -> list[InFlight]:
        """An orderly queue's expired deliveries by offset (it holds one batch at most: nothing more is
        delivered while one is in flight)."""
        expired = [f for f in qs.inflight.values() if f.deadline <= now]
        expired.sort(key=lambda f: f.offset)
        return expired

    def _queue_state(self, key: QueueKey, init_mode: int, records: list[dict[str, Any]]) -> QueueState:
        qs = self.state.get(key)
        if qs is not None:
            group, topic, qid = key
            committed = self.broker.consumer_offset_manager.query_offset(group, topic, qid)
            if committed >= 0 and committed != qs.committed():  # reset by an operator (UPDATE_CONSUMER_OFFSET, mqadmin)
                log.info(
                    "pop: %s %s:%d committed offset moved from %d to %d outside POP: the pops start there, %d deliveries "
                    "in flight forgotten",
                    group,
                    topic,
                    qid,
                    qs.committed(),
                    committed,
                    len(qs.inflight),
                )
                self._apply({"op": "reset", "g": group, "t": topic, "q": qid, "cur": committed}, records)
        if qs is None:
            group, topic, qid = key
            committed = self.broker.consumer_offset_manager.query_offset(group, topic, qid)
            if committed < 0:
                store = self.broker.store
                if init_mode == INIT_MODE_MIN:
                    committed = store.get_min_offset_in_queue(topic, qid)
                elif store.get_min_offset_in_queue(topic, qid) <= 0 and not first_message_cold(store, topic, qid):
                    committed = 0  # RocketMQ's initPopOffsetByCheckMsgInMem: a young queue is read from its start
                else:
                    committed = store.get_max_offset_in_queue(topic, qid)
            qs = self._apply({"op": "cur", "g": group, "t": topic, "q": qid, "cur": committed}, records)
        return qs

    def _cursor(self, key: QueueKey) -> int:
        qs = self.state.get(key)
        return 0 if qs is None else qs.cursor

    def _read_one(self, key: QueueKey, offset: int, records: list[dict[str, Any]]) -> bytes | None:
        """The record at ``offset``; None (and a ``drop`` record when retention removed it) otherwise."""
        group, topic, qid = key
        result = self.broker.store.get_message(group, topic, qid, offset, 1, None)
        if (
            result.status is GetMessageStatus.FOUND
            and result.records
            and record_offsets(result.records[0])[0] == offset
        ):
            return bytes(result.records[0])
        if offset < result.min_offset:
            self._apply({"op": "drop", "g": group, "t": topic, "q": qid, "o": offset}, records)
        return None

    # -- ack and change -----------------------------------------------------------------------

    def find(self, key: QueueKey, offset: int) -> InFlight | None:
        return self.state.find(key, offset)

    def ack(self, key: QueueKey, flight: InFlight) -> int:
        group, topic, qid = key
        records: list[dict[str, Any]] = []
        self._apply({"op": "ack", "g": group, "t": topic, "q": qid, "o": flight.offset, "pt": flight.pop_time}, records)
        if flight.order:
            self._wake(topic)  # the queue may deliver again
        return self._journal(records)

    def change(self, key: QueueKey, flight: InFlight, invisible_ms: int) -> tuple[int, int]:
        """Make ``flight`` invisible for ``invisible_ms`` from now; (new popTime, journal seq)."""
        group, topic, qid = key
        now = self.broker.clock.now_ms()
        if now <= flight.pop_time:
            now = flight.pop_time + 1  # the old handle must differ from the new one
        records: list[dict[str, Any]] = []
        self._apply(
            {
                "op": "chg",
                "g": group,
                "t": topic,
                "q": qid,
                "o": flight.offset,
                "pt": flight.pop_time,
                "npt": now,
                "it": invisible_ms,
            },
            records,
        )
        heapq.heappush(self._heap, (now + invisible_ms, group, topic, qid, flight.offset, now))
        return now, self._journal(records)

    async def durable(self, seq: int) -> None:
        if seq and self.journal is not None:
            await self.journal.durable(seq)

    def max_reconsume(self, group: str) -> int:
        cfg = self.broker.subscription_group_manager.subscription_group_table.get(group)
        times = MAX_RECONSUME_TIMES if cfg is None else cfg.retry_max_times
        return MAX_RECONSUME_TIMES if times < 0 else times

    # -- records ------------------------------------------------------------------------------

    def _apply(self, record: dict[str, Any], records: list[dict[str, Any]]) -> QueueState:
        qs = self.state.apply(record)
        records.append(record)
        self._commit((record["g"], record["t"], int(record["q"])), qs)
        return qs

    def _journal(self, records: list[dict[str, Any]]) -> int:
        if self.journal is None:
            raise OSError("the pop service is not started")
        return self.journal.append(records)

    def _commit(self, key: QueueKey, qs: QueueState) -> None:
        group, topic, qid = key
        self.broker.consumer_offset_manager.commit_offset("pop", group, topic, qid, qs.committed())

    # -- the timer ----------------------------------------------------------------------------

    async def _tick_loop(self) -> None:
        while True:
            await asyncio.sleep(TICK_S)
            try:
                self._tick()
            except Exception:
                log.exception("pop service tick failed")

    def _tick(self) -> None:
        now = self.broker.clock.now_ms()
        woken: set[str] = set()
        while self._heap and self._heap[0][0] <= now:
            _, group, topic, qid, offset, pop_time = heapq.heappop(self._heap)
            flight = self.state.find((group, topic, qid), offset)
            if flight is None or flight.pop_time != pop_time or flight.deadline > now:
                continue  # acked, changed or popped again since
            woken.add(topic)
            if flight.reconsume >= self.max_reconsume(group):
                self._spawn(self._dead_letter((group, topic, qid), flight))
        for topic in woken:
            self._wake(topic)
        journal = self.journal
        if journal is None:
            return
        loop_now = asyncio.get_running_loop().time()
        if (
            not journal.sync
            and not journal.busy
            and loop_now - self._last_flush >= self.broker.config.pop_journal_flush_interval_ms / 1000
        ):
            self._last_flush = loop_now
            self._spawn(journal.durable(journal.written, force=True))  # the fsync runs in a worker thread
        if not journal.busy and journal.size > max(
            self.broker.config.pop_journal_compact_bytes, 4 * self._compacted_size
        ):
            journal.compact(self.state.snapshot())
            self._compacted_size = journal.size
            log.info(
                "pop journal compacted to %d bytes (%d queues and deliveries)", journal.size, self.state.record_count()
            )

    async def _dead_letter(self, key: QueueKey, flight: InFlight) -> None:
        marker = (key, flight.offset)
        if marker in self._dlq_busy:
            return
        self._dlq_busy.add(marker)
        group, topic, qid = key
        try:
            header = ConsumerSendMsgBackRequestHeader(
                offset=flight.phys_offset, group=group, delay_level=-1, origin_topic=topic
            )
            request = RemotingCommand.request(RequestCode.CONSUMER_SEND_MSG_BACK, header.encode())
            response = await self._send_back.consumer_send_msg_back(None, request)
            current = self.state.find(key, flight.offset)
            if current is not flight or current.pop_time != flight.pop_time:
                return  # acked or changed while the DLQ write ran (the copy in the DLQ stays)
            if response is not None and response.code == ResponseCode.SUCCESS:
                records: list[dict[str, Any]] = []
                self._apply(
                    {"op": "dlq", "g": group, "t": topic, "q": qid, "o": flight.offset, "pt": flight.pop_time}, records
                )
                await self.durable(self._journal(records))
                log.info(
                    "pop: %s %s:%d offset %d sent to the DLQ after %d deliveries",
                    group,
                    topic,
                    qid,
                    flight.offset,
                    flight.reconsume + 1,
                )
            else:
                log.warning(
                    "pop: sending %s %s:%d offset %d to the DLQ failed: %s; trying again in %d ms",
                    group,
                    topic,
                    qid,
                    flight.offset,
                    None if response is None else response.remark,
                    DLQ_RETRY_MS,
                )
                heapq.heappush(
                    self._heap,
                    (self.broker.clock.now_ms() + DLQ_RETRY_MS, group, topic, qid, flight.offset, flight.pop_time),
                )
        finally:
            self._dlq_busy.discard(marker)

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _wake_one(events: dict[asyncio.Event, None]) -> None:
    """Set the oldest parked pop's event (and forget it: a woken pop is no longer parked)."""
    if events:
        event = next(iter(events))
        del events[event]
        event.set()
