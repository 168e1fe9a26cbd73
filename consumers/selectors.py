"""Reads of consumer groups: the list, one group, its progress, its live allocation, a reset's plan.

Costs, in admin requests:

- the list: per broker (its master; its slave while the master is down), GET_BROKER_CONSUME_STATS (every group's offsets, lag and TPS)
  and GET_ALL_SUBSCRIPTIONGROUP_CONFIG (consumeEnable), all brokers at once; a broker that does not serve it (answers "request code not supported")
  is read with GET_ALL_SUBSCRIPTIONGROUP_CONFIG, GET_ALL_CONSUMER_OFFSET and one
  GET_TOPIC_STATS_INFO per consumed topic instead (see ``brokers.gateway.groups.group_survey_plan``).
  Members (count, consume type, model, version) of the rows shown (:func:`with_members`) cost
  one GANTRY_GET_ALL_CONSUMER_CONNECTIONS per master (a Gantry extension: every online group's
  connections), all at once; a broker without it (Apache RocketMQ 4.x) gets one
  GET_CONSUMER_CONNECTION_LIST per shown group instead;
- one group: the list's bulk calls (to know the group), its connections, GET_CONSUME_STATS
  (as ``mqadmin consumerProgress``), and each member's running info for the queue owners.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from django.core.cache import cache

from brokers.engine.common.subscription_group_config import is_system_group
from brokers.engine.common.constants import RETRY_GROUP_TOPIC_PREFIX
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.mq_version import version_desc
from brokers.gateway import namesrv_sets
from brokers.gateway.cluster import cluster_info, masters_by_addr, readable_by_addr
from brokers.gateway.connections import GroupConnections, consumer_connections
from brokers.gateway.errors import TopicNotFound
from brokers.gateway.groups import backlog_since, consume_delay_s, consume_stats, group_survey, merge_backlog_since
from brokers.gateway.queues import max_offsets, min_offsets, search_offsets
from brokers.gateway import running_info
from brokers.gateway.running_info import ClientRunningInfo
from brokers.gateway.topic_routes import topic_route_data
from brokers.gateway.types import ClusterInfo, ConsumerRunningInfo, TopicRouteData
from console.errors import InvalidInput, NotFound
from consumers import live, previews
from consumers.reset_target import ResetTarget
from consumers.rules import checked_group, checked_topic
from consumers.types import (
    CONSUME_TYPES,
    OFFLINE,
    ONLINE,
    SYSTEM,
    USER,
    GroupDetail,
    GroupList,
    GroupProgress,
    GroupRow,
    LiveCheck,
    Member,
    OffsetResetPlan,
    QueueProgress,
    QueueReset,
    Subscription,
)

STRATEGY_KEY = "gantry:group-strategy:"  # + group: the strategy the last live check saw (strategy_key: per tier)


def strategy_key(group: str) -> str:
    """The cache key of ``group``'s last seen strategy in the current name-server set (groups repeat across tiers)."""
    return namesrv_sets.cache_prefix() + STRATEGY_KEY + group


STRATEGY_TTL_S = 600


def group_kind(name: str) -> str:
    return SYSTEM if is_system_group(name) else USER


def _masters() -> tuple[ClusterInfo, dict[str, str]]:
    """The cluster info and master address -> broker name."""
    info = cluster_info()
    return info, masters_by_addr(info)


def _readable() -> tuple[ClusterInfo, dict[str, str]]:
    """The cluster info and, per broker name, the address its groups are read from -> the name
    (the master; a slave while the master is down: ``readable_by_addr``)."""
    info = cluster_info()
    return info, readable_by_addr(info)


# -- the list --------------------------------------------------------------------------------------------


# The orders of the group list, page and API (``-`` for descending): name, lag, TPS (no TPS counts as 0),
# consume delay (an unknown delay sorts below 0).
GROUP_ORDERING = {
    "name": lambda g: g.name,
    "lag": lambda g: (g.lag, g.name),
    "tps": lambda g: (g.tps or 0.0, g.name),
    "delay": lambda g: (-1.0 if g.delay is None else g.delay, g.name),
}


def _now_ms() -> int:
    return int(time.time() * 1000)


def group_list(*, search: str = "", kinds: frozenset[str] | None = None, now_ms: int | None = None) -> GroupList:
    """Every group any broker knows (config or committed offsets), with lag, TPS and consumeEnable, filtered.

    The TPS is the brokers' ``consumeTps`` (messages pulled per second over the last minute), the
    figure GET_CONSUME_STATS gives the group page, its progress API and ``mqadmin consumerProgress``;
    unknown (None) when no broker of the group answers GET_BROKER_CONSUME_STATS. The consume delay is
    ``now_ms`` (default: the clock) less the earliest ``lastTimestamp`` behind the group's backlog
    (:func:`~brokers.engine.client.admin_group_bodies.consume_delay_s`), unknown like the TPS. consumeEnable is
    false when any broker's subscription group config says so.

    ``search`` matches a part of the name (case-insensitive), ``kinds`` keeps user and/or system
    groups. A broker that does not answer is named in ``errors``; a broker whose master is down is
    read from its slave (``readable_by_addr``).
    """
    _, brokers = _readable()
    surveys = group_survey(brokers)
    merged: dict[str, dict] = {}
    errors, sources = [], set()

    def entry(group: str) -> dict:
        return merged.setdefault(
            group,
            {"brokers": set(), "topics": set(), "lag": 0, "tps": None, "enable": True, "since": [], "timed": False},
        )

    for addr, survey in surveys.items():
        if survey.error:
            errors.append(f"broker {brokers[addr]} ({addr}) did not answer: {survey.error}")
            continue
        sources.add(survey.stats_source)
        for group, cfg in survey.configs.items():
            e = entry(group)
            e["brokers"].add(brokers[addr])
            e["enable"] = e["enable"] and cfg.consume_enable
        for topic, group in survey.offsets:
            e = entry(group)
            e["brokers"].add(brokers[addr])
            e["topics"].add(topic)
        for group, lag in survey.lag.items():
            entry(group)["lag"] += lag
        if survey.stats_source == "GET_BROKER_CONSUME_STATS":  # the brokers' consumeTps, as GET_CONSUME_STATS gives it
            for group in survey.lag:
                e = entry(group)
                e["tps"] = (e["tps"] or 0.0) + survey.tps.get(group, 0.0)
                e["timed"] = True
                e["since"].append(survey.backlog_since.get(group))
    now_ms = _now_ms() if now_ms is None else now_ms
    needle = search.strip().lower()
    rows = []
    for name in sorted(merged):
        kind = group_kind(name)
        if (needle and needle not in name.lower()) or (kinds and kind not in kinds):
            continue
        e = merged[name]
        delay = consume_delay_s(merge_backlog_since(e["since"]), now_ms) if e["timed"] else None
        rows.append(
            GroupRow(
                name,
                kind,
                tuple(sorted(e["brokers"])),
                tuple(sorted(e["topics"])),
                e["lag"],
                e["tps"],
                e["enable"],
                delay=delay,
            )
        )
    return GroupList(
        tuple(rows),
        len(merged),
        tuple(sorted(brokers.values())),
        tuple(errors),
        tuple(sorted(sources)),
        tuple(brokers.items()),
    )


def with_members(rows: Sequence[GroupRow], asked: Sequence[tuple[str, str]] = ()) -> list[GroupRow]:
    """``rows`` with members, consume type, model, version and last seen strategy (one
    GANTRY_GET_ALL_CONSUMER_CONNECTIONS per broker of ``asked``, (address, broker name) pairs:
    GroupList.asked, else the cluster's masters; per-group calls to brokers without the extension)."""
    if not rows:
        return []
    brokers = dict(asked) or _masters()[1]
    conns = consumer_connections([r.name for r in rows], brokers)
    strategies = cache.get_many([strategy_key(r.name) for r in rows])
    out = []
    for row in rows:
        c = conns[row.name]
        first = c.connections[0] if c.connections else None
        out.append(
            replace(
                row,
                members=len(c.connections),
                consume_type=CONSUME_TYPES.get(c.consume_type or "", c.consume_type),
                message_model=c.message_model,
                version=version_desc(first.version) if first else None,
                strategy=strategies.get(strategy_key(row.name)),
            )
        )
    return out


# -- one group -------------------------------------------------------------------------------------------


Committed = dict[tuple[str, str], dict[int, int]]  # (broker name, topic) -> queue id -> committed offset


def _require_group(name: str, brokers: dict[str, str]) -> tuple[tuple[str, ...], Committed]:
    """The broker names that know the group (config or offsets), and its committed offsets."""
    checked_group(name, "name")
    known, committed = set(), {}
    for addr, survey in group_survey(brokers, lag=False).items():
        if name in survey.configs:
            known.add(brokers[addr])
        for (topic, group), queues in survey.offsets.items():
            if group == name:
                known.add(brokers[addr])
                committed[(brokers[addr], topic)] = queues
    return tuple(sorted(known)), committed


def _connections(name: str, brokers: dict[str, str], info: ClusterInfo) -> GroupConnections:
    return consumer_connections([name], brokers, info=info)[name]


def _stats(name: str, topic: str | None) -> GroupProgress:
    try:
        stats = consume_stats(name, topic)
    except TopicNotFound:
        raise NotFound(f"topic {topic} does not exist") from None
    queues = tuple(
        QueueProgress(mq.topic, mq.broker_name, mq.queue_id, w.broker_offset, w.consumer_offset, w.last_timestamp)
        for mq, w in stats.items()
    )
    delay = consume_delay_s(
        backlog_since((q.broker_offset, q.consumer_offset, q.last_timestamp) for q in queues), _now_ms()
    )
    return GroupProgress(name, topic, queues, stats.consume_tps, delay)


def _known_or_online(name: str) -> tuple[tuple[str, ...], GroupConnections, Committed]:
    """The brokers that know the group, its connections and committed offsets; NotFound when nobody knows it."""
    info, brokers = _readable()
    known, committed = _require_group(name, brokers)
    conns = _connections(name, brokers, info)
    if not known and not conns.online:
        raise NotFound(f"consumer group {name} does not exist")
    return known, conns, committed


def group_known(*, name: str) -> bool:
    """Whether a broker of the current cluster knows the group (its settings or committed offsets) or a member of it is online."""
    try:
        _known_or_online(name)
    except NotFound:
        return False
    return True


def group_progress(*, name: str, topic: str | None = None) -> GroupProgress:
    """The group's progress per queue, as ``mqadmin consumerProgress -g name [-t topic]`` prints it, with the member
    holding each queue (the owner the group page shows, read the same way)."""
    if topic is not None:
        checked_topic(topic)
    _, conns, _ = _known_or_online(name)
    progress, _ = _with_owners(name, _stats(name, topic), conns)
    return progress


def _with_owners(name: str, progress: GroupProgress, conns: GroupConnections) -> tuple[GroupProgress, dict]:
    """The progress with each queue's owner from the members' running infos (those not answering leave theirs
    unknown), and the running infos as they came."""
    infos = live.running_infos(name, conns.broker_addrs) if conns.online else {}
    owners: dict[MessageQueue, str] = {}
    for cid, answer in sorted(infos.items()):
        if isinstance(answer, ConsumerRunningInfo):
            for mq, pq in answer.mq_table.items():
                if not pq.droped:
                    owners.setdefault(mq, cid)
    return replace(progress, queues=tuple(replace(q, owner=owners.get(q.queue)) for q in progress.queues)), infos


def _remember_strategy(group: str, checks: Sequence[LiveCheck]) -> None:
    names = {m.strategy for c in checks for m in c.members if m.answered and m.strategy != live.UNKNOWN}
    if names:
        cache.set(strategy_key(group), ", ".join(sorted(names)), STRATEGY_TTL_S)


def group_detail(*, name: str) -> GroupDetail:
    """Members, subscriptions and per-queue progress with each queue's owner (from the members' running info)."""
    known, conns, _ = _known_or_online(name)
    progress, infos = _with_owners(name, _stats(name, None), conns)
    members = tuple(
        Member(c.client_id, c.client_addr, c.language, version_desc(c.version), conns.broker_addrs.get(c.client_id, ()))
        for c in conns.connections
    )
    subs = tuple(Subscription(s.topic, s.sub_string, s.expression_type) for s in conns.subscription_table.values())
    return GroupDetail(
        name=name,
        online=conns.online,
        consume_type=CONSUME_TYPES.get(conns.consume_type or "", conns.consume_type),
        message_model=conns.message_model,
        consume_from_where=conns.consume_from_where,
        members=members,
        subscriptions=subs,
        progress=progress,
        brokers=known,
        not_answering=tuple(c for c, a in infos.items() if not isinstance(a, ConsumerRunningInfo)),
        errors=conns.errors,
    )


def master_broker_names() -> tuple[str, ...]:
    """The brokers with a master, by name (the reset page's choice of a queue's broker)."""
    return tuple(sorted(set(_masters()[1].values())))


def group_topics(*, name: str) -> tuple[str, ...]:
    """The topics the group subscribes or has offsets for (retry topics left out)."""
    _, conns, _ = _known_or_online(name)
    topics = set(conns.subscription_table) | {q.topic for q in _stats(name, None).queues}
    return tuple(sorted(t for t in topics if not t.startswith(RETRY_GROUP_TOPIC_PREFIX)))


def _route(topic: str) -> TopicRouteData:
    return topic_route_data(checked_topic(topic))


def group_live_checks(*, name: str, topic: str | None = None) -> tuple[LiveCheck, ...]:
    """The live check of each topic the group subscribes (or of ``topic``): who holds which queue."""
    _, conns, _ = _known_or_online(name)
    topics = (
        [checked_topic(topic)]
        if topic is not None
        else [t for t in conns.subscription_table if not t.startswith(RETRY_GROUP_TOPIC_PREFIX)]
    )
    infos = live.running_infos(name, conns.broker_addrs) if conns.online else {}
    checks = []
    for t in sorted(topics):
        queues = tuple(_route(t).subscribe_queues())
        reports = tuple(live.member_report(cid, infos[cid], t) for cid in sorted(infos))
        checks.append(live.live_check(name, t, queues, reports))
    _remember_strategy(name, checks)
    return tuple(checks)


def group_member_ids(*, name: str) -> tuple[str, ...]:
    """The client ids of the group's live members (GET_CONSUMER_CONNECTION_LIST on every master)."""
    checked_group(name, "group")
    info, brokers = _masters()
    return tuple(c.client_id for c in _connections(name, brokers, info).connections)


# -- offset reset ----------------------------------------------------------------------------------------


def group_offset_reset_plan(*, name: str, topic: str, target: ResetTarget) -> OffsetResetPlan:
    """What resetting the group's offsets of ``topic`` to ``target`` would do, per queue.

    The queues are the topic's write queues on each broker of its route, as RocketMQ's broker
    resets them; the new offset is, per target, the one of the message stored at (or nearest to)
    the time (time, now; earliest: the min offset), the max offset (latest), forced (it may move
    forwards or backwards); a reset to one queue's offset plans that queue alone. Nothing changes.
    """
    checked_topic(topic)
    route = _route(topic)
    _, conns, committed = _known_or_online(name)
    queues: dict[MessageQueue, str] = {}
    for qd in route.queue_datas:
        addr = route.master_addr(qd.broker_name)
        if addr:
            queues.update({MessageQueue(topic, qd.broker_name, i): addr for i in range(qd.write_queue_nums)})
    if not queues:
        raise InvalidInput("topic", f"topic {topic} has no write queue on a master broker.")
    if target.to == "offset":
        queues, targets = _one_queue(topic, queues, target)
    else:
        targets = max_offsets(queues) if target.to == "latest" else search_offsets(queues, target.broker_timestamp)
    tops = max_offsets(queues)
    rows = tuple(
        QueueReset(
            mq.broker_name,
            mq.queue_id,
            tops[mq],
            committed.get((mq.broker_name, topic), {}).get(mq.queue_id, -1),
            max(targets[mq], 0),
        )
        for mq in sorted(queues)
    )
    mode = ONLINE if conns.online else OFFLINE
    blocked = ""
    if mode == ONLINE:
        missing = [f"{r.broker_name}:{r.queue_id}" for r in rows if r.before < 0]
        if missing:
            blocked = (
                f"the group is online and has no committed offset for queue{'s' if len(missing) > 1 else ''} "
                f"{', '.join(missing[:8])}{' …' if len(missing) > 8 else ''} of {topic}; RocketMQ resets the offsets "
                "of online members only where they committed one (let them consume first, or stop them)"
            )
    return OffsetResetPlan(name, topic, target, mode, rows, blocked)


def _one_queue(
    topic: str, queues: dict[MessageQueue, str], target: ResetTarget
) -> tuple[dict[MessageQueue, str], dict[MessageQueue, int]]:
    """The one queue of a reset to an offset, checked against the route and the queue's offsets."""
    broker_name, queue_id, offset = target.one_queue()
    brokers = sorted({mq.broker_name for mq in queues})
    if broker_name not in brokers:
        raise InvalidInput(
            "broker", f"{topic} has no write queue on broker {broker_name!r}; its brokers: {', '.join(brokers)}."
        )
    mq = MessageQueue(topic, broker_name, queue_id)
    if mq not in queues:
        count = sum(1 for q in queues if q.broker_name == broker_name)
        raise InvalidInput("queue_id", f"{broker_name} has queues 0-{count - 1} of {topic}, not {queue_id}.")
    one = {mq: queues[mq]}
    low, high = min_offsets(one)[mq], max_offsets(one)[mq]
    if not low <= offset <= high:
        raise InvalidInput(
            "offset",
            f"{broker_name} queue {queue_id} of {topic} holds offsets {low} to {high} "
            f"(the max offset is the next message's); {offset} is outside.",
        )
    return one, {mq: offset}


def reset_queues(plan: OffsetResetPlan) -> tuple[dict[MessageQueue, str], list[str]]:
    """The queue -> master address map of a plan, and the master addresses of its brokers."""
    route = _route(plan.topic)
    queues = {
        MessageQueue(plan.topic, q.broker_name, q.queue_id): route.master_addr(q.broker_name) or "" for q in plan.queues
    }
    return queues, sorted(set(queues.values()))


# -- allocation ------------------------------------------------------------------------------------------


def allocation_input(
    *,
    strategy: str,
    params: dict,
    topic: str | None = None,
    queues: tuple[MessageQueue, ...] | None = None,
    group: str | None = None,
    cids: tuple[str, ...] | None = None,
    **rest,
) -> previews.AllocationInput:
    """An AllocationInput with live queues (the topic's readable queues) and live members (the group's) resolved."""
    if topic is not None:
        queues = tuple(_route(topic).subscribe_queues())
    if group is not None:
        cids = group_member_ids(name=group)
        if not cids:
            _known_or_online(group)  # NotFound for a group nobody knows; one that is offline has no client
    return previews.AllocationInput(
        queues=tuple(queues or ()),
        cids=tuple(cids or ()),
        strategy=strategy,
        params=dict(params or {}),
        topic=topic,
        group=group,
        **rest,
    )


def allocation_preview(*, spec: previews.AllocationInput) -> previews.PreviewResult:
    return previews.preview(spec)


def allocation_compare(
    *, spec: previews.AllocationInput, params_by_strategy: dict | None = None
) -> previews.CompareResult:
    return previews.compare(spec, params_by_strategy)


def client_running_info(*, name: str, client_id: str) -> ClientRunningInfo:
    """One member's running info (subscriptions, settings, per-topic consume figures, process queues)."""
    checked_group(name, "group")
    return running_info.client_running_info(name, client_id)
