"""Consume services: run the listener on pulled messages in a thread pool, then commit or retry.

- :class:`ConsumeMessageConcurrentlyService` (RocketMQ's of that name): batches of
  ``consume_message_batch_max_size`` messages go to the pool as they arrive, any number at once.
  CONSUME_SUCCESS acknowledges them. RECONSUME_LATER (an exception, None) sends each back to
  ``%RETRY%<group>`` in clustering mode (BROADCASTING drops them with a warning, as RocketMQ
  does); a message whose sendback failed stays held and is consumed again after
  ``consume_later_delay_s``. The queue's offset then advances to the lowest message still held.
- :class:`ConsumeMessageOrderlyService`: one task per queue at a time takes messages in offset
  order, holding the queue's ``consume_lock`` around each listener call; in clustering mode only
  while the broker lock on the queue is held and fresh. SUSPEND_CURRENT_QUEUE_A_MOMENT (an
  exception, None) pauses the queue for
  ``suspend_current_queue_time_s`` and retries the same messages; past ``max_reconsume_times``
  they are sent back (the broker puts them in the DLQ) and the queue moves on.

Messages of a queue a rebalance dropped are never handed to the listener (checked when the
request runs, as RocketMQ's ConsumeRequest checks ``isDropped``), and offsets are never committed
for such a queue, except by the orderly service, which commits under ``consume_lock`` so the
rebalance (waiting for that lock) persists them before it unlocks the queue for its next owner.
:class:`ConsumeCounters` keeps the counts the running info's statusTable reports.
"""

from __future__ import annotations

import abc
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import Any

from brokers.engine.client.client_config import ConsumerConfig
from brokers.engine.client.client_instance import MQClientInstance
from brokers.engine.client.listener import (
    ConsumeConcurrentlyStatus,
    ConsumeOrderlyStatus,
    MessageListener,
    concurrently_answer,
    note_failure,
    orderly_answer,
    to_received,
)
from brokers.engine.client.offset_store import OffsetStore
from brokers.engine.client.process_queue import ProcessQueue
from brokers.engine.client.send_back import MessageBackSender
from brokers.engine.client.trace_dispatcher import TraceDispatcher
from brokers.engine.client.trace_hooks import trace_sub_after, trace_sub_before
from brokers.engine.client.worker_pool import WorkerPool
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.common.message import PROPERTY_CONSUME_START_TIMESTAMP, MessageExt
from brokers.engine.common.message_queue import MessageQueue

__all__ = ["ConsumeCounters", "ConsumeMessageConcurrentlyService", "ConsumeMessageOrderlyService"]

log = logging.getLogger("brokers.engine.client")


def settle_consumed(
    pq: ProcessQueue, mq: MessageQueue, msgs: list[MessageExt], failed: list[MessageExt], offset_store: OffsetStore
) -> None:
    """Take ``msgs`` but ``failed`` (consumed again later) out of ``pq`` and move the queue's offset
    to the smallest one still held, unless the queue moved to another consumer meanwhile."""
    done = [m for m in msgs if m not in failed] if failed else msgs
    offset = pq.remove_message(done)
    if offset >= 0 and not pq.dropped:
        offset_store.update_offset(mq, offset, True)


class ConsumeCounters:
    """Listener calls of one consumer, counted for the running info's statusTable (thread-safe).

    Not RocketMQ's ConsumeStats (a broker's offsets of a group, in ``admin_types``) nor its
    ConsumeStatus rows: the raw counts those rows would be computed from.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.ok = 0
        self.failed = 0
        self.consume_time_ms = 0.0

    def add(self, n: int, ok: bool, elapsed_ms: float) -> None:
        with self._lock:
            if ok:
                self.ok += n
            else:
                self.failed += n
            self.consume_time_ms += elapsed_ms


class _ServiceBase(abc.ABC):
    tracer: TraceDispatcher | None = None  # message trace: SubBefore/SubAfter records (trace_hooks.py)
    orderly: bool  # set by each service class

    def __init__(
        self,
        instance: MQClientInstance,
        group: str,
        listener: MessageListener,
        config: ConsumerConfig,
        offset_store: OffsetStore,
        back_sender: MessageBackSender,
        clustering: bool,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.instance = instance
        self.group = group
        self.listener = listener
        self.config = config
        self.offset_store = offset_store
        self.back_sender = back_sender
        self.clustering = clustering
        self.clock = clock
        self.stats = ConsumeCounters()
        self.executor = WorkerPool(config.consume_thread_max, f"consume-{group}")
        self._stopped = False
        self._timers: set[threading.Timer] = set()

    def _call_listener(self, msgs: list[MessageExt], mq: MessageQueue) -> bool:
        """Run the listener on ``msgs``; True when it acknowledged them (an exception or None does not)."""
        now = str(self.clock.now_ms())
        for m in msgs:
            m.properties[PROPERTY_CONSUME_START_TIMESTAMP] = now
        received = [to_received(m, mq, self.group) for m in msgs]
        request_id = trace_sub_before(self.tracer, self.group, msgs, self.clock.now_ms())
        begin = self.clock.monotonic()
        error: Exception | None = None
        try:
            answer = self.listener(received)
        except Exception as exc:
            log.exception("listener of group %s raised on %d message(s) of %s", self.group, len(msgs), mq)
            answer, error = None, exc
        ok = self._acknowledged(answer)
        if not ok:
            note_failure(msgs, answer, error)
        elapsed_ms = (self.clock.monotonic() - begin) * 1000
        self.stats.add(len(msgs), ok, elapsed_ms)
        trace_sub_after(
            self.tracer, self.group, msgs, request_id, self.clock.now_ms(), elapsed_ms, ok, error is not None
        )
        return ok

    @abc.abstractmethod
    def _acknowledged(self, answer: object) -> bool:
        """Whether the listener's ``answer`` acknowledges the batch (each service's own result type)."""

    def consume_message_directly(self, msg: MessageExt, broker_name: str) -> dict[str, Any]:
        """CONSUME_MESSAGE_DIRECTLY: run the listener on ``msg`` once, outside the queue's flow (no offset moves,
        no send-back); RocketMQ's ConsumeMessageDirectlyResult: order, autoCommit, consumeResult (CR_SUCCESS,
        CR_LATER, CR_RETURN_NULL, CR_THROW_EXCEPTION), remark, spentTimeMills."""
        mq = MessageQueue(msg.topic, broker_name, msg.queue_id)
        begin = self.clock.monotonic()
        remark = ""
        try:
            answer = self.listener([to_received(msg, mq, self.group)])
        except Exception as exc:
            log.warning("listener of group %s raised on a message consumed directly: %s", self.group, exc)
            answer, result, remark = None, "CR_THROW_EXCEPTION", f"{type(exc).__name__}: {exc}"
        else:
            result = (
                "CR_RETURN_NULL" if answer is None else ("CR_SUCCESS" if self._acknowledged(answer) else "CR_LATER")
            )
        spent_ms = int((self.clock.monotonic() - begin) * 1000)
        return {
            "order": self.orderly,
            "autoCommit": True,
            "consumeResult": result,
            "remark": remark,
            "spentTimeMills": spent_ms,
        }

    def _run_on_loop(self, coro: Coroutine[Any, Any, Any], timeout_s: float = 30.0) -> Any:
        return self.instance.call(coro, timeout_s)

    def _later(self, delay_s: float, fn: Callable[[], None]) -> None:
        """Run ``fn`` on the pool after ``delay_s`` (unless the service stopped)."""

        def fire() -> None:
            self._timers.discard(timer)
            if not self._stopped:
                try:
                    self.executor.submit(fn)
                except RuntimeError:  # the pool shut down meanwhile
                    pass

        timer = threading.Timer(delay_s, fire)
        timer.daemon = True
        self._timers.add(timer)
        timer.start()

    def _submit(self, fn: Callable[..., None], *args: Any) -> None:
        if self._stopped:
            return
        try:
            self.executor.submit(fn, *args)
        except RuntimeError:
            pass

    def shutdown(self, await_termination_s: float) -> None:
        """Stop taking work; wait up to ``await_termination_s`` for listener calls in progress."""
        self._stopped = True
        for timer in list(self._timers):
            timer.cancel()
        self.executor.shutdown(cancel_pending=True)
        self.executor.join(await_termination_s)


class ConsumeMessageConcurrentlyService(_ServiceBase):
    orderly = False

    def _acknowledged(self, answer: object) -> bool:
        return concurrently_answer(answer) is ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    def submit_consume_request(
        self, msgs: list[MessageExt], pq: ProcessQueue, mq: MessageQueue, dispatch_to_consume: bool
    ) -> None:
        size = self.config.consume_message_batch_max_size
        for i in range(0, len(msgs), size):
            self._submit(self._consume, msgs[i : i + size], pq, mq)

    def _consume(self, msgs: list[MessageExt], pq: ProcessQueue, mq: MessageQueue) -> None:
        pq.begin_consume()  # counted before ``dropped`` is read: an offset reset waits for this call
        try:
            self._consume_counted(msgs, pq, mq)
        finally:
            pq.end_consume()

    def _consume_counted(self, msgs: list[MessageExt], pq: ProcessQueue, mq: MessageQueue) -> None:
        if pq.dropped:
            return
        acknowledged = self._call_listener(msgs, mq)
        if pq.dropped:  # the queue moved to another consumer meanwhile: its new owner consumes again
            return
        failed: list[MessageExt] = []
        if not acknowledged:  # RECONSUME_LATER
            if self.clustering:
                delay = self.config.delay_level_when_next_consume
                for m in msgs:
                    ok = self._run_on_loop(self.back_sender.send_back(m, mq, delay))
                    if not ok:
                        m.reconsume_times += 1
                        failed.append(m)
            else:
                log.warning(
                    "BROADCASTING consumer of %s dropped %d message(s) it asked to reconsume", self.group, len(msgs)
                )
        settle_consumed(pq, mq, msgs, failed, self.offset_store)
        if failed:
            self._later(self.config.consume_later_delay_s, lambda: self._consume(failed, pq, mq))


class ConsumeMessageOrderlyService(_ServiceBase):
    orderly = True
    MAX_TIME_CONSUME_CONTINUOUSLY_S = 60.0  # then give other queues the thread

    def _acknowledged(self, answer: object) -> bool:
        return orderly_answer(answer) is ConsumeOrderlyStatus.SUCCESS

    def __init__(
        self, *args: Any, lock_queue: Callable[[MessageQueue], Coroutine[Any, Any, bool]], **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self._lock_queue = lock_queue

    def submit_consume_request(
        self, msgs: list[MessageExt], pq: ProcessQueue, mq: MessageQueue, dispatch_to_consume: bool
    ) -> None:
        if dispatch_to_consume:
            self._submit(self._consume, pq, mq)

    def _lock_fresh(self, pq: ProcessQueue) -> bool:
        return not self.clustering or (pq.locked and not pq.is_lock_expired(self.config.lock_max_live_s))

    def _consume(self, pq: ProcessQueue, mq: MessageQueue) -> None:
        if pq.dropped:
            return
        if not self._lock_fresh(pq):
            self._try_lock_later(pq, mq)
            return
        begin = self.clock.monotonic()
        while not self._stopped:
            with pq.consume_lock:
                if pq.dropped:
                    return
                if not self._lock_fresh(pq):
                    self._try_lock_later(pq, mq)
                    return
                msgs = pq.take_messages(self.config.consume_message_batch_max_size)
                if not msgs:
                    return
                if self._call_listener(msgs, mq):  # SUCCESS
                    offset, go_on = pq.commit(), True
                else:
                    offset, go_on = self._retry_or_dead_letter(msgs, pq, mq)
                if offset >= 0:
                    self.offset_store.update_offset(mq, offset, False)
            if not go_on:
                self._later(self.config.suspend_current_queue_time_s, lambda: self._consume(pq, mq))
                return
            if self.clock.monotonic() - begin > self.MAX_TIME_CONSUME_CONTINUOUSLY_S:
                self._later(0.01, lambda: self._consume(pq, mq))
                return

    def _retry_or_dead_letter(self, msgs: list[MessageExt], pq: ProcessQueue, mq: MessageQueue) -> tuple[int, bool]:
        """(offset to commit, keep going): retry the batch later, or send back those past the maximum."""
        suspend = False
        for m in msgs:
            if m.reconsume_times >= self.config.max_reconsume_times:
                # the broker puts it in the DLQ: its reconsume count is at the maximum
                m.reconsume_times = max(m.reconsume_times, self.config.max_reconsume_times)
                if not self._run_on_loop(self.back_sender.send_back(m, mq, -1)):
                    suspend = True
            else:
                suspend = True
        if suspend:
            for m in msgs:
                m.reconsume_times += 1
            pq.make_message_to_consume_again(msgs)
            return -1, False
        return pq.commit(), True

    def _try_lock_later(self, pq: ProcessQueue, mq: MessageQueue) -> None:
        def attempt() -> None:
            if pq.dropped or self._stopped:
                return
            try:
                locked = self._run_on_loop(self._lock_queue(mq))
            except Exception as exc:
                log.debug("lock of %s failed: %s", mq, exc)
                locked = False
            self._later(0.01 if locked else self.config.suspend_current_queue_time_s, lambda: self._consume(pq, mq))

        self._later(self.config.suspend_current_queue_time_s, attempt)
