"""PushConsumer: RocketMQ's DefaultMQPushConsumer over the wire protocol.

::

    consumer = PushConsumer("orders-consumer", "127.0.0.1:9876")        # strategy: AVG by default
    consumer.subscribe("Orders", "TagA || TagB")
    consumer.register_listener(lambda msgs: ConsumeConcurrentlyStatus.CONSUME_SUCCESS)
    consumer.start()
    ...
    consumer.shutdown()

What every consumer has (subscriptions, rebalance, offsets, lifecycle) is :class:`~.consumer_base.ConsumerBase`'s.
A push consumer adds a long-polling pull loop per held queue, feeding the queue's ProcessQueue,
and a consume service (:mod:`.consume_service`) running the listener in a thread pool. Offsets
are also committed when a queue is dropped (and piggybacked on pulls in clustering mode).

A dropped queue is given up at once, as RocketMQ gives up a dropped ProcessQueue: its pull loop
is cancelled (a pull in flight or parked in a broker's long polling is abandoned), whatever a
pull of it still returns is discarded, and the consume service hands none of its messages to the
listener. In orderly mode this is what keeps one consumer per queue.

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
from collections.abc import Iterable
from typing import Any

from brokers.engine.client.admin_types import SubscriptionData
from brokers.engine.client.allocation import AllocateMessageQueueStrategy
from brokers.engine.client.client_config import ClientConfig, ConsumerConfig
from brokers.engine.client.client_instance import MQClientInstance
from brokers.engine.client.consume_service import (
    ConsumeCounters,
    ConsumeMessageConcurrentlyService,
    ConsumeMessageOrderlyService,
)
from brokers.engine.client.consumer_base import ConsumerBase
from brokers.engine.client.errors import CLIENT_ERROR, MQClientError
from brokers.engine.client.listener import MessageListener
from brokers.engine.client.process_queue import ProcessQueue
from brokers.engine.client.producer import trace_sender_factory
from brokers.engine.client.puller import SUB_ALL, PullStatus, build_subscription
from brokers.engine.client.send_back import MessageBackSender
from brokers.engine.client.trace_dispatcher import new_tracer
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.common.constants import RETRY_GROUP_TOPIC_PREFIX
from brokers.engine.common.message import MessageExt
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.remoting.errors import RemotingError
from brokers.engine.remoting.tls import TlsConfig

__all__ = ["PushConsumer"]

log = logging.getLogger("brokers.engine.client")


class PushConsumer(ConsumerBase):
    """A consumer of one group that pulls for its listener; see the module docstring."""

    consume_type = "CONSUME_PASSIVELY"

    def __init__(
        self,
        group: str,
        namesrv_addr: str = "127.0.0.1:9876",
        strategy: AllocateMessageQueueStrategy | None = None,
        message_model: str = "CLUSTERING",
        consume_from_where: str = "CONSUME_FROM_LAST_OFFSET",
        instance_name: str | None = None,
        *,
        orderly: bool = False,
        config: ConsumerConfig | None = None,
        client_config: ClientConfig | None = None,
        clock: Clock = SYSTEM_CLOCK,
        access_key: str | None = None,
        secret_key: str | None = None,
        tls: TlsConfig | None = None,
        trace_enabled: bool = False,
        trace_topic: str | None = None,
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
        # Message trace (trace_dispatcher.py): SubBefore/SubAfter records of listener calls, sent in the background.
        self.tracer = new_tracer(
            trace_enabled, trace_topic, group, trace_sender_factory(namesrv_addr, access_key, secret_key, tls)
        )
        self.orderly = orderly
        self.listener: MessageListener | None = None
        self.consume_service: ConsumeMessageConcurrentlyService | ConsumeMessageOrderlyService | None = None
        self._pull_tasks: dict[MessageQueue, asyncio.Task[None]] = {}
        self._lock_task: asyncio.Task[None] | None = None
        self._paused = False  # suspend(): pull loops idle until resume()

    def register_listener(self, listener: MessageListener, *, orderly: bool | None = None) -> None:
        """Set the listener, ``fn(list[ReceivedMessage]) -> ConsumeConcurrentlyStatus`` (orderly: ConsumeOrderlyStatus);
        ``orderly`` switches the mode."""
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

    # -- lifecycle ----------------------------------------------------------------------------

    def _check_startable(self) -> None:
        if self.listener is None:
            raise MQClientError(CLIENT_ERROR, "register a listener before start()")

    def _build_fetching(self, instance: MQClientInstance) -> None:
        assert (
            self._plans is not None
            and self.offset_store is not None
            and self.rebalance is not None
            and self.listener is not None
        )
        sender = MessageBackSender(instance, self._plans, self.group, self.config.max_reconsume_times)
        args = (instance, self.group, self.listener, self.config, self.offset_store, sender, self.clustering)
        if self.orderly:
            self.consume_service = ConsumeMessageOrderlyService(
                *args, clock=self.clock, lock_queue=self.rebalance.lock_mq
            )
        else:
            self.consume_service = ConsumeMessageConcurrentlyService(*args, clock=self.clock)
        self.consume_service.tracer = self.tracer
        if self.tracer is not None:
            self.tracer.start()

    async def _after_start(self) -> None:
        await super()._after_start()
        if self.orderly and self.clustering:
            self._lock_task = asyncio.get_running_loop().create_task(self._lock_loop())

    async def _lock_loop(self) -> None:
        assert self.rebalance is not None
        while True:
            await asyncio.sleep(self.config.lock_interval_s)
            await self.rebalance.lock_all()

    async def _stop_fetching(self) -> None:
        tasks = list(self._pull_tasks.values())
        if self._lock_task is not None:
            tasks.append(self._lock_task)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._pull_tasks.clear()

    def _close_fetching(self, await_termination_s: float) -> None:
        if self.consume_service is not None:
            self.consume_service.shutdown(await_termination_s)
        if self.tracer is not None:
            self.tracer.shutdown()

    async def _unlock_held_queues(self, mqs: set[MessageQueue]) -> None:
        if self.orderly and self.clustering:
            assert self.rebalance is not None
            await asyncio.gather(*(self.rebalance.unlock_mq(mq) for mq in mqs))

    def _consume_counters(self) -> ConsumeCounters | None:
        return self.consume_service.stats if self.consume_service is not None else None

    async def consume_message_directly(self, msg: MessageExt, broker_name: str) -> dict[str, Any]:
        """CONSUME_MESSAGE_DIRECTLY (309): the listener's answer to ``msg``, run once in a worker thread (it may block)."""
        service = self.consume_service
        direct = getattr(service, "consume_message_directly", None)
        if direct is None:
            raise RuntimeError(f"consumer group {self.group} does not consume messages directly")
        return await asyncio.to_thread(direct, msg, broker_name)

    # -- suspend / resume, offset reset ---------------------------------------------------------

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
                targets = {
                    mq: pq
                    for mq, pq in rebalance.process_queue_table.items()
                    if mq.topic == topic and mq in offset_table
                }
                for pq in targets.values():
                    pq.dropped = True
                await self._cancel_pulls(targets)
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
        loop = asyncio.get_running_loop()  # a deadline on the clock the sleeps below run on
        deadline = loop.time() + self.config.reset_offset_wait_s
        while any(pq.inflight_consumes > 0 for pq in pqs):
            if loop.time() > deadline:
                log.warning(
                    "reset-offset of %s: listener calls still running after %.1fs",
                    self.group,
                    self.config.reset_offset_wait_s,
                )
                return
            await asyncio.sleep(0.01)

    async def _reset_queue(self, mq: MessageQueue, pq: ProcessQueue, offset: int) -> None:
        """Overwrite, persist, forget (and, orderly, unlock) the offset of one dropped queue."""
        assert self.offset_store is not None and self.rebalance is not None
        store = self.offset_store
        if (
            self.orderly and self.clustering
        ):  # the listener call in progress commits under consume_lock: let it finish first
            got = await asyncio.get_running_loop().run_in_executor(
                None, pq.consume_lock.acquire, True, self.config.reset_offset_wait_s
            )
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

    # -- RebalanceHost ------------------------------------------------------------------------

    def on_queue_added(self, mq: MessageQueue, pq: ProcessQueue, next_offset: int) -> None:
        old = self._pull_tasks.pop(mq, None)
        if old is not None:
            old.cancel()
        self._pull_tasks[mq] = asyncio.get_running_loop().create_task(self._pull_loop(mq, pq, next_offset))

    async def remove_unnecessary_message_queue(self, mq: MessageQueue, pq: ProcessQueue) -> bool:
        """Give up a queue the rebalance took away (``pq`` is already dropped): stop its pulls, commit its offset."""
        assert self.offset_store is not None and self.rebalance is not None
        await self._cancel_pulls([mq])
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

    async def _cancel_pulls(self, mqs: Iterable[MessageQueue]) -> None:
        """Cancel the pull loops of dropped queues, with their pull in flight or parked by a broker:
        the answer of an abandoned pull is never read. (A queue's loop feeds its one process queue:
        a queue is added again only once its dropped process queue left the table.)"""
        tasks = [
            t
            for t in (self._pull_tasks.pop(mq, None) for mq in mqs)
            if t is not None and t is not asyncio.current_task()
        ]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

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
                    result = await instance.driver.run(
                        plans.pull(
                            mq,
                            next_offset,
                            config.pull_batch_size,
                            sub.sub_string,
                            config.pull_suspend_ms,
                            commit if commit > 0 else None,
                        )
                    )
                except RemotingError as exc:
                    log.debug("pull of %s failed: %s", mq, exc)
                    await asyncio.sleep(config.pull_delay_on_error_s)
                    continue
                except Exception:  # a bug must not end the queue's pulls for good (RocketMQ retries on any Throwable)
                    log.exception("pull of %s failed unexpectedly; retrying", mq)
                    await asyncio.sleep(config.pull_delay_on_error_s)
                    continue
                if (
                    pq.dropped or not self._running
                ):  # RocketMQ's isDropped() when the pull returns: the answer is discarded
                    log.debug(
                        "pull of %s returned after the queue was dropped: %d message(s) discarded",
                        mq,
                        len(result.messages),
                    )
                    return
                pq.last_pull_timestamp = self.clock.now_ms()
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
