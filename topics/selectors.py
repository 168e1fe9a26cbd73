"""Reads of topics, through the admin client only.

The list costs one GET_BROKER_CLUSTER_INFO per name server and one GET_ALL_TOPIC_CONFIG per
master broker (sent to all brokers at once), whatever the number of topics: never one call per
row. A topic's detail is its route (one name server call); its status, consumers and route are
one call each.
"""
from __future__ import annotations

from django.core.exceptions import ValidationError

from brokers import admin_extras
from brokers.admin_client import get_admin_client
from brokers.engine.client.admin import ClusterInfo, MQBrokerError, TopicRouteData
from brokers.engine.common.constants import DLQ_GROUP_TOPIC_PREFIX, RETRY_GROUP_TOPIC_PREFIX
from brokers.engine.common.validation import is_system_topic
from brokers.engine.remoting.codes import ResponseCode
from console.errors import InvalidInput, NotFound
from topics.rules import validate_topic_name
from topics.types import (
    DLQ,
    NORMAL,
    RETRY,
    SYSTEM,
    BrokerQueues,
    QueueStatus,
    RouteBroker,
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
    names = set(info.clusters) | set(info.broker_datas)
    names |= {f"{c}_REPLY_TOPIC" for c in info.clusters}
    return frozenset(names)


def topic_type(name: str, broker_system_names: frozenset[str] = frozenset()) -> str:
    if name.startswith(RETRY_GROUP_TOPIC_PREFIX):
        return RETRY
    if name.startswith(DLQ_GROUP_TOPIC_PREFIX):
        return DLQ
    if is_system_topic(name) or name in broker_system_names:
        return SYSTEM
    return NORMAL


def cluster_info() -> ClusterInfo:
    """The cluster info from the first name server that answers (503 when none does)."""
    return admin_extras.require_cluster_info(admin_extras.namesrv_survey())


def masters(info: ClusterInfo) -> dict[str, tuple[str, str]]:
    """Master address -> (broker name, cluster), sorted by broker name."""
    out = {}
    for name in sorted(info.broker_datas):
        data = info.broker_datas[name]
        if data.master_addr:
            out[data.master_addr] = (name, data.cluster)
    return out


def topic_list(*, search: str = "", types: frozenset[str] | None = None, broker: str | None = None) -> TopicList:
    """Every topic on every master, with its per-broker queue counts; filtered.

    ``search`` matches a part of the name (case-insensitive), ``types`` keeps those types
    (normal, retry, dlq, system), ``broker`` keeps topics on that broker. A broker that does not
    answer is left out of the columns and named in ``errors``.
    """
    info = cluster_info()
    by_addr = masters(info)
    tables = admin_extras.all_topic_configs(by_addr)
    system_names = system_topic_names(info)
    per_topic: dict[str, list[BrokerQueues]] = {}
    columns, errors = [], []
    for addr, (broker_name, cluster) in by_addr.items():
        table = tables.get(addr)
        if not isinstance(table, dict):
            errors.append(f"broker {broker_name} ({addr}) did not answer: {table}")
            continue
        columns.append(broker_name)
        for name, tc in table.items():
            per_topic.setdefault(name, []).append(
                BrokerQueues(broker_name, cluster, addr, tc.read_queue_nums, tc.write_queue_nums, tc.perm))
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
    checked_name(name)
    try:
        return get_admin_client().examine_topic_route_info(name)
    except MQBrokerError as exc:
        if exc.code == ResponseCode.TOPIC_NOT_EXIST:
            raise NotFound(f"topic {name} does not exist") from None
        raise


def detail_from_route(route: TopicRouteData, system_names: frozenset[str] = frozenset()) -> TopicDetail:
    brokers = []
    for qd in sorted(route.queue_datas, key=lambda q: q.broker_name):
        data = route.broker_data(qd.broker_name)
        brokers.append(BrokerQueues(
            qd.broker_name, data.cluster if data else "", (data.master_addr or "") if data else "",
            qd.read_queue_nums, qd.write_queue_nums, qd.perm))
    return TopicDetail(route.topic, topic_type(route.topic, system_names), tuple(brokers))


def topic_detail(*, name: str) -> TopicDetail:
    """The topic's queue counts and perm on each broker, from its route."""
    route = topic_route_data(name)
    system_names = frozenset(n for b in route.broker_datas for n in (b.cluster, b.broker_name, f"{b.cluster}_REPLY_TOPIC"))
    return detail_from_route(route, system_names)


def topic_route(*, name: str) -> TopicRoute:
    route = topic_route_data(name)
    brokers = []
    for qd in sorted(route.queue_datas, key=lambda q: q.broker_name):
        data = route.broker_data(qd.broker_name)
        addrs = tuple(sorted(data.broker_addrs.items())) if data else ()
        brokers.append(RouteBroker(qd.broker_name, data.cluster if data else "", addrs,
                                   qd.read_queue_nums, qd.write_queue_nums, qd.perm))
    return TopicRoute(route.topic, tuple(brokers), route.order_topic_conf)


def topic_status(*, name: str) -> TopicStatus:
    """Min and max offset and last update time of every queue, on every broker of the route."""
    checked_name(name)
    try:
        stats = get_admin_client().examine_topic_stats(name)
    except MQBrokerError as exc:
        if exc.code == ResponseCode.TOPIC_NOT_EXIST:
            raise NotFound(f"topic {name} does not exist") from None
        raise
    queues = tuple(
        QueueStatus(mq.broker_name, mq.queue_id, off.min_offset, off.max_offset, off.last_update_timestamp)
        for mq, off in stats.items()
    )
    return TopicStatus(name, queues)


def topic_consumers(*, name: str) -> TopicConsumers:
    """The consumer groups of the topic, as the brokers of its route know them."""
    route = topic_route_data(name)
    addrs = [a for a in (b.select_broker_addr() for b in route.broker_datas) if a]
    groups, errors = admin_extras.topic_consumer_groups(name, addrs)
    return TopicConsumers(name, tuple(groups), tuple(errors))
