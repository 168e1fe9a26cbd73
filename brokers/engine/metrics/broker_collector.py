"""BrokerCollector: one broker's ``/metrics``, under apache/rocketmq-exporter's names and labels.

The exporter is a separate process that asks every broker by admin calls; here each broker tells
what it knows itself, so a Prometheus scraping every broker gets the exporter's series (the
``instance`` label tells the brokers apart) and its Grafana dashboards work unchanged:

- ``rocketmq_brokeruntime_*`` (labels cluster, brokerIP, brokerHost, des, boottime, broker_version)
  read from the same table as GET_BROKER_RUNTIME_INFO (``mqadmin brokerStatus``);
- ``rocketmq_broker_tps`` / ``rocketmq_broker_qps`` (cluster, brokerIP, broker): messages put / got
  per second over the last minute;
- ``rocketmq_producer_offset`` (cluster, broker, topic): the sum of the topic's queue max offsets;
  ``rocketmq_producer_tps`` / ``rocketmq_producer_message_size``: that sum's and the put bytes'
  change per second since the previous scrape (0 on the first);
- ``rocketmq_consumer_offset`` / ``rocketmq_consumer_tps`` (cluster, broker, topic, group);
- ``rocketmq_group_diff`` (group, topic, countOfOnlineConsumers, msgModel): broker offset minus
  consumer offset summed over the queues, from the very tables GET_CONSUME_STATS answers with
  (``consume_stats_tables``), so the sum over brokers is ``mqadmin consumerProgress``'s Diff Total;
  ``rocketmq_group_get_latency_by_storetime``: age of the oldest message a group has not consumed.

Gantry's own: ``gantry_*`` (``gantry_families.py``) plus the commit log flush latency, the HA
replication lag, the 5.x clients and POP deliveries in flight (``grpc_pop_families.py``).
Every figure is copied on the broker's event loop in one call at scrape time.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from prometheus_client.core import GaugeMetricFamily, Metric

from brokers.engine.broker.processors.admin import consume_stats_tables
from brokers.engine.common.constants import DLQ_GROUP_TOPIC_PREFIX, RETRY_GROUP_TOPIC_PREFIX
from brokers.engine.common.latency_histogram import HistogramSnapshot
from brokers.engine.metrics.gantry_families import histogram, remoting_families
from brokers.engine.metrics.grpc_pop_families import FiveSnapshot, five_families, five_snapshot
from brokers.engine.metrics.loop_snapshot import on_loop
from brokers.engine.remoting.request_stats import RequestStatsSnapshot, request_stats

if TYPE_CHECKING:
    from brokers.engine.broker.controller import BrokerController

MESSAGE_MODEL_ORDINAL = {
    "BROADCASTING": "0",
    "CLUSTERING": "1",
}  # Java MessageModel.ordinal(), as the exporter labels it

# rocketmq_brokeruntime_<suffix> <- the runtime table's key (a number)
RUNTIME_GAUGES: dict[str, str] = {
    "msg_put_total_today_now": "msgPutTotalTodayNow",
    "msg_gettotal_today_now": "msgGetTotalTodayNow",
    "msg_puttotal_todaymorning": "msgPutTotalTodayMorning",
    "msg_gettotal_todaymorning": "msgGetTotalTodayMorning",
    "msg_puttotal_yesterdaymorning": "msgPutTotalYesterdayMorning",
    "msg_gettotal_yesterdaymorning": "msgGetTotalYesterdayMorning",
    "dispatch_behind_bytes": "dispatchBehindBytes",
    "put_message_size_total": "putMessageSizeTotal",
    "put_message_average_size": "putMessageAverageSize",
    "earliest_message_timestamp": "earliestMessageTimeStamp",
    "putmessage_entire_time_max": "putMessageEntireTimeMax",
    "getmessage_entire_time_max": "getMessageEntireTimeMax",
    "putmessage_times_total": "putMessageTimesTotal",
    "pagecache_lock_time_mills": "pageCacheLockTimeMills",
    "commitlog_disk_ratio": "commitLogDiskRatio",
    "consumequeue_disk_ratio": "consumeQueueDiskRatio",
    "dispatch_maxbuffer": "dispatchMaxBuffer",
    "commitlog_maxoffset": "commitLogMaxOffset",
    "commitlog_minoffset": "commitLogMinOffset",
    "remain_howmanydata_toflush": "remainHowManyDataToFlush",
    "start_accept_sendrequest_time": "startAcceptSendRequestTimeStamp",
    "remain_transientstore_buffer_numbs": "remainTransientStoreBufferNumbs",
    "send_threadpool_queue_size": "sendThreadPoolQueueSize",
    "send_threadpoolqueue_capacity": "sendThreadPoolQueueCapacity",
    "pull_threadpoolqueue_size": "pullThreadPoolQueueSize",
    "pull_threadpoolqueue_capacity": "pullThreadPoolQueueCapacity",
    "query_threadpoolqueue_size": "queryThreadPoolQueueSize",
    "query_threadpool_queue_capacity": "queryThreadPoolQueueCapacity",
}
# rocketmq_brokeruntime_<prefix>_tps10/60/600 <- the table's "10s 60s 600s" triple
RUNTIME_TPS: dict[str, str] = {
    "put": "putTps",
    "getfound": "getFoundTps",
    "getmiss": "getMissTps",
    "gettotal": "getTotalTps",
    "gettransfered": "getTransferedTps",
}
RUNTIME_LABELS = ["cluster", "brokerIP", "brokerHost", "des", "boottime", "broker_version"]


@dataclass(frozen=True, slots=True)
class GroupTopic:
    group: str
    topic: str
    online: int  # consumers connected
    model: str
    diff: int
    consumer_offset: int
    tps: float
    oldest_unconsumed_ms: int  # store time of the first message not consumed yet on any queue; 0: none


@dataclass(frozen=True, slots=True)
class BrokerSnapshot:
    cluster: str
    broker: str
    addr: str
    runtime: dict[str, str]
    topic_offsets: dict[str, int]  # topic -> sum of its queues' max offsets
    topic_bytes: dict[str, int]  # topic -> record bytes put since start
    groups: list[GroupTopic]
    requests: RequestStatsSnapshot
    open_connections: int
    flush_latency: HistogramSnapshot | None
    now_ms: int
    at: float
    five: FiveSnapshot  # the 5.x clients and POP deliveries in flight (grpc_pop_families.py)


def _number(text: str | None) -> float | None:
    try:
        return float(str(text).split()[0])
    except (ValueError, IndexError):
        return None


class BrokerCollector:
    """A prometheus-client collector reading ``controller`` (a started BrokerController) on ``loop``."""

    def __init__(self, controller: BrokerController, loop: asyncio.AbstractEventLoop) -> None:
        self.controller = controller
        self.loop = loop
        self._previous: BrokerSnapshot | None = None  # for the producer rates
        self._lock = threading.Lock()

    # -- on the event loop ----------------------------------------------------------------------

    def snapshot(self) -> BrokerSnapshot:
        c = self.controller
        store = c.store
        topic_offsets: dict[str, int] = {}
        for topic, tc in c.topic_config_manager.topic_config_table.items():
            topic_offsets[topic] = sum(
                max(store.get_max_offset_in_queue(topic, q), 0) for q in range(tc.write_queue_nums)
            )
        topic_bytes: dict[str, int] = {}
        for (topic, _queue_id), size in store.queue_put_bytes.items():
            topic_bytes[topic] = topic_bytes.get(topic, 0) + size
        groups: list[GroupTopic] = []
        for group, topics in sorted(c.consumer_offset_manager.topics_by_group().items()):
            info = c.client_manager.get_consumer_group_info(group)
            online = len(info.all_channels()) if info is not None else 0
            model = (info.message_model if info is not None else None) or "CLUSTERING"
            for topic, table in consume_stats_tables(c, group, sorted(topics)):
                rows = list(table.values())
                oldest = 0
                for mq, row in table.items():
                    if row["brokerOffset"] > row["consumerOffset"]:
                        ts = store.get_message_store_timestamp(mq.topic, mq.queue_id, row["consumerOffset"])
                        if ts > 0 and (oldest == 0 or ts < oldest):
                            oldest = ts
                groups.append(
                    GroupTopic(
                        group,
                        topic,
                        online,
                        model,
                        sum(r["brokerOffset"] - r["consumerOffset"] for r in rows),
                        sum(r["consumerOffset"] for r in rows),
                        c.broker_stats.group_get.tps(group, topic),
                        oldest,
                    )
                )
        local = getattr(store, "local", store)
        flush = getattr(local, "_flush_commitlog", None)
        return BrokerSnapshot(
            c.config.cluster_name,
            c.config.broker_name,
            c.addr,
            c.runtime_info(),
            topic_offsets,
            topic_bytes,
            groups,
            request_stats.snapshot(),
            len(c.server.channels) if c.server is not None else 0,
            flush.flush_latency.snapshot() if flush is not None else None,
            c.clock.now_ms(),
            c.clock.monotonic(),
            five_snapshot(c),
        )

    # -- on the scrape thread -------------------------------------------------------------------

    def collect(self) -> Iterator[Metric]:
        snap = on_loop(self.loop, self.snapshot)
        with self._lock:
            previous, self._previous = self._previous, snap
        yield from self._runtime(snap)
        yield from self._producers(snap, previous)
        yield from self._consumers(snap)
        yield from remoting_families("broker", snap.requests, snap.open_connections)
        yield from self._gantry_store(snap)
        yield from five_families(snap.cluster, snap.broker, snap.five)

    def _runtime(self, s: BrokerSnapshot) -> Iterator[Metric]:
        rt = s.runtime
        labels = [
            s.cluster,
            s.addr,
            "",
            rt.get("brokerVersionDesc", ""),
            rt.get("bootTimestamp", "0"),
            rt.get("brokerVersion", ""),
        ]
        for suffix, key in RUNTIME_GAUGES.items():
            value = _number(rt.get(key))
            if value is not None:
                family = GaugeMetricFamily(
                    f"rocketmq_brokeruntime_{suffix}", f"broker runtime {key}", labels=RUNTIME_LABELS
                )
                family.add_metric(labels, value)
                yield family
        for prefix, key in RUNTIME_TPS.items():
            figures = (rt.get(key) or "").split()
            for window, text in zip(("10", "60", "600"), figures):
                family = GaugeMetricFamily(
                    f"rocketmq_brokeruntime_{prefix}_tps{window}",
                    f"broker runtime {key} over {window} s",
                    labels=RUNTIME_LABELS,
                )
                family.add_metric(labels, _number(text) or 0.0)
                yield family
        for name, key, doc in (
            ("rocketmq_broker_tps", "putTps", "messages put per second (last minute)"),
            ("rocketmq_broker_qps", "getTotalTps", "messages got per second (last minute)"),
        ):
            family = GaugeMetricFamily(name, doc, labels=["cluster", "brokerIP", "broker"])
            figures = (rt.get(key) or "0 0 0").split()
            family.add_metric(
                [s.cluster, s.addr, s.broker], _number(figures[1] if len(figures) > 1 else figures[0]) or 0.0
            )
            yield family

    def _producers(self, s: BrokerSnapshot, previous: BrokerSnapshot | None) -> Iterator[Metric]:
        labels = ["cluster", "broker", "topic"]
        offset = GaugeMetricFamily(
            "rocketmq_producer_offset", "TopicOffset: sum of the topic's queue max offsets", labels=labels
        )
        retry = GaugeMetricFamily("rocketmq_topic_retry_offset", "TopicRetryOffset", labels=labels)
        dlq = GaugeMetricFamily("rocketmq_topic_dlq_offset", "TopicDLQOffset", labels=["cluster", "broker", "group"])
        tps = GaugeMetricFamily(
            "rocketmq_producer_tps", "TopicPutNums per second since the previous scrape", labels=labels
        )
        size = GaugeMetricFamily(
            "rocketmq_producer_message_size",
            "TopicPutMessageSize (bytes) per second since the previous scrape",
            labels=labels,
        )
        elapsed = s.at - previous.at if previous is not None else 0.0
        for topic, total in sorted(s.topic_offsets.items()):
            if topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
                retry.add_metric([s.cluster, s.broker, topic], total)
                continue
            if topic.startswith(DLQ_GROUP_TOPIC_PREFIX):
                dlq.add_metric([s.cluster, s.broker, topic[len(DLQ_GROUP_TOPIC_PREFIX) :]], total)
                continue
            offset.add_metric([s.cluster, s.broker, topic], total)
            put_rate = byte_rate = 0.0
            if previous is not None and elapsed > 0:
                put_rate = max(total - previous.topic_offsets.get(topic, 0), 0) / elapsed
                byte_rate = max(s.topic_bytes.get(topic, 0) - previous.topic_bytes.get(topic, 0), 0) / elapsed
            tps.add_metric([s.cluster, s.broker, topic], put_rate)
            size.add_metric([s.cluster, s.broker, topic], byte_rate)
        yield from (offset, retry, dlq, tps, size)

    def _consumers(self, s: BrokerSnapshot) -> Iterator[Metric]:
        labels = ["cluster", "broker", "topic", "group"]
        diff = GaugeMetricFamily(
            "rocketmq_group_diff",
            "GroupDiff: broker offset - consumer offset over the group's queues",
            labels=["group", "topic", "countOfOnlineConsumers", "msgModel"],
        )
        offset = GaugeMetricFamily(
            "rocketmq_consumer_offset", "GroupBrokerTotalOffset: sum of the group's consumer offsets", labels=labels
        )
        tps = GaugeMetricFamily("rocketmq_consumer_tps", "GroupGetNums per second (last minute)", labels=labels)
        latency = GaugeMetricFamily(
            "rocketmq_group_get_latency_by_storetime",
            "ms since the store time of the oldest message the group has not consumed",
            labels=labels,
        )
        for g in s.groups:
            key = [s.cluster, s.broker, g.topic, g.group]
            if g.model == "CLUSTERING":  # as the exporter: broadcasting groups have no broker-side diff
                diff.add_metric([g.group, g.topic, str(g.online), MESSAGE_MODEL_ORDINAL["CLUSTERING"]], g.diff)
                latency.add_metric(key, max(s.now_ms - g.oldest_unconsumed_ms, 0) if g.oldest_unconsumed_ms else 0)
            offset.add_metric(key, g.consumer_offset)
            tps.add_metric(key, g.tps)
        yield from (diff, offset, tps, latency)

    def _gantry_store(self, s: BrokerSnapshot) -> Iterator[Metric]:
        if s.flush_latency is not None:
            yield histogram(
                "gantry_store_flush_latency_seconds",
                "Time a commit log flush round that synced data took",
                [],
                [([], s.flush_latency)],
            )
        for name, key, doc in (
            (
                "gantry_replication_lag_bytes",
                "haReplicationLagBytes",
                "bytes the slowest slave (or this slave) is behind",
            ),
            (
                "gantry_replication_lag_ms",
                "haReplicationLagMs",
                "store-time ms the slowest slave (or this slave) is behind",
            ),
        ):
            value = _number(s.runtime.get(key))
            if value is not None:
                family = GaugeMetricFamily(name, doc + " (-1: unknown)", labels=["cluster", "broker", "role"])
                family.add_metric([s.cluster, s.broker, s.runtime.get("brokerRole", "")], value)
                yield family
