"""PushConsumer: RocketMQ's DefaultMQPushConsumer over the wire protocol.

::

    consumer = PushConsumer("orders-consumer", "127.0.0.1:9876")        # strategy: AVG by default
    consumer.subscribe("Orders", "TagA || TagB")
    consumer.register_listener(lambda msgs: ConsumeStatus.CONSUME_SUCCESS)
    consumer.start()
    ...
    consumer.shutdown()

A long-polling pull loop per held queue feeds the queue's ProcessQueue; the consume service
(:mod:`.consume_service`) runs the listener in a thread pool. Which queues are held is decided
by :class:`~.rebalance.RebalanceImpl` at start, every ``rebalance_interval_s`` and when a broker
says the group changed. Offsets: on the brokers in clustering mode, in a local file in
broadcasting mode (:mod:`.offset_store`), committed every ``persist_consumer_offset_interval_s``,
when a queue is dropped and at shutdown (also piggybacked on pulls in clustering mode).
A broker's RESET_CONSUMER_CLIENT_OFFSET (an operator's reset by time) goes to
:meth:`PushConsumer.reset_offset`: the queues are dropped, their offsets overwritten and
persisted, and a rebalance pulls them again from there.
A clustering consumer also consumes ``%RETRY%<group>``, where messages its listener asked to
reconsume come back. ``orderly=True`` consumes each queue in order, one listener call at a
time, holding the brokers' queue locks (LOCK_BATCH_MQ every ``lock_interval_s``). Heartbeats,
routes and the rebalance timer belong to the client instance (:mod:`.client_instance`).
"""
from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from typing import Any

from brokers.engine.client.admin_types import SubscriptionData, TopicRouteData
from brokers.engine.client.allocate import AllocateMessageQueueAveragely, AllocateStrategy
from brokers.engine.client.client_config import ClientConfig, ConsumerConfig
from brokers.engine.client.client_instance import MQClientInstance, acquire_client_instance, default_instance_name
from brokers.engine.client.consume_service import ConsumeMessageConcurrentlyService, ConsumeMessageOrderlyService
from brokers.engine.client.errors import CLIENT_ERROR, MQClientError
from brokers.engine.client.listener import MessageListener
from brokers.engine.client.offset_store import LocalFileOffsetStore, RemoteBrokerOffsetStore
from brokers.engine.client.process_queue import ProcessQueue
from brokers.engine.client.puller import SUB_ALL, PullPlans, PullStatus, build_subscription
from brokers.engine.client.rebalance import CONSUME_FROM_WHERE, RebalanceImpl
from brokers.engine.client.send_back import MessageBackSender
from brokers.engine.common import json_compat
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.common.constants import MQ_VERSION_NAME, RETRY_GROUP_TOPIC_PREFIX
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.topic_validator import validate_group, validate_topic
from brokers.engine.remoting.errors import RemotingError

__all__ = ["PushConsumer", "normalize_consume_from_where", "normalize_message_model"]

log = logging.getLogger("brokers.engine.client")


def normalize_message_model(value: str) -> str:
    model = str(value).upper()
    if model not in ("CLUSTERING", "BROADCASTING"):
        raise ValueError(f"message_model must be CLUSTERING or BROADCASTING, not {value!r}")
    return model


def normalize_consume_from_where(value: str) -> str:
    """Accept RocketMQ's enum names and the short LAST_OFFSET / FIRST_OFFSET / TIMESTAMP."""
    text = str(value).upper()
    if not text.startswith("CONSUME_FROM_"):
        text = "CONSUME_FROM_" + text
    if text not in CONSUME_FROM_WHERE:
        raise ValueError(f"unknown consume_from_where {value!r}")
    return text


class PushConsumer:
    """A consumer of one group that pulls for its listener; see the module docstring."""

    consume_type = "CONSUME_PASSIVELY"

    def __init__(self, group: str, namesrv_addr: str = "127.0.0.1:9876", strategy: AllocateStrategy | None = None,
                 message_model: str = "CLUSTERING", consume_from_where: str = "CONSUME_FROM_LAST_OFFSET",
                 instance_name: str | None = None, *, orderly: bool = False, config: ConsumerConfig | None = None,
                 client_config: ClientConfig | None = None, clock: Clock = SYSTEM_CLOCK) -> None:
        self.group = validate_group(group)
        self.namesrv_addr = namesrv_addr
        self.strategy: AllocateStrategy = strategy or AllocateMessageQueueAveragely()
        self.message_model = normalize_message_model(message_model)
        self.consume_from_where = normalize_consume_from_where(consume_from_where)
        # Java keeps "DEFAULT" for broadcasting (so the local offset file survives restarts), pid#nanotime otherwise
        self.instance_name = instance_name or ("DEFAULT" if self.message_model == "BROADCASTING" else default_instance_name())
        self.orderly = orderly
        self.config = config or ConsumerConfig()
        self.client_config = client_config
        self.clock = clock
        self.subscriptions: dict[str, SubscriptionData] = {}
        self.listener: MessageListener | None = None
        self.start_timestamp = 0
        self._instance: MQClientInstance | None = None
        self._plans: PullPlans | None = None
        self.offset_store: RemoteBrokerOffsetStore | LocalFileOffsetStore | None = None
        self.rebalance: RebalanceImpl | None = None
        self.consume_service: ConsumeMessageConcurrentlyService | ConsumeMessageOrderlyService | None = None
        self._pull_tasks: dict[MessageQueue, asyncio.Task] = {}
        self._lock_task: asyncio.Task | None = None
        self._running = False
        self._paused = False  # suspend(): pull loops idle until resume()

    @property
    def clustering(self) -> bool:
        return self.message_model == "CLUSTERING"

    # -- configuration ------------------------------------------------------------------------

    def subscribe(self, topic: str, expression: str = SUB_ALL) -> None:
        """Consume ``topic``'s messages matching ``*`` or ``TagA || TagB`` (before start, or while running)."""
        validate_topic(topic)
        self.subscriptions[topic] = build_subscription(topic, expression, self.clock.now_ms())
        if self._instance is not None:
            self._apply_subscriptions()
            self._instance.call(self._after_subscription_change())

    def unsubscribe(self, topic: str) -> None:
        self.subscriptions.pop(topic, None)
        if self._instance is not None:
            self._apply_subscriptions()
            self._instance.call(self._after_subscription_change())

    def register_listener(self, listener: MessageListener, *, orderly: bool | None = None) -> None:
        """Set the listener, ``fn(list[ReceivedMessage]) -> ConsumeStatus``; ``orderly`` switches the mode."""
        if self._running:
            raise MQClientError(CLIENT_ERROR, "register the listener before start()")
        self.listener = listener
        if orderly is not None:
            self.orderly = orderly

    register_message_listener = register_listener

    def _all_subscriptions(self) -> dict[str, SubscriptionData]:
        subs = dict(self.subscriptions)
        if self.clustering:
            retry = RETRY_GROUP_TOPIC_PREFIX + self.group
            subs.setdefault(retry, build_subscription(retry, SUB_ALL, self.start_timestamp or self.clock.now_ms()))
        return subs

    def _apply_subscriptions(self) -> None:
        subs = self._all_subscriptions()
        assert self._plans is not None and self.rebalance is not None
        self._plans.subscriptions = dict(subs)
        self.rebalance.subscription_inner = dict(subs)

    async def _after_subscription_change(self) -> None:
        instance = self._running_instance()
        for topic in self._all_subscriptions():
            await instance.update_topic_route(topic)
        await instance.send_heartbeat_to_all_brokers()
        instance.rebalance_immediately()

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> PushConsumer:
        if self._instance is not None:
            return self
        if self.listener is None:
            raise MQClientError(CLIENT_ERROR, "register a listener before start()")
        if not self.subscriptions:
            raise MQClientError(CLIENT_ERROR, "subscribe to a topic before start()")
        self.start_timestamp = self.clock.now_ms()
        instance = acquire_client_instance(self.namesrv_addr, self.instance_name, self.client_config)
        self._build(instance)
        try:
            instance.register_consumer(self)
        except ValueError:
            self.consume_service.shutdown(0)  # type: ignore[union-attr]
            instance.release()
            raise
        self._instance = instance
        self._running = True
        instance.call(self._start_async(), timeout_s=60.0)
        return self

    def _build(self, instance: MQClientInstance) -> None:
        api_timeout = instance.config.api_timeout_s
        self._plans = PullPlans(instance.namesrv_addrs, self.group, clock=self.clock, instance_name=self.instance_name,
                                timeout_s=api_timeout, consume_from_where=self.consume_from_where, message_model=self.message_model)
        if self.clustering:
            self.offset_store = RemoteBrokerOffsetStore(instance, self._plans)
        else:
            self.offset_store = LocalFileOffsetStore(self.config.local_offset_store_dir, instance.client_id, self.group)
            self.offset_store.load()
        self.rebalance = RebalanceImpl(self, instance, self._plans, self.offset_store, group=self.group, strategy=self.strategy,
                                       clustering=self.clustering, orderly=self.orderly, consume_from_where=self.consume_from_where,
                                       consume_timestamp_ms=self.config.consume_timestamp_ms)
        self._apply_subscriptions()
        sender = MessageBackSender(instance, self._plans, self.group, self.config.max_reconsume_times)
        assert self.listener is not None
        args = (instance, self.group, self.listener, self.config, self.offset_store, sender, self.clustering)
        if self.orderly:
            self.consume_service = ConsumeMessageOrderlyService(*args, lock_queue=self.rebalance.lock_mq)
        else:
            self.consume_service = ConsumeMessageConcurrentlyService(*args)

    async def _start_async(self) -> None:
        instance = self._running_instance()
        for topic in self._all_subscriptions():
            await instance.update_topic_route(topic)
        await instance.send_heartbeat_to_all_brokers()
        assert self.rebalance is not None
        await self.rebalance.do_rebalance()
        if self.orderly and self.clustering:
            self._lock_task = asyncio.get_running_loop().create_task(self._lock_loop())

    async def _lock_loop(self) -> None:
        assert self.rebalance is not None
        while True:
            await asyncio.sleep(self.config.lock_interval_s)
            await self.rebalance.lock_all()

    def shutdown(self) -> None:
        """Stop pulling, let listener calls finish, commit offsets, unlock (orderly), unregister."""
        instance = self._instance
        if instance is None:
            return
        self._running = False
        instance.unregister_consumer(self.group)
        instance.call(self._stop_pulling())
        assert self.consume_service is not None
        self.consume_service.shutdown(self.config.await_termination_s)
        try:
            instance.call(self._shutdown_async(), timeout_s=30.0)
        except Exception as exc:
            log.warning("shutdown of consumer %s incomplete: %s", self.group, exc)
        self._instance = None
        instance.release()

    async def _stop_pulling(self) -> None:
        tasks = list(self._pull_tasks.values())
        if self._lock_task is not None:
            tasks.append(self._lock_task)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._pull_tasks.clear()

    async def _shutdown_async(self) -> None:
        assert self.rebalance is not None and self.offset_store is not None
        instance = self._running_instance()
        async with self.rebalance.lock:
            mqs = set(self.rebalance.process_queue_table)
            await self.offset_store.persist_all(mqs)
            if self.orderly and self.clustering:
                await asyncio.gather(*(self.rebalance.unlock_mq(mq) for mq in mqs))
            for pq in self.rebalance.process_queue_table.values():
                pq.dropped = True
        await instance.unregister_client(consumer_group=self.group)

    def __enter__(self) -> PushConsumer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.shutdown()

    def _running_instance(self) -> MQClientInstance:
        if self._instance is None:
            raise MQClientError(CLIENT_ERROR, f"consumer {self.group} is not started")
        return self._instance

    @property
    def client_id(self) -> str:
        return self._running_instance().client_id

    def suspend(self) -> None:
        """Pause every pull loop (RocketMQ's DefaultMQPushConsumerImpl.suspend); held queues stay held."""
        self._paused = True

    def resume(self) -> None:
        self._paused = False

    @property
    def paused(self) -> bool:
        return self._paused

    async def reset_offset(self, topic: str, offset_table: dict[MessageQueue, int]) -> set[MessageQueue]:
        """Move this consumer's held queues of ``topic`` found in ``offset_table`` to those offsets.

        RocketMQ 4.x's MQClientInstance.resetOffset: suspend, mark the queues' process queues
        dropped (their pulls stop, their listener calls in progress commit nothing), wait for
        those calls, overwrite the offsets (not increase-only), persist them, remove the process
        queues, resume. The next rebalance takes the queues again from the reset offsets. Queues
        held by other members are theirs to reset. Returns the queues reset.
        """
        if not self._running or self.rebalance is None or self.offset_store is None:
            return set()
        rebalance = self.rebalance
        targets: dict[MessageQueue, ProcessQueue] = {}
        self.suspend()
        try:
            async with rebalance.lock:  # no rebalance while the table changes under it
                targets = {mq: pq for mq, pq in rebalance.process_queue_table.items() if mq.topic == topic and mq in offset_table}
                for pq in targets.values():
                    pq.dropped = True
                tasks = [t for t in (self._pull_tasks.pop(mq, None) for mq in targets) if t is not None]
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                await self._await_listener_calls(targets.values())
                for mq, pq in targets.items():
                    offset = int(offset_table[mq])
                    try:
                        await self._reset_queue(mq, pq, offset)
                    except Exception:
                        log.exception("reset of %s to offset %d failed (group %s)", mq, offset, self.group)
                    if rebalance.process_queue_table.get(mq) is pq:
                        del rebalance.process_queue_table[mq]
                    log.info("reset-offset of %s: %s to offset %d", self.group, mq, offset)
        finally:
            self.resume()
        return set(targets)

    async def _await_listener_calls(self, pqs: Iterable[ProcessQueue]) -> None:
        """Wait (at most ``reset_offset_wait_s``) until no listener call of ``pqs`` is in progress."""
        pqs = list(pqs)
        deadline = time.monotonic() + self.config.reset_offset_wait_s
        while any(pq.inflight_consumes > 0 for pq in pqs):
            if time.monotonic() > deadline:
                log.warning("reset-offset of %s: listener calls still running after %.1fs", self.group, self.config.reset_offset_wait_s)
                return
            await asyncio.sleep(0.01)

    async def _reset_queue(self, mq: MessageQueue, pq: ProcessQueue, offset: int) -> None:
        """Overwrite, persist, forget (and, orderly, unlock) the offset of one dropped queue."""
        assert self.offset_store is not None and self.rebalance is not None
        store = self.offset_store
        if self.orderly and self.clustering:  # the listener call in progress commits under consume_lock: let it finish first
            got = await asyncio.get_running_loop().run_in_executor(None, pq.consume_lock.acquire, True, self.config.reset_offset_wait_s)
            try:
                store.update_offset(mq, offset, False)
                await store.persist(mq)
                store.remove_offset(mq)
                await self.rebalance.unlock_mq(mq)
            finally:
                if got:
                    pq.consume_lock.release()
            return
        store.update_offset(mq, offset, False)
        await store.persist(mq)
        store.remove_offset(mq)

    def assigned_queues(self) -> set[MessageQueue]:
        """The queues held now (the process-queue table's keys)."""
        return set(self.rebalance.process_queue_table) if self.rebalance is not None else set()

    def committed_offset(self, mq: MessageQueue) -> int:
        """The offset this consumer would commit for ``mq`` now (-1 when none)."""
        return self.offset_store.read_from_memory(mq) if self.offset_store is not None else -1

    # -- ClientMember / ConsumerMember --------------------------------------------------------

    def topics(self) -> set[str]:
        return set(self._all_subscriptions())

    def on_route(self, topic: str, route: TopicRouteData) -> bool:
        return self.rebalance.on_route(topic, route) if self.rebalance is not None else False

    def consumer_data(self) -> dict[str, Any]:
        return {
            "consumeFromWhere": self.consume_from_where, "consumeType": self.consume_type, "groupName": self.group,
            "messageModel": self.message_model, "subscriptionDataSet": [s.to_json() for s in self._all_subscriptions().values()],
            "unitMode": False,
        }

    async def do_rebalance(self) -> None:
        if self._running and self.rebalance is not None:
            await self.rebalance.do_rebalance()

    async def persist_offsets(self) -> None:
        if self.rebalance is not None and self.offset_store is not None:
            await self.offset_store.persist_all(set(self.rebalance.process_queue_table))

    def running_info_body(self) -> bytes:
        """ConsumerRunningInfo (§4.14): properties (the strategy among them), subscriptions, held queues."""
        assert self.rebalance is not None and self.offset_store is not None
        stats = self.consume_service.stats if self.consume_service is not None else None
        properties = {
            "PROP_NAMESERVER_ADDR": self.namesrv_addr, "PROP_CONSUME_TYPE": self.consume_type,
            "PROP_CONSUMEORDERLY": str(self.orderly).lower(), "PROP_THREADPOOL_CORE_SIZE": str(self.config.consume_thread_min),
            "PROP_CLIENT_VERSION": MQ_VERSION_NAME, "PROP_CONSUMER_START_TIMESTAMP": str(self.start_timestamp),
            "allocateMessageQueueStrategy": getattr(self.strategy, "name", type(self.strategy).__name__),
            "messageModel": self.message_model, "consumeFromWhere": self.consume_from_where,
            "consumeThreadMin": str(self.config.consume_thread_min), "consumeThreadMax": str(self.config.consume_thread_max),
            "pullBatchSize": str(self.config.pull_batch_size), "maxReconsumeTimes": str(self.config.max_reconsume_times),
        }
        mq_table = {mq: pq.info(self.offset_store.read_from_memory(mq)) for mq, pq in list(self.rebalance.process_queue_table.items())}
        status_table = {topic: {"pullRT": 0.0, "pullTPS": 0.0, "consumeRT": 0.0, "consumeOKTPS": 0.0, "consumeFailedTPS": 0.0,
                                "consumeFailedMsgs": stats.failed if stats else 0} for topic in self.subscriptions}
        info = {"properties": properties, "subscriptionSet": [s.to_json() for s in self._all_subscriptions().values()],
                "mqTable": mq_table, "statusTable": status_table}
        return json_compat.dumps(info).encode("utf-8")

    # -- RebalanceHost ------------------------------------------------------------------------

    def on_queue_added(self, mq: MessageQueue, pq: ProcessQueue, next_offset: int) -> None:
        old = self._pull_tasks.pop(mq, None)
        if old is not None:
            old.cancel()
        self._pull_tasks[mq] = asyncio.get_running_loop().create_task(self._pull_loop(mq, pq, next_offset))

    async def remove_unnecessary_message_queue(self, mq: MessageQueue, pq: ProcessQueue) -> bool:
        assert self.offset_store is not None and self.rebalance is not None
        task = self._pull_tasks.get(mq)
        if task is not None and task.done():
            self._pull_tasks.pop(mq, None)
        if self.orderly and self.clustering:
            got = await asyncio.get_running_loop().run_in_executor(None, pq.consume_lock.acquire, True, 1.0)
            if not got:
                pq.try_unlock_times += 1
                return False
            try:
                await self.offset_store.persist(mq)
                self.offset_store.remove_offset(mq)
                await self.rebalance.unlock_mq(mq)
            finally:
                pq.consume_lock.release()
            return True
        await self.offset_store.persist(mq)
        self.offset_store.remove_offset(mq)
        return True

    # -- pulling ------------------------------------------------------------------------------

    async def _pull_loop(self, mq: MessageQueue, pq: ProcessQueue, next_offset: int) -> None:
        """Pull ``mq`` from ``next_offset`` until the queue is dropped or the consumer stops."""
        instance = self._running_instance()
        plans, config = self._plans, self.config
        assert plans is not None and self.offset_store is not None and self.consume_service is not None
        try:
            while self._running and not pq.dropped:
                if self._paused:
                    await asyncio.sleep(0.05)
                    continue
                if pq.msg_count > config.pull_threshold_for_queue:
                    await asyncio.sleep(config.flow_control_delay_s)
                    continue
                if self.orderly and self.clustering and not pq.locked:
                    await asyncio.sleep(config.pull_delay_on_error_s)
                    continue
                sub = plans.subscriptions.get(mq.topic)
                if sub is None:
                    return
                commit = self.offset_store.read_from_memory(mq) if self.clustering else -1
                try:
                    result = await instance.driver.run(plans.pull(mq, next_offset, config.pull_batch_size, sub.sub_string,
                                                                  config.pull_suspend_ms, commit if commit > 0 else None))
                except RemotingError as exc:
                    log.debug("pull of %s failed: %s", mq, exc)
                    await asyncio.sleep(config.pull_delay_on_error_s)
                    continue
                if pq.dropped:
                    return
                pq.last_pull_timestamp = time.time()
                next_offset = result.next_begin_offset
                if result.status is PullStatus.FOUND and result.messages:
                    msgs = list(result.messages)
                    self.consume_service.submit_consume_request(msgs, pq, mq, pq.put_message(msgs))
                elif result.status is PullStatus.OFFSET_ILLEGAL:
                    log.warning("pull of %s: offset illegal, moving to %d", mq, next_offset)
                    self.offset_store.update_offset(mq, next_offset, False)
                    await self.offset_store.persist(mq)
                elif pq.msg_count == 0:  # nothing held: the offset may move past filtered-out messages
                    self.offset_store.update_offset(mq, next_offset, True)
        finally:
            if self._pull_tasks.get(mq) is asyncio.current_task():
                del self._pull_tasks[mq]
