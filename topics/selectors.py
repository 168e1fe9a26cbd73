"""Reads of topics, through the admin client only.

The list costs one GET_BROKER_CLUSTER_INFO per name server and one GET_ALL_TOPIC_CONFIG per
master broker (sent to all brokers at once), whatever the number of topics: never one call per
row. A topic's detail is its route (one name server call) and its config on each master (one
GET_TOPIC_CONFIG each, at once: the message type); its status, consumers and route are one call each.
"""

from __future__ import annotations

import time
from datetime import datetime

from django.conf import settings
from django.core.exceptions import ValidationError

from brokers.engine.client.simple import TOOLS_CONSUMER_GROUP
from brokers.engine.common.constants import DLQ_GROUP_TOPIC_PREFIX, RETRY_GROUP_TOPIC_PREFIX
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.common.topic_message_type import topic_message_type
from brokers.engine.common.topic_validator import broker_system_topics, is_system_topic
from brokers.gateway.cluster import cluster_info, masters_by_addr
from brokers.gateway.connections import consumer_connections
from brokers.gateway.errors import MQBrokerError, RemotingError, TopicNotFound
from brokers.gateway.groups import consume_stats, group_survey
from brokers.gateway.queues import max_offsets, min_offsets, pull_messages
from brokers.gateway.topics import all_topic_configs, topic_configs, topic_consumer_groups, topic_stats
from brokers.gateway.types import ClusterInfo, TopicRouteData
from brokers.gateway import topic_routes
from console.errors import InvalidInput, NotFound
from console.advice import Advice
from topics import advisor
from topics.models import ShrinkProgress
from topics.rules import validate_queue_nums, validate_topic_name
from topics.types import (
    DLQ,
    NORMAL,
    RETRY,
    SHRINK_DONE,
    SHRINK_PLAN,
    SHRINK_READ,
    SHRINK_WRITE,
    SYSTEM,
    BrokerQueues,
    QueueStatus,
    RouteBroker,
    ShrinkStatus,
    TailGroup,
    TailQueue,
    TopicConsumerRow,
    TopicConsumers,
    TopicDetail,
    TopicList,
    TopicRoute,
    TopicRow,
    TopicStatus,
)


def checked_name(name: str) -> str:
    """``name`` if it is a legal topic name, else InvalidInput on the field ``name``."""
    try:
        return validate_topic_name(name)
    except ValidationError as exc:
        raise InvalidInput("name", exc.messages[0]) from None


def system_topic_names(info: ClusterInfo) -> frozenset[str]:
    """Topics the brokers make for themselves beyond the fixed set: cluster and broker names."""
    return broker_system_topics(info.clusters, info.broker_datas)


def topic_type(name: str, broker_system_names: frozenset[str] = frozenset()) -> str:
    if name.startswith(RETRY_GROUP_TOPIC_PREFIX):
        return RETRY
    if name.startswith(DLQ_GROUP_TOPIC_PREFIX):
        return DLQ
    if is_system_topic(name, broker_system_names):
        return SYSTEM
    return NORMAL


def topic_list(*, search: str = "", types: frozenset[str] | None = None, broker: str | None = None) -> TopicList:
    """Every topic on every master, with its per-broker queue counts; filtered.

    ``search`` matches a part of the name (case-insensitive), ``types`` keeps those types
    (normal, retry, dlq, system), ``broker`` keeps topics on that broker. A broker that does not
    answer is left out of the columns and named in ``errors``.
    """
    info = cluster_info()
    by_addr = masters_by_addr(info)
    tables = all_topic_configs(by_addr)
    system_names = system_topic_names(info)
    per_topic: dict[str, list[BrokerQueues]] = {}
    columns, errors = [], []
    for addr, broker_name in by_addr.items():
        cluster = info.cluster_of(broker_name) or ""
        table = tables.get(addr)
        if not isinstance(table, dict):
            errors.append(f"broker {broker_name} ({addr}) did not answer: {table}")
            continue
        columns.append(broker_name)
        for name, tc in table.items():
            per_topic.setdefault(name, []).append(
                BrokerQueues(
                    broker_name, cluster, addr, tc.read_queue_nums, tc.write_queue_nums, tc.perm, topic_message_type(tc)
                )
            )
    needle = search.strip().lower()
    rows = []
    for name in sorted(per_topic):
        if needle and needle not in name.lower():
            continue
        kind = topic_type(name, system_names)
        if types and kind not in types:
            continue
        queues = tuple(per_topic[name])
        if broker and not any(b.broker_name == broker for b in queues):
            continue
        rows.append(TopicRow(name, kind, queues))
    return TopicList(tuple(rows), tuple(columns), len(per_topic), tuple(errors))


def topic_route_data(name: str) -> TopicRouteData:
    """The topic's route; NotFound when the name servers have none."""
    return topic_routes.topic_route_data(checked_name(name))


def detail_from_route(
    route: TopicRouteData,
    system_names: frozenset[str] = frozenset(),
    configs: dict[str, TopicConfig | RemotingError] | None = None,
) -> TopicDetail:
    """The detail of a route; with ``configs`` (master address -> its TopicConfig, see route_configs)
    each broker's message type too (None where its master did not answer)."""
    brokers = []
    for qd in sorted(route.queue_datas, key=lambda q: q.broker_name):
        data = route.broker_data(qd.broker_name)
        addr = (data.master_addr or "") if data else ""
        config = (configs or {}).get(addr)
        brokers.append(
            BrokerQueues(
                qd.broker_name,
                data.cluster if data else "",
                addr,
                qd.read_queue_nums,
                qd.write_queue_nums,
                qd.perm,
                topic_message_type(config) if isinstance(config, TopicConfig) else None,
            )
        )
    return TopicDetail(route.topic, topic_type(route.topic, system_names), tuple(brokers))


def route_configs(route: TopicRouteData) -> dict[str, TopicConfig | RemotingError]:
    """The topic's config on each master of its route (one GET_TOPIC_CONFIG each, at once): its attributes."""
    return topic_configs(route.topic, [b.master_addr for b in route.broker_datas if b.master_addr])


def topic_detail(*, name: str) -> TopicDetail:
    """The topic's queue counts and perm on each broker, from its route, and its message type on each."""
    route = topic_route_data(name)
    system_names = broker_system_topics(
        {b.cluster for b in route.broker_datas}, {b.broker_name for b in route.broker_datas}
    )
    return detail_from_route(route, system_names, route_configs(route))


def topic_route(*, name: str) -> TopicRoute:
    route = topic_route_data(name)
    brokers = []
    for qd in sorted(route.queue_datas, key=lambda q: q.broker_name):
        data = route.broker_data(qd.broker_name)
        addrs = tuple(sorted(data.broker_addrs.items())) if data else ()
        brokers.append(
            RouteBroker(
                qd.broker_name, data.cluster if data else "", addrs, qd.read_queue_nums, qd.write_queue_nums, qd.perm
            )
        )
    return TopicRoute(route.topic, tuple(brokers), route.order_topic_conf)


def topic_status(*, name: str) -> TopicStatus:
    """Min and max offset and last update time of every queue, on every broker of the route."""
    checked_name(name)
    try:
        stats = topic_stats(name)
    except TopicNotFound:
        raise NotFound(f"topic {name} does not exist") from None
    queues = tuple(
        QueueStatus(mq.broker_name, mq.queue_id, off.min_offset, off.max_offset, off.last_update_timestamp)
        for mq, off in stats.items()
    )
    return TopicStatus(name, queues)


LAG_GROUPS_MAX = 20  # groups whose lag one topic page asks for (each is one GET_CONSUME_STATS per broker)


def topic_consumers(*, name: str) -> TopicConsumers:
    """The consumer groups of the topic, as the brokers of its route know them, each with its online
    members (one connection survey per broker) and, for the first LAG_GROUPS_MAX, its lag and consume
    TPS in this topic (GET_CONSUME_STATS, as ``mqadmin consumerProgress -t``)."""
    route = topic_route_data(name)
    addrs = [a for a in (b.select_broker_addr() for b in route.broker_datas) if a]
    groups, errors = topic_consumer_groups(name, addrs)
    conns = consumer_connections(groups, addrs) if groups else {}
    rows = []
    for i, group in enumerate(groups):
        members = len(conns[group].connections) if group in conns else None
        if i >= LAG_GROUPS_MAX:
            rows.append(
                TopicConsumerRow(group, members, None, None, f"lag shown for the first {LAG_GROUPS_MAX} groups only")
            )
            continue
        try:
            stats = consume_stats(group, name)
        except (MQBrokerError, RemotingError) as exc:
            rows.append(TopicConsumerRow(group, members, None, None, f"no progress: {exc}"))
            continue
        rows.append(
            TopicConsumerRow(group, members, stats.diff_total, stats.consume_tps)
        )  # consumerProgress's Diff Total
    return TopicConsumers(name, tuple(groups), tuple(errors), tuple(rows))


def topic_advice(*, name: str) -> tuple[Advice, ...]:
    """The queue-count advisor's findings about the topic (topics/advisor.py), from its route, its queues'
    offsets and the groups consuming it."""
    return advisor.topic_advice(topic_detail(name=name), topic_status(name=name), topic_consumers(name=name))


# -- safe shrink -----------------------------------------------------------------------------------


def shrink_settle_s() -> int:
    """Seconds to wait after lowering the write queues before the read queues may follow:
    producers see the new route at their next poll (every 30 s), and may write to the tail
    queues until then (settings.GANTRY_SHRINK_SETTLE_S, default 35)."""
    return int(getattr(settings, "GANTRY_SHRINK_SETTLE_S", 35))


def _write_lowered_at(name: str, target: int) -> datetime | None:
    """When the console lowered the topic's write queues to ``target`` (the shrink's progress), if it did."""
    return (
        ShrinkProgress.objects.filter(topic=name, target_queue_nums=target)
        .values_list("write_lowered_at", flat=True)
        .first()
    )


def _shrink_step(brokers: tuple[BrokerQueues, ...], target: int) -> str:
    if any(b.write_queue_nums > target for b in brokers):
        return SHRINK_WRITE
    if any(b.read_queue_nums > target for b in brokers):
        return SHRINK_READ
    return SHRINK_DONE


def topic_shrink_status(*, name: str, target_queue_nums: int | None = None) -> ShrinkStatus:
    """Where a shrink of ``name`` to ``target_queue_nums`` stands: per tail queue its offsets,
    and each consumer group's committed offset and lag in it.

    Without a target, the one under way (write queues already lower than read queues) is
    shown, else the plan. A target that takes no queue away is refused (InvalidInput) unless a
    shrink to it was taken here (then it is ``done``). Costs: the route, QUERY_TOPIC_CONSUME_BY_WHO and
    GET_ALL_CONSUMER_OFFSET per broker, GET_MIN/MAX_OFFSET per tail queue, and one one-message
    pull per non-empty tail queue (the time of its last message), each kind all at once.
    """
    route = topic_route_data(name)
    detail = detail_from_route(route)
    brokers = detail.brokers
    if target_queue_nums is None:
        lowered = [b.write_queue_nums for b in brokers if b.write_queue_nums < b.read_queue_nums]
        if not lowered:
            return ShrinkStatus(name, None, brokers, SHRINK_PLAN)
        target_queue_nums = max(lowered)
    try:
        validate_queue_nums(target_queue_nums)
    except ValidationError as exc:
        raise InvalidInput("target_queue_nums", exc.messages[0]) from None
    step = _shrink_step(brokers, target_queue_nums)
    if (
        step == SHRINK_DONE
        and not ShrinkProgress.objects.filter(topic=name, target_queue_nums=target_queue_nums).exists()
    ):
        widest = max(brokers, key=lambda b: max(b.read_queue_nums, b.write_queue_nums))
        most = max(widest.read_queue_nums, widest.write_queue_nums)
        raise InvalidInput(
            "target_queue_nums",
            f"the topic has at most {most} queues per broker ({widest.broker_name}): "
            f"a shrink to {target_queue_nums} takes none away; give a target below {most}.",
        )
    tail = {
        MessageQueue(name, b.broker_name, i): b.addr
        for b in brokers
        if b.addr
        for i in range(target_queue_nums, b.read_queue_nums)
    }
    if not tail:
        return ShrinkStatus(name, target_queue_nums, brokers, step)
    addrs = sorted({b.addr for b in brokers if b.addr})
    groups, errors = topic_consumer_groups(name, addrs)
    surveys = group_survey(addrs, lag=False)
    committed: dict[tuple[str, str], dict[int, int]] = {}  # (broker name, group) -> queue id -> offset
    by_addr = {b.addr: b.broker_name for b in brokers}
    for addr, survey in surveys.items():
        if survey.error:
            errors.append(f"broker {by_addr[addr]} ({addr}) did not answer: {survey.error}")
        for (topic, group), queues in survey.offsets.items():
            if topic == name:
                committed[(by_addr[addr], group)] = queues
    mins, maxes = min_offsets(tail), max_offsets(tail)
    last = pull_messages(
        {mq: (tail[mq], maxes[mq] - 1, 1) for mq in tail if maxes[mq] > mins[mq]}, TOOLS_CONSUMER_GROUP
    )
    rows = []
    for mq in sorted(tail):
        lo, hi = mins[mq], maxes[mq]
        per_group = []
        for group in groups:
            offset = committed.get((mq.broker_name, group), {}).get(mq.queue_id, -1)
            per_group.append(TailGroup(group, offset, max(hi - max(offset, lo), 0)))
        stamp = last[mq][-1].store_timestamp if last.get(mq) else 0
        rows.append(TailQueue(mq.broker_name, mq.queue_id, lo, hi, stamp, tuple(per_group)))
    lowered_at = _write_lowered_at(name, target_queue_nums)
    settle_from = max([lowered_at.timestamp() * 1000 if lowered_at else 0] + [q.last_store_timestamp for q in rows])
    remaining = (
        max(0, int(settle_from / 1000 + shrink_settle_s() - time.time() + 0.999))
        if settle_from and step == SHRINK_READ
        else 0
    )
    return ShrinkStatus(
        name, target_queue_nums, brokers, step, tuple(rows), tuple(groups), remaining, lowered_at, tuple(errors)
    )
