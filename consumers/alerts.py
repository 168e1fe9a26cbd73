"""Overview alerts of consumer groups: queues no member holds, or two members hold.

Listed in ``settings.GANTRY_ALERT_SOURCES``. The live check asks every member of every online
clustering group for its running info, so a scan costs, at once: one
GET_ALL_SUBSCRIPTIONGROUP_CONFIG and GET_ALL_CONSUMER_OFFSET per master, one
GET_CONSUMER_CONNECTION_LIST per group and master, one GET_CONSUMER_RUNNING_INFO per member, and
a route per subscribed topic. The overview polls every 5 s; the result is kept SCAN_TTL_S.
"""

from __future__ import annotations

import dataclasses

from django.core.cache import cache

from brokers.engine.common.constants import RETRY_GROUP_TOPIC_PREFIX
from brokers.gateway.cluster import readable_by_addr
from brokers.gateway.connections import consumer_connections, running_infos
from brokers.gateway.errors import TopicNotFound
from brokers.gateway.groups import group_survey
from brokers.gateway.overview import Alert
from brokers.gateway.topic_routes import topic_route
from brokers.gateway.types import ClusterInfo
from consumers import live
from consumers.selectors import STRATEGY_TTL_S, USER, group_kind, strategy_key
from consumers.types import LiveCheck

SCAN_TTL_S = 60  # a group's members are asked at most once a minute by the overview
CACHE_KEY = "gantry:alerts:consumer-groups:"
SHOWN_QUEUES = 6  # queues named in one alert


def _names(queues) -> str:
    shown = ", ".join(f"{q.broker_name}:{q.queue_id}" for q in list(queues)[:SHOWN_QUEUES])
    return shown + (" …" if len(queues) > SHOWN_QUEUES else "")


def scan(info: ClusterInfo) -> list[LiveCheck]:
    """The live check of every topic of every online clustering user group."""
    brokers = readable_by_addr(info)  # a slave for a broker whose master is down
    seen: set[str] = set()
    for survey in group_survey(brokers, lag=False).values():
        seen.update(survey.configs)
        seen.update(g for _, g in survey.offsets)
    groups = sorted(g for g in seen if group_kind(g) == USER)
    conns = {
        g: c
        for g, c in consumer_connections(groups, brokers, info=info).items()
        if c.online and (c.message_model or "CLUSTERING") == "CLUSTERING"
    }
    targets = {(g, cid): addrs[0] for g, c in conns.items() for cid, addrs in c.broker_addrs.items() if addrs}
    answers = running_infos(targets)
    checks, strategies = [], {}
    for group, c in sorted(conns.items()):
        infos = {cid: answers[(group, cid)] for (g, cid) in answers if g == group}
        for topic in sorted(t for t in c.subscription_table if not t.startswith(RETRY_GROUP_TOPIC_PREFIX)):
            try:
                queues = tuple(topic_route(topic).subscribe_queues())
            except TopicNotFound:
                continue  # subscribed to a topic that is gone: nothing to hold
            check = live.live_check(
                group, topic, queues, tuple(live.member_report(cid, infos[cid], topic) for cid in sorted(infos))
            )
            checks.append(check)
            names = sorted({m.strategy for m in check.members if m.answered and m.strategy != live.UNKNOWN})
            if names:
                strategies[strategy_key(group)] = ", ".join(names)
    cache.set_many(strategies, STRATEGY_TTL_S)
    return checks


def _alerts(checks: list[LiveCheck]) -> list[Alert]:
    out = []
    for c in checks:
        target = f"{c.group}/{c.topic}"
        if c.unowned and not c.not_answering:
            out.append(
                Alert(
                    "warning",
                    "group_queues_unowned",
                    target,
                    f"consumer group {c.group}: {len(c.unowned)} queue(s) of {c.topic} held by no member ({_names(c.unowned)})",
                )
            )
        if c.doubly_owned:
            out.append(
                Alert(
                    "warning",
                    "group_queues_shared",
                    target,
                    f"consumer group {c.group}: {len(c.doubly_owned)} queue(s) of {c.topic} held by several members "
                    f"({_names([r.queue for r in c.doubly_owned])})",
                )
            )
    return out


def unowned_queue_alerts(info: ClusterInfo) -> list[Alert]:
    """Alerts for groups whose members leave queues unheld (or hold one twice), from a cached scan."""
    key = CACHE_KEY + ";".join(sorted(readable_by_addr(info)))
    cached = cache.get(key)
    if cached is None:
        cached = [dataclasses.asdict(a) for a in _alerts(scan(info))]
        cache.set(key, cached, SCAN_TTL_S)
    return [Alert(**a) for a in cached]
