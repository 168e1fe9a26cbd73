"""Results of admin calls: frozen dataclasses of what name servers and brokers answer.

Field names follow RocketMQ's Java classes in snake_case (``broker_addrs``, ``queue_datas``,
``offset_table``); ``to_json`` / ``from_json`` speak the fastjson form where a body carries
one. Parsing the bodies lives in :mod:`brokers.engine.client.admin_bodies`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from brokers.engine.common.constants import MASTER_ID
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.perm import PERM_READ, PERM_WRITE
from brokers.engine.common.route import BrokerData, QueueData  # re-exported: the one BrokerData
from brokers.engine.common.subscription import SubscriptionData  # re-exported: the one SubscriptionData

__all__ = [
    "BrokerData",
    "BrokerInfo",
    "ClusterInfo",
    "ConsumeStats",
    "ConsumeStatus",
    "Connection",
    "ConsumerConnection",
    "ConsumerRunningInfo",
    "OffsetWrapper",
    "ProcessQueueInfo",
    "ProducerConnection",
    "QueueData",
    "SubscriptionData",
    "TopicOffset",
    "TopicRouteData",
    "TopicStats",
]


@dataclass(frozen=True, slots=True)
class BrokerInfo:
    """One broker process: its cluster, name, id and address."""

    cluster: str
    broker_name: str
    broker_id: int
    addr: str


@dataclass(frozen=True, slots=True)
class ClusterInfo:
    """What the name server knows of clusters and brokers (GET_BROKER_CLUSTER_INFO)."""

    brokers: tuple[BrokerInfo, ...]  # sorted by cluster, broker name, broker id
    clusters: dict[str, tuple[str, ...]]  # cluster name -> broker names
    broker_datas: dict[str, BrokerData]  # broker name -> addresses

    def masters(self, cluster: str | None = None) -> dict[str, str]:
        """Broker name -> master address (broker id 0), of one cluster or of all, sorted by broker
        name; a broker name without a master is left out. The one broker -> master map of the
        project: every caller (engine plans, the Django gateway) derives its shape from this."""
        names = self.clusters.get(cluster, ()) if cluster is not None else tuple(self.broker_datas)
        out = {}
        for name in sorted(names):
            data = self.broker_datas.get(name)
            if data is not None and data.master_addr:
                out[name] = data.master_addr
        return out

    def slaves(self, cluster: str | None = None) -> dict[str, dict[int, str]]:
        """Broker name -> {broker id >= 1: address}, sorted by broker name then id; a broker name
        without a slave is left out (RocketMQ's master/slave groups; none today)."""
        names = self.clusters.get(cluster, ()) if cluster is not None else tuple(self.broker_datas)
        out = {}
        for name in sorted(names):
            data = self.broker_datas.get(name)
            found = (
                {bid: addr for bid, addr in sorted(data.broker_addrs.items()) if bid != MASTER_ID}
                if data is not None
                else {}
            )
            if found:
                out[name] = found
        return out

    def master_addrs(self, cluster: str | None = None) -> list[str]:
        """Master addresses of one cluster (or of all), sorted by broker name."""
        return list(self.masters(cluster).values())

    def cluster_of(self, broker_name: str) -> str | None:
        data = self.broker_datas.get(broker_name)
        return data.cluster if data is not None else None


@dataclass(frozen=True, slots=True)
class TopicRouteData:
    """Where a topic lives (GET_ROUTEINFO_BY_TOPIC): queue datas and broker datas, by broker name."""

    topic: str
    queue_datas: tuple[QueueData, ...]
    broker_datas: tuple[BrokerData, ...]
    order_topic_conf: str | None = None
    filter_server_table: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def broker_data(self, broker_name: str) -> BrokerData | None:
        return next((b for b in self.broker_datas if b.broker_name == broker_name), None)

    def master_addr(self, broker_name: str) -> str | None:
        data = self.broker_data(broker_name)
        return data.master_addr if data is not None else None

    def publish_queues(self) -> list[MessageQueue]:
        """Writable queues on brokers with a master, sorted (RocketMQ's topicRouteData2TopicPublishInfo)."""
        out: list[MessageQueue] = []
        for qd in sorted(self.queue_datas, key=lambda q: q.broker_name):
            if qd.perm & PERM_WRITE and self.master_addr(qd.broker_name):
                out.extend(MessageQueue(self.topic, qd.broker_name, i) for i in range(qd.write_queue_nums))
        return out

    def subscribe_queues(self) -> list[MessageQueue]:
        """Readable queues, sorted (RocketMQ's topicRouteData2TopicSubscribeInfo)."""
        out: list[MessageQueue] = []
        for qd in self.queue_datas:
            if qd.perm & PERM_READ:
                out.extend(MessageQueue(self.topic, qd.broker_name, i) for i in range(qd.read_queue_nums))
        return sorted(out)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, object] = {
            "brokerDatas": [b.to_json() for b in self.broker_datas],
            "filterServerTable": {k: list(v) for k, v in self.filter_server_table.items()},
            "queueDatas": [q.to_json() for q in self.queue_datas],
        }
        if self.order_topic_conf:
            out["orderTopicConf"] = self.order_topic_conf
        return out


@dataclass(frozen=True, slots=True)
class TopicOffset:
    min_offset: int
    max_offset: int
    last_update_timestamp: int  # store time of the message at max_offset - 1; 0 when empty


@dataclass(frozen=True, slots=True)
class TopicStats:
    """Per queue min/max offsets of a topic, from every broker of its route."""

    topic: str
    offset_table: dict[MessageQueue, TopicOffset]

    def items(self) -> list[tuple[MessageQueue, TopicOffset]]:
        return sorted(self.offset_table.items())

    @property
    def total_messages(self) -> int:
        return sum(o.max_offset - o.min_offset for o in self.offset_table.values())


@dataclass(frozen=True, slots=True)
class OffsetWrapper:
    broker_offset: int  # queue max offset
    consumer_offset: int  # committed offset, 0 when none
    last_timestamp: int  # store time of the message at consumer_offset - 1; 0 when unknown

    @property
    def diff(self) -> int:
        return self.broker_offset - self.consumer_offset


@dataclass(frozen=True, slots=True)
class ConsumeStats:
    """A consumer group's progress per queue (GET_CONSUME_STATS, merged over brokers)."""

    group: str
    topic: str | None
    offset_table: dict[MessageQueue, OffsetWrapper]
    consume_tps: float

    def items(self) -> list[tuple[MessageQueue, OffsetWrapper]]:
        return sorted(self.offset_table.items())

    @property
    def diff_total(self) -> int:
        return sum(w.diff for w in self.offset_table.values())


@dataclass(frozen=True, slots=True)
class Connection:
    client_id: str
    client_addr: str
    language: str
    version: int


@dataclass(frozen=True, slots=True)
class ConsumerConnection:
    """The live connections and subscriptions of a consumer group, merged over its brokers."""

    connections: tuple[Connection, ...]
    subscription_table: dict[str, SubscriptionData]
    consume_type: str | None
    message_model: str | None
    consume_from_where: str | None


@dataclass(frozen=True, slots=True)
class ProducerConnection:
    connections: tuple[Connection, ...]


@dataclass(frozen=True, slots=True)
class ProcessQueueInfo:
    """A consumer's view of one queue (ConsumerRunningInfo.mqTable values)."""

    commit_offset: int = 0
    cached_msg_min_offset: int = 0
    cached_msg_max_offset: int = 0
    cached_msg_count: int = 0
    cached_msg_size_in_mib: int = 0
    locked: bool = False
    droped: bool = False  # (sic) RocketMQ's property name
    last_pull_timestamp: int = 0
    last_consume_timestamp: int = 0


@dataclass(frozen=True, slots=True)
class ConsumeStatus:
    pull_rt: float = 0.0
    pull_tps: float = 0.0
    consume_rt: float = 0.0
    consume_ok_tps: float = 0.0
    consume_failed_tps: float = 0.0
    consume_failed_msgs: int = 0


@dataclass(frozen=True, slots=True)
class ConsumerRunningInfo:
    """What one consumer client reports about itself (GET_CONSUMER_RUNNING_INFO)."""

    properties: dict[str, str]
    subscriptions: tuple[SubscriptionData, ...]
    mq_table: dict[MessageQueue, ProcessQueueInfo]
    status_table: dict[str, ConsumeStatus]
    jstack: str | None = None
