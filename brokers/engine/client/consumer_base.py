"""ConsumerBase: what PushConsumer and PullConsumer share (RocketMQ's MQConsumerInner and the common
half of DefaultMQPushConsumerImpl and DefaultLitePullConsumerImpl).

A consumer of one group: its settings (strategy, message model, consume-from-where), its
subscriptions, and, once started, its share of a client instance (:mod:`.client_instance`), its
pull plans, its offset store (on the brokers in clustering mode, in a local file in broadcasting
mode, :mod:`.offset_store`) and its :class:`~.rebalance.RebalanceImpl`. The base runs the
lifecycle (``start``: routes, heartbeat, first rebalance; ``shutdown``: stop fetching, commit the
held queues' offsets, unregister) and answers the client instance as a ConsumerMember (heartbeat
data, rebalance, offset persistence, running info). Routes the instance polls are handed to the
pull plans, and a failed broker address makes the instance poll at once, so a consumer follows
its broker group's master away to a slave and back (:mod:`.broker_addressing`).

What a subclass adds is how it fetches: it is the RebalanceHost (``on_queue_added``,
``remove_unnecessary_message_queue``) and may extend the hooks ``_check_startable``,
``_build_fetching``, ``_after_start``, ``_stop_fetching``, ``_close_fetching`` and
``_unlock_held_queues``.
"""

from __future__ import annotations

import abc
import logging
from typing import Any, TypeVar

from brokers.engine.client.admin_types import SubscriptionData, TopicRouteData
from brokers.engine.client.allocation import AllocateMessageQueueAveragely, AllocateMessageQueueStrategy
from brokers.engine.client.client_config import ClientConfig, ConsumerConfig
from brokers.engine.client.client_instance import MQClientInstance
from brokers.engine.client.consume_service import ConsumeCounters
from brokers.engine.client.errors import CLIENT_ERROR, MQClientError
from brokers.engine.client.credentials import acl_signer
from brokers.engine.client.mq_client_manager import acquire_client_instance, default_instance_name
from brokers.engine.client.offset_store import LocalFileOffsetStore, RemoteBrokerOffsetStore
from brokers.engine.client.process_queue import ProcessQueue
from brokers.engine.client.puller import SUB_ALL, PullPlans, build_subscription
from brokers.engine.client.rebalance import CONSUME_FROM_WHERE, RebalanceImpl
from brokers.engine.common import json_compat
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.common.subscription import EXPRESSION_TAG
from brokers.engine.common.constants import MQ_VERSION_NAME
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.topic_validator import validate_group, validate_topic
from brokers.engine.remoting.tls import TlsConfig

__all__ = ["ConsumerBase", "normalize_consume_from_where", "normalize_message_model"]

log = logging.getLogger("brokers.engine.client")

C = TypeVar("C", bound="ConsumerBase")


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


class ConsumerBase(abc.ABC):
    """A consumer of one group, without its way of fetching; see the module docstring."""

    consume_type = ""  # CONSUME_PASSIVELY (push) or CONSUME_ACTIVELY (pull), as heartbeats carry it
    orderly = False

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
        self.group = validate_group(group)
        self.signer = acl_signer(access_key, secret_key)  # ACL: every request signed with this account
        self.tls = tls  # connections of the client instance speak TLS (remoting/tls.py)
        self.namesrv_addr = namesrv_addr
        self.strategy: AllocateMessageQueueStrategy = strategy or AllocateMessageQueueAveragely()
        self.message_model = normalize_message_model(message_model)
        self.consume_from_where = normalize_consume_from_where(consume_from_where)
        # Java keeps "DEFAULT" for broadcasting (so the local offset file survives restarts), pid#nanotime otherwise
        self.instance_name = instance_name or (
            "DEFAULT" if self.message_model == "BROADCASTING" else default_instance_name()
        )
        self.config = config or ConsumerConfig()
        self.client_config = client_config
        self.clock = clock
        self.subscriptions: dict[str, SubscriptionData] = {}
        self.start_timestamp = 0
        self._instance: MQClientInstance | None = None
        self._plans: PullPlans | None = None
        self.offset_store: RemoteBrokerOffsetStore | LocalFileOffsetStore | None = None
        self.rebalance: RebalanceImpl | None = None
        self._running = False

    @property
    def clustering(self) -> bool:
        return self.message_model == "CLUSTERING"

    # -- subscriptions ------------------------------------------------------------------------

    def subscribe(self, topic: str, expression: str = SUB_ALL, expression_type: str = EXPRESSION_TAG) -> None:
        """Consume ``topic``'s messages matching ``*`` or ``TagA || TagB`` (before start, or while running),
        or with ``expression_type="SQL92"`` a selector such as ``a > 5 AND TAGS = 'x'`` (the brokers need
        enable_property_filter)."""
        validate_topic(topic)
        self.subscriptions[topic] = build_subscription(topic, expression, self.clock.now_ms(), expression_type)
        if self._instance is not None:
            self._apply_subscriptions()
            self._instance.call(self._after_subscription_change())

    def unsubscribe(self, topic: str) -> None:
        self.subscriptions.pop(topic, None)
        if self._instance is not None:
            self._apply_subscriptions()
            self._instance.call(self._after_subscription_change())

    def _all_subscriptions(self) -> dict[str, SubscriptionData]:
        """The subscriptions rebalanced and announced (a push consumer adds its retry topic)."""
        return dict(self.subscriptions)

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

    def start(self: C) -> C:
        if self._instance is not None:
            return self
        self._check_startable()
        if not self.subscriptions:
            raise MQClientError(CLIENT_ERROR, "subscribe to a topic before start()")
        self.start_timestamp = self.clock.now_ms()
        instance = acquire_client_instance(
            self.namesrv_addr, self.instance_name, self.client_config, self.signer, self.tls
        )
        self._build(instance)
        try:
            instance.register_consumer(self)
        except ValueError:
            self._close_fetching(0)
            instance.release()
            raise
        self._instance = instance
        self._running = True
        instance.call(self._start_async(), timeout_s=60.0)
        return self

    def _check_startable(self) -> None:
        """Raise MQClientError when something the subclass needs is missing."""

    def _build(self, instance: MQClientInstance) -> None:
        self._plans = PullPlans(
            instance.namesrv_addrs,
            self.group,
            clock=self.clock,
            instance_name=self.instance_name,
            timeout_s=instance.config.api_timeout_s,
            consume_from_where=self.consume_from_where,
            message_model=self.message_model,
        )
        self._plans.on_unreachable = instance.refresh_routes_soon  # a dead master: see the route change at once
        if self.clustering:
            self.offset_store = RemoteBrokerOffsetStore(instance, self._plans)
        else:
            self.offset_store = LocalFileOffsetStore(self.config.local_offset_store_dir, instance.client_id, self.group)
            self.offset_store.load()
        self.rebalance = RebalanceImpl(
            self,
            instance,
            self._plans,
            self.offset_store,
            group=self.group,
            strategy=self.strategy,
            clustering=self.clustering,
            orderly=self.orderly,
            consume_from_where=self.consume_from_where,
            consume_timestamp_ms=self.config.consume_timestamp_ms,
            clock=self.clock,
        )
        self._apply_subscriptions()
        self._build_fetching(instance)

    def _build_fetching(self, instance: MQClientInstance) -> None:
        """Build what the subclass fetches and consumes with (before the instance knows the consumer)."""

    async def _start_async(self) -> None:
        instance = self._running_instance()
        for topic in self._all_subscriptions():
            await instance.update_topic_route(topic)
        await instance.send_heartbeat_to_all_brokers()
        await self._after_start()

    async def _after_start(self) -> None:
        """The first rebalance (a subclass may start timers of its own after it)."""
        assert self.rebalance is not None
        await self.rebalance.do_rebalance()

    def shutdown(self) -> None:
        """Stop fetching, let work in progress finish, commit offsets, unlock (orderly), unregister."""
        instance = self._instance
        if instance is None:
            return
        self._running = False
        instance.unregister_consumer(self.group)
        instance.call(self._stop_fetching())
        self._close_fetching(self.config.await_termination_s)
        try:
            instance.call(self._shutdown_async(), timeout_s=30.0)
        except Exception as exc:
            log.warning("shutdown of consumer %s incomplete: %s", self.group, exc)
        self._instance = None
        instance.release()

    async def _stop_fetching(self) -> None:
        """Stop the subclass's fetching tasks (on the instance's loop)."""

    def _close_fetching(self, await_termination_s: float) -> None:
        """Stop the subclass's consuming threads, waiting up to ``await_termination_s`` for work in progress."""

    async def _shutdown_async(self) -> None:
        assert self.rebalance is not None and self.offset_store is not None
        instance = self._running_instance()
        async with self.rebalance.lock:
            mqs = set(self.rebalance.process_queue_table)
            await self.offset_store.persist_all(mqs)
            await self._unlock_held_queues(mqs)
            for pq in self.rebalance.process_queue_table.values():
                pq.dropped = True
        await instance.unregister_client(consumer_group=self.group)

    async def _unlock_held_queues(self, mqs: set[MessageQueue]) -> None:
        """Give the brokers' queue locks back at shutdown (orderly consumers)."""

    def __enter__(self: C) -> C:
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

    def assigned_queues(self) -> set[MessageQueue]:
        """The queues held now (the process-queue table's keys)."""
        return set(self.rebalance.process_queue_table) if self.rebalance is not None else set()

    def committed_offset(self, mq: MessageQueue) -> int:
        """The offset this consumer would commit for ``mq`` now (-1 when none)."""
        return self.offset_store.read_from_memory(mq) if self.offset_store is not None else -1

    # -- RebalanceHost (the subclass's) -------------------------------------------------------

    @abc.abstractmethod
    def on_queue_added(self, mq: MessageQueue, pq: ProcessQueue, next_offset: int) -> None:
        """A queue was allocated to this consumer; it starts at ``next_offset``."""

    @abc.abstractmethod
    async def remove_unnecessary_message_queue(self, mq: MessageQueue, pq: ProcessQueue) -> bool:
        """A queue is no longer this consumer's: let it go; False keeps it (its lock could not be released)."""

    # -- ClientMember / ConsumerMember --------------------------------------------------------

    def topics(self) -> set[str]:
        return set(self._all_subscriptions())

    def on_route(self, topic: str, route: TopicRouteData) -> bool:
        if self._plans is not None:
            self._plans.put_route(topic, route)  # pulls and offsets address the group by the newest route
        return self.rebalance.on_route(topic, route) if self.rebalance is not None else False

    def consumer_data(self) -> dict[str, Any]:
        return {
            "consumeFromWhere": self.consume_from_where,
            "consumeType": self.consume_type,
            "groupName": self.group,
            "messageModel": self.message_model,
            "subscriptionDataSet": [s.to_json() for s in self._all_subscriptions().values()],
            "unitMode": False,
        }

    async def do_rebalance(self) -> None:
        if self._running and self.rebalance is not None:
            await self.rebalance.do_rebalance()

    async def persist_offsets(self) -> None:
        if self.rebalance is not None and self.offset_store is not None:
            await self.offset_store.persist_all(set(self.rebalance.process_queue_table))

    def _consume_counters(self) -> ConsumeCounters | None:
        """The listener-call counts of the running info's statusTable (None: no listener)."""
        return None

    def running_info_body(self) -> bytes:
        """ConsumerRunningInfo (§4.14): properties (the strategy among them), subscriptions, held queues."""
        assert self.rebalance is not None and self.offset_store is not None
        counters = self._consume_counters()
        properties = {
            "PROP_NAMESERVER_ADDR": self.namesrv_addr,
            "PROP_CONSUME_TYPE": self.consume_type,
            "PROP_CONSUMEORDERLY": str(self.orderly).lower(),
            "PROP_THREADPOOL_CORE_SIZE": str(self.config.consume_thread_min),
            "PROP_CLIENT_VERSION": MQ_VERSION_NAME,
            "PROP_CONSUMER_START_TIMESTAMP": str(self.start_timestamp),
            "allocateMessageQueueStrategy": getattr(self.strategy, "name", type(self.strategy).__name__),
            "messageModel": self.message_model,
            "consumeFromWhere": self.consume_from_where,
            "consumeThreadMin": str(self.config.consume_thread_min),
            "consumeThreadMax": str(self.config.consume_thread_max),
            "pullBatchSize": str(self.config.pull_batch_size),
            "maxReconsumeTimes": str(self.config.max_reconsume_times),
        }
        mq_table = {
            mq: pq.info(self.offset_store.read_from_memory(mq))
            for mq, pq in list(self.rebalance.process_queue_table.items())
        }
        status_table = {
            topic: {
                "pullRT": 0.0,
                "pullTPS": 0.0,
                "consumeRT": 0.0,
                "consumeOKTPS": 0.0,
                "consumeFailedTPS": 0.0,
                "consumeFailedMsgs": counters.failed if counters else 0,
            }
            for topic in self.subscriptions
        }
        info = {
            "properties": properties,
            "subscriptionSet": [s.to_json() for s in self._all_subscriptions().values()],
            "mqTable": mq_table,
            "statusTable": status_table,
        }
        return json_compat.dumps(info).encode("utf-8")
