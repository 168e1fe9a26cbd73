"""PullConsumer: a consumer for scripts that pull when they want (RocketMQ's DefaultLitePullConsumer).

::

    c = PullConsumer("audit", "127.0.0.1:9876", consume_from_where="FIRST_OFFSET")
    c.subscribe("Orders")              # queues balanced across the group, like PushConsumer
    # or c.assign([MessageQueue("Orders", "broker-a", 0)])   # exactly these queues
    with c.start():                    # shutdown() on exit
        msgs = c.poll(timeout_s=2.0)
        ...
        c.commit()                     # offsets of everything poll() returned so far

``poll`` pulls every held queue at once, long-polling up to ``timeout_s`` when none has a
message. Offsets are committed by ``commit`` (to the brokers in clustering mode, to the local
file in broadcasting mode); a queue a rebalance takes away has its committed offset persisted,
and what a pull of it still returns is discarded. Subscriptions, rebalance, offsets and the
lifecycle are :class:`~.consumer_base.ConsumerBase`'s, shared with PushConsumer; a pull consumer
has no listener, no thread pool and no retry topic.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

from brokers.engine.client.allocation import AllocateMessageQueueStrategy
from brokers.engine.client.client_config import ClientConfig, ConsumerConfig
from brokers.engine.client.consumer_base import ConsumerBase
from brokers.engine.client.listener import ReceivedMessage, to_received
from brokers.engine.client.offset_store import ReadOffsetType
from brokers.engine.client.process_queue import ProcessQueue
from brokers.engine.client.puller import SUB_ALL, PullResult, PullStatus, build_subscription
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.subscription import EXPRESSION_TAG
from brokers.engine.remoting.errors import RemotingError
from brokers.engine.remoting.tls import TlsConfig

__all__ = ["PullConsumer"]

log = logging.getLogger("brokers.engine.client")


class PullConsumer(ConsumerBase):
    """Pull on demand; see the module docstring."""

    consume_type = "CONSUME_ACTIVELY"

    def __init__(
        self,
        group: str,
        namesrv_addr: str = "127.0.0.1:9876",
        strategy: AllocateMessageQueueStrategy | None = None,
        message_model: str = "CLUSTERING",
        consume_from_where: str = "CONSUME_FROM_LAST_OFFSET",
        instance_name: str | None = None,
        *,
        config: ConsumerConfig | None = None,
        client_config: ClientConfig | None = None,
        clock: Clock = SYSTEM_CLOCK,
        access_key: str | None = None,
        secret_key: str | None = None,
        tls: TlsConfig | None = None,
    ) -> None:
        super().__init__(
            group,
            namesrv_addr,
            strategy,
            message_model,
            consume_from_where,
            instance_name,
            config=config,
            client_config=client_config,
            clock=clock,
            access_key=access_key,
            secret_key=secret_key,
            tls=tls,
        )
        self._assigned_mode = False
        self._assigned: set[MessageQueue] = set()
        self._next: dict[MessageQueue, int] = {}  # next offset to pull
        self._consumed: dict[MessageQueue, int] = {}  # offset after the last message poll() returned

    def subscribe(self, topic: str, expression: str = SUB_ALL, expression_type: str = EXPRESSION_TAG) -> None:
        if self._assigned_mode:
            raise ValueError("assign() and subscribe() exclude each other")
        super().subscribe(topic, expression, expression_type)

    def assign(self, mqs: Iterable[MessageQueue]) -> None:
        """Hold exactly ``mqs`` (no rebalancing); may be called again to change them."""
        mqs = set(mqs)
        if self.subscriptions and not self._assigned_mode:
            raise ValueError("assign() and subscribe() exclude each other")
        self._assigned_mode = True
        self._assigned = mqs
        for topic in {mq.topic for mq in mqs}:
            self.subscriptions.setdefault(topic, build_subscription(topic, SUB_ALL, self.clock.now_ms()))
        if self._instance is not None:
            self._apply_subscriptions()
            self._instance.call(self._apply_assignment())

    async def _apply_assignment(self) -> None:
        assert self.rebalance is not None
        async with self.rebalance.lock:
            for topic in {mq.topic for mq in self._assigned} | {mq.topic for mq in self.rebalance.process_queue_table}:
                await self.rebalance._update_process_queue_table(
                    topic, {mq for mq in self._assigned if mq.topic == topic}
                )

    async def _after_start(self) -> None:
        if self._assigned_mode:
            await self._apply_assignment()
        else:
            await super()._after_start()

    async def do_rebalance(self) -> None:
        if not self._assigned_mode:
            await super().do_rebalance()

    def on_queue_added(self, mq: MessageQueue, pq: ProcessQueue, next_offset: int) -> None:
        self._next[mq] = next_offset

    async def remove_unnecessary_message_queue(self, mq: MessageQueue, pq: ProcessQueue) -> bool:
        """Forget a queue taken away (a pull of it in flight finds it gone and returns nothing); persist its offset."""
        assert self.offset_store is not None
        self._next.pop(mq, None)
        self._consumed.pop(mq, None)
        await self.offset_store.persist(mq)
        self.offset_store.remove_offset(mq)
        return True

    # -- poll / commit ------------------------------------------------------------------------

    def poll(self, timeout_s: float = 5.0) -> list[ReceivedMessage]:
        """Messages from the held queues; waits up to ``timeout_s`` for some (empty list on timeout)."""
        return self._running_instance().call(self._poll(timeout_s), timeout_s + 30.0)

    async def _poll(self, timeout_s: float) -> list[ReceivedMessage]:
        loop = asyncio.get_running_loop()  # a deadline on the clock the waits below run on
        deadline = loop.time() + timeout_s
        out = await self._pull_all(0)
        while not out and loop.time() < deadline:
            if not self._next:
                await asyncio.sleep(min(0.05, max(0.0, deadline - loop.time())))
                out = await self._pull_all(0)
                continue
            out = await self._pull_all(int((deadline - loop.time()) * 1000))
        return out

    async def _pull_all(self, suspend_ms: int) -> list[ReceivedMessage]:
        mqs = list(self._next)
        if not mqs:
            return []
        tasks = {asyncio.ensure_future(self._pull_one(mq, suspend_ms)): mq for mq in mqs}
        out: list[ReceivedMessage] = []
        pending = set(tasks)
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                out.extend(task.result())
            if out and suspend_ms > 0:
                break
        for task in pending:  # a parked pull whose answer is no longer needed
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        return out

    async def _pull_one(self, mq: MessageQueue, suspend_ms: int) -> list[ReceivedMessage]:
        plans, instance = self._plans, self._running_instance()
        assert plans is not None
        offset = self._next.get(mq)
        sub = plans.subscriptions.get(mq.topic)
        if offset is None or sub is None:
            return []
        try:
            result: PullResult = await instance.driver.run(
                plans.pull(mq, offset, self.config.pull_batch_size, sub.sub_string, max(0, suspend_ms), None)
            )
        except RemotingError as exc:
            log.debug("pull of %s failed: %s", mq, exc)
            return []
        if self._next.get(mq) != offset:  # dropped or moved meanwhile
            return []
        self._next[mq] = result.next_begin_offset
        if result.status is not PullStatus.OFFSET_ILLEGAL:
            self._consumed[mq] = result.next_begin_offset
        return [to_received(m, mq, self.group) for m in result.messages]

    def commit(self) -> None:
        """Commit the offsets of everything poll() returned (waits for the brokers or the file)."""
        self._running_instance().call(self._commit())

    async def _commit(self) -> None:
        assert self.offset_store is not None
        for mq, offset in list(self._consumed.items()):
            self.offset_store.update_offset(mq, offset, False)
        await self.offset_store.persist_all(set(self._consumed))

    async def persist_offsets(self) -> None:  # only what commit() recorded
        if self.offset_store is not None:
            await self.offset_store.persist_all(
                {mq for mq in self._next if self.offset_store.read_from_memory(mq) >= 0}
            )

    def seek(self, mq: MessageQueue, offset: int) -> None:
        """Pull ``mq`` from ``offset`` next."""
        if mq not in self._next:
            raise ValueError(f"{mq} is not held by this consumer")
        self._next[mq] = offset
        self._consumed[mq] = offset

    def committed(self, mq: MessageQueue) -> int:
        """The committed offset of ``mq`` on the broker (or in the file); -1 when none."""
        assert self.offset_store is not None
        return self._running_instance().call(self.offset_store.read_offset(mq, ReadOffsetType.READ_FROM_STORE))

    def assignment(self) -> set[MessageQueue]:
        return set(self._next)
