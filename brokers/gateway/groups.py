"""Every consumer group of each broker, read in bulk: configs, committed offsets, lag and TPS.

One plan, :func:`group_survey_plan`, one request per broker (all at once) whatever the number of
groups; the bodies are read by :mod:`brokers.engine.client.admin_group_bodies`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from brokers.engine.client.admin_group_bodies import (
    BrokerGroupSurvey,
    GroupConfig,
    backlog_since,
    consume_delay_s,
    merge_backlog_since,
    parse_consume_stats_list,
    parse_consumer_offset_table,
    parse_subscription_group_table,
    parse_topic_max_offsets,
)
from brokers.engine.client.admin_types import ConsumeStats
from brokers.engine.client.plan import Call, Fanout, Plan, Reply
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.errors import RemotingError
from brokers.engine.remoting.headers.brokers import GetConsumeStatsInBrokerRequestHeader
from brokers.gateway.client import answered, get_admin_client, reply_failure, run
from brokers.engine.remoting.headers.topics import GetTopicStatsInfoRequestHeader

__all__ = [
    "BrokerGroupSurvey",
    "ConsumeStats",
    "GroupConfig",
    "backlog_since",
    "consume_delay_s",
    "consume_stats",
    "merge_backlog_since",
    "group_survey",
    "group_survey_plan",
    "group_lag",
    "topic_lag_from_topic_stats",
]

NOT_SUPPORTED = ResponseCode.REQUEST_CODE_NOT_SUPPORTED


def topic_lag_from_topic_stats(
    offsets: dict[tuple[str, str], dict[int, int]], max_offsets: dict[str, dict[int, int]]
) -> dict[tuple[str, str], int]:
    """Each (topic, group)'s lag over the queues of ``max_offsets`` (topic -> queue id -> max offset),
    a queue without a committed offset counting from 0."""
    lag: dict[tuple[str, str], int] = {}
    for key, committed in offsets.items():
        total = 0
        for queue_id, top in max_offsets.get(key[0], {}).items():  # a page of 1,000 groups runs this 8,000 times
            offset = committed.get(queue_id, 0)
            behind = top - offset if offset > 0 else top
            if behind > 0:
                total += behind
        lag[key] = total
    return lag


def group_lag(topic_lag: dict[tuple[str, str], int]) -> dict[str, int]:
    """Each group's lag: the sum of its (topic, group) lags."""
    lag: dict[str, int] = {}
    for (_, group), behind in topic_lag.items():
        lag[group] = lag.get(group, 0) + behind
    return lag


def _bulk_tables_plan(
    addrs: tuple[str, ...], groups_replies: dict[str, Reply | RemotingError] | None = None
) -> Plan[dict[str, BrokerGroupSurvey]]:
    """GET_ALL_SUBSCRIPTIONGROUP_CONFIG and GET_ALL_CONSUMER_OFFSET of each broker, all at once
    (the former only where ``groups_replies`` holds no answer of it yet)."""
    have = dict(groups_replies or {})
    codes = (RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, RequestCode.GET_ALL_CONSUMER_OFFSET)
    calls = tuple(Call(code, addr=a) for a in addrs for code in codes if a not in have or code != codes[0])
    replies = iter((yield Fanout(calls)) if calls else [])
    out: dict[str, BrokerGroupSurvey] = {}
    for addr in addrs:
        groups_reply = have[addr] if addr in have else next(replies)
        offsets_reply = next(replies)
        groups_answer, offsets_answer = answered(groups_reply, codes[0]), answered(offsets_reply, codes[1])
        if isinstance(groups_answer, RemotingError) or isinstance(offsets_answer, RemotingError):
            error = groups_answer if isinstance(groups_answer, RemotingError) else offsets_answer
            out[addr] = BrokerGroupSurvey(addr, {}, {}, {}, {}, error=str(error))
            continue
        configs = parse_subscription_group_table(groups_answer.body)
        out[addr] = BrokerGroupSurvey(addr, configs, parse_consumer_offset_table(offsets_answer.body), {}, {})
    return out


def group_survey_plan(addrs: Iterable[str], lag: bool = True) -> Plan[dict[str, BrokerGroupSurvey]]:
    """Every group of each broker with its committed offsets and (with ``lag``) its lag and TPS.

    With ``lag``: GET_BROKER_CONSUME_STATS and GET_ALL_SUBSCRIPTIONGROUP_CONFIG (the former names
    the groups only; their consumeEnable is in the latter), per broker, all at once. A broker that
    does not serve it ("request code not supported") is read with the GET_ALL_SUBSCRIPTIONGROUP_CONFIG
    it answered and GET_ALL_CONSUMER_OFFSET, plus one GET_TOPIC_STATS_INFO per topic with committed offsets
    for the queues' max offsets. Without ``lag``: the configs and offset tables only (exact
    committed offsets, and each group's consumeEnable).
    """
    addrs = tuple(dict.fromkeys(addrs))
    out: dict[str, BrokerGroupSurvey] = {}
    rest = addrs
    groups_replies: dict[str, Reply | RemotingError] = {}
    if lag and addrs:
        codes = (RequestCode.GET_BROKER_CONSUME_STATS, RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG)
        stats = GetConsumeStatsInBrokerRequestHeader(is_order=False).encode()
        replies = yield Fanout(
            tuple(Call(code, stats if code == codes[0] else None, addr=a) for a in addrs for code in codes)
        )
        rest = ()
        for i, addr in enumerate(addrs):
            reply, groups_reply = replies[2 * i : 2 * i + 2]
            groups_replies[addr] = groups_reply
            if isinstance(reply, Reply) and reply.code == ResponseCode.SUCCESS:
                error = reply_failure(groups_reply, codes[1])
                if error is not None:
                    out[addr] = BrokerGroupSurvey(addr, {}, {}, {}, {}, error=str(error))
                    continue
                survey = parse_consume_stats_list(addr, reply.body)  # names the groups, with default configs
                out[addr] = replace(survey, configs=survey.configs | parse_subscription_group_table(groups_reply.body))
            elif isinstance(reply, Reply) and reply.code == NOT_SUPPORTED:
                rest += (addr,)
            else:
                out[addr] = BrokerGroupSurvey(
                    addr, {}, {}, {}, {}, error=str(reply_failure(reply, RequestCode.GET_BROKER_CONSUME_STATS))
                )
    tables = yield from _bulk_tables_plan(rest, groups_replies)
    out.update(tables)
    if not lag:
        return out
    fallback = [
        (addr, t)
        for addr, survey in tables.items()
        if not survey.error
        for t in sorted({topic for topic, _ in survey.offsets})
    ]
    max_offsets: dict[str, dict[str, dict[int, int]]] = {}
    if fallback:
        stats_replies = yield Fanout(
            tuple(
                Call(RequestCode.GET_TOPIC_STATS_INFO, GetTopicStatsInfoRequestHeader(topic=t).encode(), addr=a)
                for a, t in fallback
            )
        )
        for (addr, topic), reply in zip(fallback, stats_replies):
            if (
                reply_failure(reply, RequestCode.GET_TOPIC_STATS_INFO) is None
            ):  # else deleted since: nothing to lag behind
                max_offsets.setdefault(addr, {})[topic] = parse_topic_max_offsets(reply.body)
    for addr, survey in tables.items():
        if not survey.error:
            topic_lag = topic_lag_from_topic_stats(survey.offsets, max_offsets.get(addr, {}))
            out[addr] = BrokerGroupSurvey(
                addr,
                survey.configs,
                survey.offsets,
                group_lag(topic_lag),
                {},
                "GET_TOPIC_STATS_INFO",
                topic_lag=topic_lag,
            )
    return out


def group_survey(addrs: Iterable[str], lag: bool = True) -> dict[str, BrokerGroupSurvey]:
    return run(group_survey_plan(addrs, lag))


def consume_stats(group: str, topic: str | None = None) -> ConsumeStats:
    """The group's broker offset, consumer offset and last timestamp per queue (of ``topic``, or every
    topic it consumes) and its consume TPS (GET_CONSUME_STATS, as ``mqadmin consumerProgress``);
    TopicNotFound when ``topic`` has no route."""
    return get_admin_client().examine_consume_stats(group, topic)
