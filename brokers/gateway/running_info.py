"""One consumer client's running info (RocketMQ's GET_CONSUMER_RUNNING_INFO, as rocketmq-dashboard
shows it per client): its subscriptions, its settings (``properties``), per topic its consume RT,
OK/failed TPS and failed messages (``statusTable``), per queue its process queue (``mqTable``).

The broker the client is connected to forwards the request to it; the body is parsed by the
engine's ``parse_consumer_running_info``. A client the group's brokers do not list is
:class:`NotFound`; one too old to answer (below V3_1_8) or that does not answer is
:class:`Unavailable`, with the reason. A read: nothing is recorded.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from brokers.engine.client.admin import ConsumerRunningInfo
from brokers.engine.common.mq_version import version_desc
from brokers.engine.remoting.errors import RemotingError
from brokers.gateway.cluster import cluster_info, readable_by_addr
from brokers.gateway.connections import RUNNING_INFO_TIMEOUT_S, consumer_connections, consumer_running_infos
from console.errors import NotFound, Unavailable

VERSION_RUNNING_INFO = 62  # MQVersion V3_1_8_SNAPSHOT: older clients cannot answer GET_CONSUMER_RUNNING_INFO


@dataclass(frozen=True, slots=True)
class RunningSubscription:
    topic: str
    expression: str
    expression_type: str
    tags: tuple[str, ...]
    sub_version: int


@dataclass(frozen=True, slots=True)
class TopicStatus:
    """``statusTable`` of one topic: RTs in ms, TPS per second, failed messages in the last hour."""

    topic: str
    pull_rt: float
    pull_tps: float
    consume_rt: float
    consume_ok_tps: float
    consume_failed_tps: float
    consume_failed_msgs: int


@dataclass(frozen=True, slots=True)
class QueueStatus:
    """``mqTable`` of one queue (the client's ProcessQueueInfo); timestamps in ms since the epoch, 0 for never."""

    topic: str
    broker_name: str
    queue_id: int
    commit_offset: int
    cached_msg_min_offset: int
    cached_msg_max_offset: int
    cached_msg_count: int
    cached_msg_size_in_mib: int
    locked: bool
    dropped: bool
    last_pull_timestamp: int
    last_consume_timestamp: int

    @property
    def last_pull_time(self) -> datetime | None:
        return _utc(self.last_pull_timestamp)

    @property
    def last_consume_time(self) -> datetime | None:
        return _utc(self.last_consume_timestamp)


def _utc(ms: int) -> datetime | None:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc) if ms > 0 else None


@dataclass(frozen=True, slots=True)
class ClientRunningInfo:
    group: str
    client_id: str
    client_addr: str
    language: str
    version: str
    broker_addr: str  # the broker that forwarded the request
    properties: tuple[tuple[str, str], ...]  # sorted by name
    subscriptions: tuple[RunningSubscription, ...]
    statuses: tuple[TopicStatus, ...]
    queues: tuple[QueueStatus, ...]


def running_info_of(
    group: str,
    client_id: str,
    client_addr: str,
    language: str,
    version: str,
    broker_addr: str,
    info: ConsumerRunningInfo,
) -> ClientRunningInfo:
    subs = tuple(
        RunningSubscription(s.topic, s.sub_string, s.expression_type, tuple(sorted(s.tags_set)), s.sub_version)
        for s in sorted(info.subscriptions, key=lambda s: s.topic)
    )
    statuses = tuple(
        TopicStatus(
            t, s.pull_rt, s.pull_tps, s.consume_rt, s.consume_ok_tps, s.consume_failed_tps, s.consume_failed_msgs
        )
        for t, s in sorted(info.status_table.items())
    )
    queues = tuple(
        QueueStatus(
            mq.topic,
            mq.broker_name,
            mq.queue_id,
            pq.commit_offset,
            pq.cached_msg_min_offset,
            pq.cached_msg_max_offset,
            pq.cached_msg_count,
            pq.cached_msg_size_in_mib,
            pq.locked,
            pq.droped,
            pq.last_pull_timestamp,
            pq.last_consume_timestamp,
        )
        for mq, pq in sorted(info.mq_table.items())
    )
    return ClientRunningInfo(
        group,
        client_id,
        client_addr,
        language,
        version,
        broker_addr,
        tuple(sorted(info.properties.items())),
        subs,
        statuses,
        queues,
    )


def client_running_info(group: str, client_id: str, timeout_s: float = RUNNING_INFO_TIMEOUT_S) -> ClientRunningInfo:
    """The running info of ``client_id``, a member of ``group``, asked through a broker it is connected to."""
    info = cluster_info()
    conns = consumer_connections([group], readable_by_addr(info), info=info)[group]
    conn = next((c for c in conns.connections if c.client_id == client_id), None)
    addrs = conns.broker_addrs.get(client_id, ())
    if conn is None or not addrs:
        raise NotFound(f"client {client_id} is not an online member of consumer group {group}")
    if conn.version < VERSION_RUNNING_INFO:
        raise Unavailable(
            f"client {client_id} runs version {version_desc(conn.version)}, older than V3_1_8: it cannot report its running info"
        )
    answer = consumer_running_infos(group, {client_id: addrs[0]}, timeout_s).get(client_id)
    if isinstance(answer, RemotingError) or answer is None:
        raise Unavailable(f"client {client_id} did not answer for its running info: {answer}")
    return running_info_of(
        group, client_id, conn.client_addr, conn.language, version_desc(conn.version), addrs[0], answer
    )
