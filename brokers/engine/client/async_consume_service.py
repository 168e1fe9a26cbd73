"""The asyncio consume service: a coroutine listener awaited on the consumer's loop, then commit or retry.

What :class:`~.consume_service.ConsumeMessageConcurrentlyService` does with a thread pool, done
with tasks of the loop the :class:`~.async_push_consumer.AsyncPushConsumer` runs on: batches of
``consume_message_batch_max_size`` messages are handed to ``await listener(msgs, context)`` as
they arrive, at most ``consume_thread_max`` calls at once. CONSUME_SUCCESS acknowledges the
batch, or its first ``context.ack_index + 1`` messages (RocketMQ's ackIndex); the others, and
all of them on RECONSUME_LATER (an exception, None), are sent back to ``%RETRY%<group>`` in
clustering mode with ``context.delay_level_when_next_consume`` (BROADCASTING drops them with a
warning). A message whose sendback failed stays held and is consumed again after
``consume_later_delay_s``. The queue's offset then advances to the lowest message still held.
A dropped queue's messages never reach the listener, and a call that returns after its queue was
dropped commits nothing (its new owner consumes them again).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from brokers.engine.client.client_config import ConsumerConfig
from brokers.engine.client.consume_service import ConsumeCounters, settle_consumed
from brokers.engine.client.listener import (
    ConsumeConcurrentlyStatus,
    ReceivedMessage,
    concurrently_answer,
    note_failure,
    to_received,
)
from brokers.engine.client.offset_store import OffsetStore
from brokers.engine.client.process_queue import ProcessQueue
from brokers.engine.client.send_back import MessageBackSender
from brokers.engine.client.trace_dispatcher import TraceDispatcher
from brokers.engine.client.trace_hooks import trace_sub_after, trace_sub_before
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.common.message import PROPERTY_CONSUME_START_TIMESTAMP, MessageExt
from brokers.engine.common.message_queue import MessageQueue

__all__ = ["AsyncConsumeConcurrentlyService", "AsyncMessageListener", "ConsumeConcurrentlyContext"]

log = logging.getLogger("brokers.engine.client")

ACK_ALL = 2**31 - 1  # Java's Integer.MAX_VALUE: every message of the batch acknowledged on success


@dataclass(slots=True)
class ConsumeConcurrentlyContext:
    """What a listener call may read and set (RocketMQ's ConsumeConcurrentlyContext).

    ``delay_level_when_next_consume``: the sendback delay level of messages to reconsume (0: the
    broker picks 3 + reconsume times); ``ack_index``: on success, the index of the last message
    acknowledged (the ones after it are sent back).
    """

    message_queue: MessageQueue
    delay_level_when_next_consume: int = 0
    ack_index: int = ACK_ALL


AsyncMessageListener = Callable[
    [list[ReceivedMessage], ConsumeConcurrentlyContext], Awaitable["ConsumeConcurrentlyStatus | None"]
]


class AsyncConsumeConcurrentlyService:
    tracer: TraceDispatcher | None = None  # message trace: SubBefore/SubAfter records (trace_hooks.py)
    """Listener calls as tasks of the running loop; see the module docstring."""

    orderly = False

    def __init__(
        self,
        group: str,
        listener: AsyncMessageListener,
        config: ConsumerConfig,
        offset_store: OffsetStore,
        back_sender: MessageBackSender,
        clustering: bool,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.group = group
        self.listener = listener
        self.config = config
        self.offset_store = offset_store
        self.back_sender = back_sender
        self.clustering = clustering
        self.clock = clock
        self.stats = ConsumeCounters()
        self._slots = asyncio.Semaphore(config.consume_thread_max)  # listener calls at once
        self._tasks: set[asyncio.Task[None]] = set()
        self._later: set[asyncio.Task[None]] = set()  # waiting to consume again: cancelled at once by stop()
        self._stopped = False

    def submit_consume_request(
        self, msgs: list[MessageExt], pq: ProcessQueue, mq: MessageQueue, dispatch_to_consume: bool
    ) -> None:
        size = self.config.consume_message_batch_max_size
        for i in range(0, len(msgs), size):
            self._spawn(self._consume(msgs[i : i + size], pq, mq))

    def _spawn(self, coro: Coroutine[Any, Any, None], tasks: set[asyncio.Task[None]] | None = None) -> None:
        if self._stopped:
            coro.close()
            return
        task = asyncio.get_running_loop().create_task(coro)
        group = self._tasks if tasks is None else tasks
        group.add(task)
        task.add_done_callback(group.discard)

    async def _consume(self, msgs: list[MessageExt], pq: ProcessQueue, mq: MessageQueue) -> None:
        async with self._slots:
            pq.begin_consume()  # counted before ``dropped`` is read: an offset reset waits for this call
            try:
                await self._consume_counted(msgs, pq, mq)
            finally:
                pq.end_consume()

    async def _consume_counted(self, msgs: list[MessageExt], pq: ProcessQueue, mq: MessageQueue) -> None:
        if pq.dropped or self._stopped:
            return
        context = ConsumeConcurrentlyContext(mq, self.config.delay_level_when_next_consume)
        acked_count = len(msgs) if await self._call_listener(msgs, mq, context) else 0
        if acked_count:
            acked_count = max(0, min(context.ack_index + 1, len(msgs)))
        if pq.dropped:  # the queue moved to another consumer meanwhile: its new owner consumes again
            return
        failed: list[MessageExt] = []
        to_reconsume = msgs[acked_count:]
        if to_reconsume:
            if self.clustering:
                for m in to_reconsume:
                    if not await self.back_sender.send_back(m, mq, context.delay_level_when_next_consume):
                        m.reconsume_times += 1
                        failed.append(m)
            else:
                log.warning(
                    "BROADCASTING consumer of %s dropped %d message(s) it asked to reconsume",
                    self.group,
                    len(to_reconsume),
                )
        settle_consumed(pq, mq, msgs, failed, self.offset_store)
        if failed:
            self._spawn(self._consume_later(failed, pq, mq), self._later)

    async def _consume_later(self, msgs: list[MessageExt], pq: ProcessQueue, mq: MessageQueue) -> None:
        await asyncio.sleep(self.config.consume_later_delay_s)
        await self._consume(msgs, pq, mq)

    async def _call_listener(
        self, msgs: list[MessageExt], mq: MessageQueue, context: ConsumeConcurrentlyContext
    ) -> bool:
        """Await the listener on ``msgs``; True when it answered CONSUME_SUCCESS (an exception or None is a failure)."""
        now = str(self.clock.now_ms())
        for m in msgs:
            m.properties[PROPERTY_CONSUME_START_TIMESTAMP] = now
        received = [to_received(m, mq, self.group) for m in msgs]
        request_id = trace_sub_before(self.tracer, self.group, msgs, self.clock.now_ms())
        begin = self.clock.monotonic()
        error: Exception | None = None
        try:
            answer = await self.listener(received, context)
        except Exception as exc:
            log.exception("listener of group %s raised on %d message(s) of %s", self.group, len(msgs), mq)
            answer, error = None, exc
        ok = concurrently_answer(answer) is ConsumeConcurrentlyStatus.CONSUME_SUCCESS
        if not ok:
            note_failure(msgs, answer, error)
        elapsed_ms = (self.clock.monotonic() - begin) * 1000
        self.stats.add(len(msgs), ok, elapsed_ms)
        trace_sub_after(
            self.tracer, self.group, msgs, request_id, self.clock.now_ms(), elapsed_ms, ok, error is not None
        )
        return ok

    async def stop(self, await_termination_s: float) -> None:
        """Take no more work; wait up to ``await_termination_s`` for listener calls in progress, cancel the rest."""
        self._stopped = True
        for task in list(self._later):
            task.cancel()
        tasks = list(self._tasks)
        if not tasks:
            return
        _, pending = await asyncio.wait(tasks, timeout=await_termination_s)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
