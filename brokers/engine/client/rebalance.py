"""RebalanceImpl: which queues this consumer holds, recomputed as RocketMQ 4.x does.

Every consumer computes its own share; nobody coordinates. Per subscribed topic (the group's
``%RETRY%`` topic included in clustering mode):

1. the topic's readable queues (from the route) and the group's client ids
   (GET_CONSUMER_LIST_BY_GROUP on a broker of the topic);
2. both sorted as RocketMQ sorts them, then ``strategy.allocate(group, my_id, queues, ids)``
   (BROADCASTING: every queue);
3. a diff against the process-queue table: a queue no longer ours is marked dropped (its pull
   is abandoned, whatever a pull of it still returns is discarded, none of its messages reaches
   the listener) and removed after its offset is committed (orderly: after the listener call in progress
   and then the broker unlock); a new queue starts from the committed offset or, when there is
   none, from consume-from-where (LAST_OFFSET: the queue's end, 0 for a retry topic;
   FIRST_OFFSET: 0; TIMESTAMP: the offset at ``consume_timestamp_ms``). Orderly consumers take a
   new queue only once LOCK_BATCH_MQ grants it.

The host consumer (push or pull) starts and stops the pulling; see :class:`RebalanceHost`.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import defaultdict
from typing import Protocol

from brokers.engine.client.admin_types import SubscriptionData, TopicRouteData
from brokers.engine.client.allocation import AllocateMessageQueueStrategy
from brokers.engine.common.rebalance_order import sort_for_rebalance
from brokers.engine.client.client_instance import MQClientInstance
from brokers.engine.client.offset_store import OFFSET_UNKNOWN, OffsetStore, ReadOffsetType
from brokers.engine.client.plan import Call, check
from brokers.engine.client.process_queue import ProcessQueue
from brokers.engine.client.puller import PullPlans
from brokers.engine.common import json_compat
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.common.constants import RETRY_GROUP_TOPIC_PREFIX
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.errors import RemotingError

__all__ = ["CONSUME_FROM_WHERE", "RebalanceHost", "RebalanceImpl"]

log = logging.getLogger("brokers.engine.client")

CONSUME_FROM_WHERE = (
    "CONSUME_FROM_LAST_OFFSET",
    "CONSUME_FROM_FIRST_OFFSET",
    "CONSUME_FROM_TIMESTAMP",
    "CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST",
    "CONSUME_FROM_MIN_OFFSET",
    "CONSUME_FROM_MAX_OFFSET",
)
CONSUME_TIMESTAMP_DEFAULT_BACK_MS = 30 * 60 * 1000  # consumeTimestamp default: half an hour ago


class RebalanceHost(Protocol):
    """What the consumer owning a RebalanceImpl does when its queues change."""

    def on_queue_added(self, mq: MessageQueue, pq: ProcessQueue, next_offset: int) -> None: ...

    async def remove_unnecessary_message_queue(self, mq: MessageQueue, pq: ProcessQueue) -> bool: ...


class RebalanceImpl:
    def __init__(
        self,
        host: RebalanceHost,
        instance: MQClientInstance,
        plans: PullPlans,
        offset_store: OffsetStore,
        *,
        group: str,
        strategy: AllocateMessageQueueStrategy,
        clustering: bool,
        orderly: bool,
        consume_from_where: str,
        consume_timestamp_ms: int | None = None,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.host = host
        self.instance = instance
        self.plans = plans
        self.offset_store = offset_store
        self.group = group
        self.strategy = strategy
        self.clustering = clustering
        self.orderly = orderly
        self.consume_from_where = consume_from_where
        self.consume_timestamp_ms = consume_timestamp_ms
        self.clock = clock
        self.subscription_inner: dict[str, SubscriptionData] = {}
        self.topic_subscribe_info: dict[str, set[MessageQueue]] = {}
        self.process_queue_table: dict[MessageQueue, ProcessQueue] = {}
        self._lock: asyncio.Lock | None = None

    @property
    def lock(self) -> asyncio.Lock:
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    def on_route(self, topic: str, route: TopicRouteData) -> bool:
        queues = set(route.subscribe_queues())
        changed = self.topic_subscribe_info.get(topic) != queues
        self.topic_subscribe_info[topic] = queues
        return changed

    async def do_rebalance(self) -> None:
        async with self.lock:
            for topic in list(self.subscription_inner):
                try:
                    await self._rebalance_by_topic(topic)
                except Exception:
                    log.exception("rebalance of %s, topic %s failed", self.group, topic)
            await self._truncate_queues_not_my_topic()

    async def _rebalance_by_topic(self, topic: str) -> None:
        mq_set = self.topic_subscribe_info.get(topic)
        if not mq_set:
            log.debug("rebalance of %s: topic %s has no queue yet", self.group, topic)
            return
        if not self.clustering:
            await self._update_process_queue_table(topic, set(mq_set))
            return
        cids = await self.instance.find_consumer_id_list(topic, self.group)
        if not cids:
            log.debug("rebalance of %s: no consumer id of the group on the brokers of %s", self.group, topic)
            return
        mqs, cids = sort_for_rebalance(mq_set, cids)
        try:
            allocated = self.strategy.allocate(self.group, self.instance.client_id, mqs, cids) or []
        except Exception:
            log.exception("strategy %s failed for %s", getattr(self.strategy, "name", self.strategy), self.group)
            return
        await self._update_process_queue_table(topic, set(allocated))

    async def _update_process_queue_table(self, topic: str, mq_set: set[MessageQueue]) -> bool:
        changed = False
        for mq, pq in list(self.process_queue_table.items()):
            if mq.topic != topic or mq in mq_set:
                continue
            pq.dropped = True
            if await self.host.remove_unnecessary_message_queue(mq, pq):
                if self.process_queue_table.get(mq) is pq:
                    del self.process_queue_table[mq]
                changed = True
                log.info("rebalance of %s: %s dropped", self.group, mq)
        for mq in sorted(mq_set - self.process_queue_table.keys()):
            if self.orderly and self.clustering and not await self.lock_mq(mq):
                log.info("rebalance of %s: %s not locked yet, later", self.group, mq)
                continue
            self.offset_store.remove_offset(mq)  # a dirty offset of an earlier ownership
            next_offset = await self.compute_pull_from_where(mq)
            if next_offset < 0:
                if self.orderly and self.clustering:
                    await self.unlock_mq(mq)
                continue
            pq = ProcessQueue(self.clock)
            if self.orderly and self.clustering:
                pq.mark_locked()
            self.process_queue_table[mq] = pq
            self.host.on_queue_added(mq, pq, next_offset)
            changed = True
            log.info("rebalance of %s: %s added, from offset %d", self.group, mq, next_offset)
        return changed

    async def _truncate_queues_not_my_topic(self) -> None:
        for mq, pq in list(self.process_queue_table.items()):
            if mq.topic not in self.subscription_inner:
                pq.dropped = True
                if await self.host.remove_unnecessary_message_queue(mq, pq):
                    self.process_queue_table.pop(mq, None)

    async def compute_pull_from_where(self, mq: MessageQueue) -> int:
        """The committed offset, or consume-from-where's start when there is none; -1 to skip for now."""
        last = await self.offset_store.read_offset(mq, ReadOffsetType.READ_FROM_STORE)
        if last >= 0:
            return last
        if last == OFFSET_UNKNOWN:
            return -1
        retry = mq.topic.startswith(RETRY_GROUP_TOPIC_PREFIX)
        driver = self.instance.driver
        try:
            if self.consume_from_where == "CONSUME_FROM_FIRST_OFFSET":
                return 0
            if self.consume_from_where == "CONSUME_FROM_TIMESTAMP":
                if retry:
                    return await driver.run(self.plans.max_offset(mq))
                ts = self.consume_timestamp_ms or self.clock.now_ms() - CONSUME_TIMESTAMP_DEFAULT_BACK_MS
                return await driver.run(self.plans.search_offset(mq, ts))
            if retry:
                return 0
            return await driver.run(self.plans.max_offset(mq))
        except RemotingError as exc:
            log.warning("start offset of %s not found: %s", mq, exc)
            return -1

    # -- orderly locks ------------------------------------------------------------------------

    def _lock_body(self, mqs: list[MessageQueue]) -> bytes:
        return json.dumps(
            {"consumerGroup": self.group, "clientId": self.instance.client_id, "mqSet": [mq.to_json() for mq in mqs]},
            separators=(",", ":"),
        ).encode()

    async def _lock_batch(self, broker_name: str, mqs: list[MessageQueue]) -> set[MessageQueue]:
        driver = self.instance.driver
        addr = await driver.run(self.plans.broker_addr(mqs[0].topic, broker_name))
        reply = check(
            await driver.invoke(Call(RequestCode.LOCK_BATCH_MQ, body=self._lock_body(mqs), addr=addr)),
            request_code=RequestCode.LOCK_BATCH_MQ,
        )
        data = json_compat.loads(reply.body) if reply.body else {}
        return {MessageQueue.from_json(m) for m in (data.get("lockOKMQSet") or [])}

    async def lock_mq(self, mq: MessageQueue) -> bool:
        """LOCK_BATCH_MQ for one queue; True when this client holds it now."""
        try:
            held = mq in await self._lock_batch(mq.broker_name, [mq])
        except RemotingError as exc:
            log.debug("lock of %s failed: %s", mq, exc)
            return False
        pq = self.process_queue_table.get(mq)
        if pq is not None:
            if held:
                pq.mark_locked()
            else:
                pq.locked = False
        return held

    async def lock_all(self) -> None:
        """Refresh the broker locks of every held queue (orderly consumers, every ``lock_interval_s``)."""
        by_broker: dict[tuple[str, str], list[MessageQueue]] = defaultdict(list)
        for mq in self.process_queue_table:
            by_broker[(mq.broker_name, mq.topic)].append(mq)
        for (broker_name, _), mqs in by_broker.items():
            try:
                held = await self._lock_batch(broker_name, mqs)
            except RemotingError as exc:
                log.debug("lock of %d queues on %s failed: %s", len(mqs), broker_name, exc)
                continue
            for mq in mqs:
                pq = self.process_queue_table.get(mq)
                if pq is None:
                    continue
                if mq in held:
                    pq.mark_locked()
                else:
                    pq.locked = False

    async def unlock_mq(self, mq: MessageQueue) -> None:
        driver = self.instance.driver
        try:
            addr = await driver.run(self.plans.broker_addr(mq.topic, mq.broker_name))
            await driver.invoke(Call(RequestCode.UNLOCK_BATCH_MQ, body=self._lock_body([mq]), addr=addr))
        except RemotingError as exc:
            log.debug("unlock of %s failed: %s", mq, exc)
