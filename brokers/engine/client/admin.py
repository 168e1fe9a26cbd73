"""MQAdminClient: every admin call the console needs, over the RocketMQ 4.x wire protocol.

Each operation is written once, as a plan in :class:`~brokers.engine.client.admin_plans.AdminPlans`
(a generator that yields the requests it needs and receives the replies; see
:mod:`brokers.engine.client.plan`). Two thin drivers (:mod:`brokers.engine.client.driver`) run
these plans:

- :class:`AsyncDriver` over :class:`~brokers.engine.remoting.client.RemotingClient` (asyncio;
  fanouts run concurrently), behind :class:`MQAdminClient`;
- :class:`BlockingDriver` over :class:`~brokers.engine.remoting.blocking.BlockingRemotingClient`
  (thread-safe, for Django and Celery), behind :class:`BlockingMQAdminClient`.

A call without an address goes to the name servers: each is tried in turn, starting from the
last one that answered, until one answers. Failures are all :class:`RemotingError` subclasses:
:class:`MQBrokerError` for a non-success response (carrying ``code`` and ``remark``),
:class:`MQClientError` for client-side refusals, and the transport's RemotingConnectError /
RemotingTimeoutError when nobody answered. Illegal topic or group names and topic configs are
refused before any request leaves, with InvalidNameError / InvalidTopicConfigError (ValueError).
Results are frozen dataclasses (:mod:`brokers.engine.client.admin_types`); bodies are read with
the tolerant fastjson reader (:mod:`brokers.engine.client.admin_bodies`).

This module also re-exports the names of those modules that were defined here before the split,
so ``from brokers.engine.client.admin import ...`` keeps working.
"""

from __future__ import annotations

from collections.abc import Iterable

from brokers.engine.client.admin_bodies import (  # noqa: F401 (re-exported)
    decode_offset_msg_id,
    inflate_bodies,
    key_matches,
    message_queue_from_key,
    parse_broker_data,
    parse_cluster_info,
    parse_connections,
    parse_consumer_running_info,
    parse_kv_table,
    parse_subscription_table,
    parse_topic_list,
    parse_topic_route,
)
from brokers.engine.client.credentials import acl_signer
from brokers.engine.client.admin_plans import MAX_TIMESTAMP, ORDER_TOPIC_CONFIG, AdminPlans  # noqa: F401 (re-exported)
from brokers.engine.client.admin_types import (  # noqa: F401 (re-exported)
    BrokerData,
    BrokerInfo,
    ClusterInfo,
    ConsumerConnection,
    ConsumerRunningInfo,
    ConsumeStats,
    ConsumeStatus,
    Connection,
    OffsetWrapper,
    ProcessQueueInfo,
    ProducerConnection,
    QueueData,
    SubscriptionData,
    TopicOffset,
    TopicRouteData,
    TopicStats,
)
from brokers.engine.client.driver import (  # noqa: F401 (re-exported)
    DEFAULT_TIMEOUT_S,
    AsyncDriver,
    BlockingDriver,
    async_operation,
    blocking_operation,
    parse_namesrv_addrs,
)
from brokers.engine.client.errors import CLIENT_ERROR, MQBrokerError, MQClientError  # noqa: F401 (re-exported)
from brokers.engine.client.plan import T, Call, Fanout, Plan, Reply, check  # noqa: F401 (re-exported)
from brokers.engine.remoting.blocking import BlockingRemotingClient
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.tls import TlsConfig

__all__ = [
    "AdminPlans",
    "AsyncDriver",
    "BlockingDriver",
    "BlockingMQAdminClient",
    "BrokerData",
    "BrokerInfo",
    "Call",
    "ClusterInfo",
    "ConsumeStats",
    "ConsumeStatus",
    "Connection",
    "ConsumerConnection",
    "ConsumerRunningInfo",
    "Fanout",
    "MQAdminClient",
    "MQBrokerError",
    "MQClientError",
    "OffsetWrapper",
    "Plan",
    "ProcessQueueInfo",
    "ProducerConnection",
    "QueueData",
    "Reply",
    "SubscriptionData",
    "TopicOffset",
    "TopicRouteData",
    "TopicStats",
    "decode_offset_msg_id",
    "parse_cluster_info",
    "parse_connections",
    "parse_consumer_running_info",
    "parse_kv_table",
    "parse_namesrv_addrs",
    "parse_subscription_table",
]


class _AdminBase:
    driver: AsyncDriver | BlockingDriver
    plans: AdminPlans

    @property
    def namesrv_addrs(self) -> tuple[str, ...]:
        return self.driver.namesrv_addrs

    @property
    def namesrv_addr_string(self) -> str:
        """The name servers in RocketMQ's ``;``-separated form."""
        return ";".join(self.driver.namesrv_addrs)

    @property
    def timeout_s(self) -> float:
        return self.driver.timeout_s


class MQAdminClient(_AdminBase):
    """Asyncio admin client: each operation of :class:`AdminPlans` as a coroutine method.

    Use it from tasks of one event loop; close it with ``await admin.close()``.
    """

    driver: AsyncDriver

    def __init__(
        self,
        namesrv_addrs: str | Iterable[str],
        timeout_s: float = DEFAULT_TIMEOUT_S,
        *,
        remoting: RemotingClient | None = None,
        access_key: str | None = None,
        secret_key: str | None = None,
        tls: TlsConfig | None = None,
    ) -> None:
        self.driver = AsyncDriver(
            namesrv_addrs, timeout_s, remoting, signer=acl_signer(access_key, secret_key), tls=tls
        )
        self.plans = AdminPlans(self.driver.namesrv_addrs)

    async def close(self) -> None:
        await self.driver.close()

    async def __aenter__(self) -> MQAdminClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    examine_broker_cluster_info = async_operation(AdminPlans.examine_broker_cluster_info)
    get_all_topic_list = async_operation(AdminPlans.get_all_topic_list)
    get_topics_by_cluster = async_operation(AdminPlans.get_topics_by_cluster)
    examine_topic_route_info = async_operation(AdminPlans.examine_topic_route_info)
    get_broker_runtime_info = async_operation(AdminPlans.get_broker_runtime_info)
    get_all_topic_config = async_operation(AdminPlans.get_all_topic_config)
    examine_topic_stats = async_operation(AdminPlans.examine_topic_stats)
    examine_consume_stats = async_operation(AdminPlans.examine_consume_stats)
    examine_consumer_connection_info = async_operation(AdminPlans.examine_consumer_connection_info)
    examine_producer_connection_info = async_operation(AdminPlans.examine_producer_connection_info)
    get_consumer_running_info = async_operation(AdminPlans.get_consumer_running_info)
    query_message_by_key = async_operation(AdminPlans.query_message_by_key)
    view_message = async_operation(AdminPlans.view_message)
    create_or_update_topic = async_operation(AdminPlans.create_or_update_topic)
    create_or_update_topic_in_cluster = async_operation(AdminPlans.create_or_update_topic_in_cluster)
    put_kv_config = async_operation(AdminPlans.put_kv_config)
    get_kv_config = async_operation(AdminPlans.get_kv_config)
    delete_topic = async_operation(AdminPlans.delete_topic)
    wipe_write_perm_of_broker = async_operation(AdminPlans.wipe_write_perm_of_broker)
    add_write_perm_of_broker = async_operation(AdminPlans.add_write_perm_of_broker)


class BlockingMQAdminClient(_AdminBase):
    """Thread-safe blocking admin client for Django and Celery; same operations as MQAdminClient."""

    driver: BlockingDriver

    def __init__(
        self,
        namesrv_addrs: str | Iterable[str],
        timeout_s: float = DEFAULT_TIMEOUT_S,
        *,
        remoting: BlockingRemotingClient | None = None,
        access_key: str | None = None,
        secret_key: str | None = None,
        tls: TlsConfig | None = None,
    ) -> None:
        self.driver = BlockingDriver(
            namesrv_addrs, timeout_s, remoting, signer=acl_signer(access_key, secret_key), tls=tls
        )
        self.plans = AdminPlans(self.driver.namesrv_addrs)

    def close(self) -> None:
        self.driver.close()

    def __enter__(self) -> BlockingMQAdminClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    examine_broker_cluster_info = blocking_operation(AdminPlans.examine_broker_cluster_info)
    get_all_topic_list = blocking_operation(AdminPlans.get_all_topic_list)
    get_topics_by_cluster = blocking_operation(AdminPlans.get_topics_by_cluster)
    examine_topic_route_info = blocking_operation(AdminPlans.examine_topic_route_info)
    get_broker_runtime_info = blocking_operation(AdminPlans.get_broker_runtime_info)
    get_all_topic_config = blocking_operation(AdminPlans.get_all_topic_config)
    examine_topic_stats = blocking_operation(AdminPlans.examine_topic_stats)
    examine_consume_stats = blocking_operation(AdminPlans.examine_consume_stats)
    examine_consumer_connection_info = blocking_operation(AdminPlans.examine_consumer_connection_info)
    examine_producer_connection_info = blocking_operation(AdminPlans.examine_producer_connection_info)
    get_consumer_running_info = blocking_operation(AdminPlans.get_consumer_running_info)
    query_message_by_key = blocking_operation(AdminPlans.query_message_by_key)
    view_message = blocking_operation(AdminPlans.view_message)
    create_or_update_topic = blocking_operation(AdminPlans.create_or_update_topic)
    create_or_update_topic_in_cluster = blocking_operation(AdminPlans.create_or_update_topic_in_cluster)
    put_kv_config = blocking_operation(AdminPlans.put_kv_config)
    get_kv_config = blocking_operation(AdminPlans.get_kv_config)
    delete_topic = blocking_operation(AdminPlans.delete_topic)
    wipe_write_perm_of_broker = blocking_operation(AdminPlans.wipe_write_perm_of_broker)
    add_write_perm_of_broker = blocking_operation(AdminPlans.add_write_perm_of_broker)
