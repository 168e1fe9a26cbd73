"""BrokerContext: what a request processor may use of its broker.

The processors (``processors/*``) are handed a ``BrokerContext`` and never import the controller,
so the controller depends on the processors and not the other way round. ``BrokerController``
satisfies this Protocol; a test may pass anything that does. The list is exactly what the
processors use: the configuration and clock, the store (through its Protocol), the managers of
topics, offsets, subscription groups, clients and rebalance locks, the long-polling and delayed
delivery services, the stats, and four calls back into the broker.
"""

from __future__ import annotations

from typing import Protocol

from brokers.engine.broker.broker_stats import BrokerStats
from brokers.engine.broker.client_manager import ClientManager
from brokers.engine.broker.config_push import ConfigPush
from brokers.engine.broker.config import BrokerConfig
from brokers.engine.broker.consumer_offset_manager import ConsumerOffsetManager
from brokers.engine.broker.namesrv_api import RegisterResult
from brokers.engine.broker.pull_request_hold_service import PullRequestHoldService
from brokers.engine.broker.rebalance_lock_manager import RebalanceLockManager
from brokers.engine.broker.schedule_message_service import ScheduleMessageService
from brokers.engine.broker.subscription_group_manager import SubscriptionGroupManager
from brokers.engine.broker.topic_config_manager import TopicConfigManager
from brokers.engine.common.clock import Clock
from brokers.engine.store.file_io import FileIO
from brokers.engine.store.message_store import MessageStore


class BrokerContext(Protocol):
    config: BrokerConfig
    clock: Clock
    file_io: FileIO
    topic_config_manager: TopicConfigManager
    consumer_offset_manager: ConsumerOffsetManager
    subscription_group_manager: SubscriptionGroupManager
    client_manager: ClientManager
    rebalance_lock_manager: RebalanceLockManager
    broker_stats: BrokerStats
    pull_request_hold_service: PullRequestHoldService
    schedule_message_service: ScheduleMessageService | None
    config_push: ConfigPush

    @property
    def store(self) -> MessageStore:
        """The open store (processors are registered only once it is open)."""

    @property
    def addr(self) -> str:
        """The advertised address (brokerIP1:port)."""

    async def register_broker_all(self, *, oneway: bool = False) -> list[RegisterResult]:
        """Register with every name server now."""

    def request_register(self) -> None:
        """Re-register soon (after a topic change), without waiting for it."""

    def runtime_info(self) -> dict[str, str]:
        """The KVTable of GET_BROKER_RUNTIME_INFO."""

    def config_properties(self) -> dict[str, str]:
        """Broker and store settings under RocketMQ's property names (GET_BROKER_CONFIG)."""
