"""Admin calls the engine's admin client does not offer, written Django-side as plans.

Each function builds a plan from the engine's public pieces (:class:`Call`, :class:`Fanout`,
:func:`check`, the body readers of ``admin_bodies``) and runs it on the shared client's driver
(:func:`run`), so it shares connections, timeouts and name-server fail-over with every other
admin call. Batched reads fan out to all brokers at once: one request per broker, never one per
row. Candidates to move into ``brokers/engine/client/admin_plans.py`` once the engine is open
for changes again.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeVar

from brokers.admin_client import get_admin_client
from brokers.engine.client.admin import (
    ClusterInfo,
    Connection,
    ConsumerRunningInfo,
    SubscriptionData,
    parse_cluster_info,
    parse_connections,
    parse_consumer_running_info,
    parse_kv_table,
    parse_subscription_table,
)
from brokers.engine.client.admin_bodies import as_dict, load_object, message_queue_from_key
from brokers.engine.client.plan import Call, Fanout, Plan, Reply, check, first_error
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.errors import RemotingConnectError, RemotingError

T = TypeVar("T")


def run(plan: Plan[T]) -> T:
    """Run a plan on the shared admin client."""
    return get_admin_client().driver.run(plan)


def _failure(reply: Reply | RemotingError, request_code: int) -> RemotingError | None:
    """The error of one Fanout answer, or None when it succeeded."""
    if isinstance(reply, RemotingError):
        return reply
    try:
        check(reply, request_code=request_code)
    except RemotingError as exc:
        return exc
    return None


reply_failure = _failure  # for the other admin_* modules


# -- name servers ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class NamesrvAnswer:
    addr: str
    version: int | None  # the protocol version in the name server's response header
    error: str = ""

    @property
    def live(self) -> bool:
        return not self.error


@dataclass(frozen=True)
class NamesrvSurvey:
    namesrvs: tuple[NamesrvAnswer, ...]
    cluster_info: ClusterInfo | None  # from the first name server that answered


def namesrv_survey_plan(namesrv_addrs: Iterable[str]) -> Plan[NamesrvSurvey]:
    """Ask every name server for the cluster info at once: who answers, with what version."""
    addrs = tuple(namesrv_addrs)
    replies = yield Fanout(tuple(Call(RequestCode.GET_BROKER_CLUSTER_INFO, addr=a) for a in addrs))
    answers, info = [], None
    for addr, reply in zip(addrs, replies):
        error = _failure(reply, RequestCode.GET_BROKER_CLUSTER_INFO)
        if error is not None:
            answers.append(NamesrvAnswer(addr, None, str(error)))
            continue
        answers.append(NamesrvAnswer(addr, reply.command.version if reply.command else None))
        if info is None:
            info = parse_cluster_info(reply.body)
    return NamesrvSurvey(tuple(answers), info)


def namesrv_survey() -> NamesrvSurvey:
    client = get_admin_client()
    return client.driver.run(namesrv_survey_plan(client.namesrv_addrs))


def require_cluster_info(survey: NamesrvSurvey) -> ClusterInfo:
    """The survey's cluster info; RemotingConnectError (503) when no name server answered."""
    if survey.cluster_info is None:
        detail = "; ".join(f"{a.addr}: {a.error}" for a in survey.namesrvs)
        raise RemotingConnectError(f"no name server answered ({detail})", ";".join(a.addr for a in survey.namesrvs))
    return survey.cluster_info


def delete_topic_in_namesrv_plan(namesrv_addrs: Iterable[str], topic: str, cluster: str | None = None) -> Plan[None]:
    """Drop the topic's route on every name server (only that cluster's brokers' queues when named)."""
    ext: dict[str, object] = {"topic": topic}
    if cluster is not None:
        ext["clusterName"] = cluster
    replies = yield Fanout(tuple(Call(RequestCode.DELETE_TOPIC_IN_NAMESRV, ext, addr=a) for a in namesrv_addrs))
    if not any(isinstance(r, Reply) and r.code == ResponseCode.SUCCESS for r in replies):
        first_error(replies, RequestCode.DELETE_TOPIC_IN_NAMESRV)


# -- brokers, batched ------------------------------------------------------------------------------


def _fanout_to_brokers(code: int, addrs: Iterable[str], ext: dict[str, object] | None = None) -> Plan[dict[str, Reply | RemotingError]]:
    addrs = tuple(dict.fromkeys(addrs))
    if not addrs:
        return {}
    replies = yield Fanout(tuple(Call(code, ext, addr=a) for a in addrs))
    return dict(zip(addrs, replies))


fanout_to_brokers = _fanout_to_brokers  # for the other admin_* modules


def all_topic_configs(addrs: Iterable[str]) -> dict[str, dict[str, TopicConfig] | RemotingError]:
    """Every broker's topic table (GET_ALL_TOPIC_CONFIG), one request per broker, all at once."""
    out: dict[str, dict[str, TopicConfig] | RemotingError] = {}
    for addr, reply in run(_fanout_to_brokers(RequestCode.GET_ALL_TOPIC_CONFIG, addrs)).items():
        error = _failure(reply, RequestCode.GET_ALL_TOPIC_CONFIG)
        if error is not None:
            out[addr] = error
            continue
        table = as_dict(load_object(reply.body).get("topicConfigTable"))
        out[addr] = {str(name): TopicConfig.from_json(as_dict(cfg)) for name, cfg in table.items()}
    return out


def runtime_infos(addrs: Iterable[str]) -> dict[str, dict[str, str] | RemotingError]:
    """Every broker's runtime figures (GET_BROKER_RUNTIME_INFO), all at once."""
    out: dict[str, dict[str, str] | RemotingError] = {}
    for addr, reply in run(_fanout_to_brokers(RequestCode.GET_BROKER_RUNTIME_INFO, addrs)).items():
        error = _failure(reply, RequestCode.GET_BROKER_RUNTIME_INFO)
        out[addr] = error if error is not None else parse_kv_table(reply.body)
    return out


def topic_consumer_groups(topic: str, addrs: Iterable[str]) -> tuple[list[str], list[str]]:
    """The groups that consume ``topic`` (QUERY_TOPIC_CONSUME_BY_WHO on each broker of its route).

    Returns the sorted group names and the errors of brokers that did not answer.
    """
    groups: set[str] = set()
    errors: list[str] = []
    for addr, reply in run(_fanout_to_brokers(RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, addrs, {"topic": topic})).items():
        error = _failure(reply, RequestCode.QUERY_TOPIC_CONSUME_BY_WHO)
        if error is not None:
            errors.append(f"{addr}: {error}")
            continue
        groups.update(str(g) for g in load_object(reply.body).get("groupList") or ())
    return sorted(groups), errors


def delete_topic_in_broker(addr: str, topic: str) -> None:
    """Delete the topic's config, offsets and queues on one broker (DELETE_TOPIC_IN_BROKER)."""

    def plan() -> Plan[None]:
        check((yield Call(RequestCode.DELETE_TOPIC_IN_BROKER, {"topic": topic}, addr=addr)),
              request_code=RequestCode.DELETE_TOPIC_IN_BROKER)

    run(plan())


def delete_topic_in_namesrv(topic: str, cluster: str | None = None) -> None:
    client = get_admin_client()
    client.driver.run(delete_topic_in_namesrv_plan(client.namesrv_addrs, topic, cluster))


# -- consumer groups, batched ----------------------------------------------------------------------

NOT_SUPPORTED = ResponseCode.REQUEST_CODE_NOT_SUPPORTED


@dataclass(frozen=True)
class GroupConfig:
    """A subscription group's config on one broker (an entry of GET_ALL_SUBSCRIPTIONGROUP_CONFIG)."""

    group_name: str
    consume_enable: bool = True
    consume_broadcast_enable: bool = True
    retry_queue_nums: int = 1
    retry_max_times: int = 16


@dataclass(frozen=True)
class BrokerGroupSurvey:
    """What one broker holds about every consumer group, read in bulk.

    ``lag`` and ``tps`` per group come from GET_BROKER_CONSUME_STATS (RocketMQ's
    ``brokerConsumeStats``: every group's consume stats in one answer) when the broker serves
    it (``stats_source`` "GET_BROKER_CONSUME_STATS"; ``configs`` then hold defaults, as that
    answer names the groups only); a broker that answers "request code not supported" gets them
    from its offset table and one GET_TOPIC_STATS_INFO per topic that has committed offsets
    ("GET_TOPIC_STATS_INFO"). Either way over the topic's write queues, as RocketMQ counts them,
    a queue without a committed offset counting from 0.
    """

    addr: str
    configs: dict[str, GroupConfig]
    offsets: dict[tuple[str, str], dict[int, int]]  # (topic, group) -> queue id -> committed offset
    lag: dict[str, int]
    tps: dict[str, float]
    stats_source: str = ""
    error: str = ""


def _group_config(name: str, cfg: dict) -> GroupConfig:
    return GroupConfig(
        str(cfg.get("groupName") or name),
        str(cfg.get("consumeEnable", True)).lower() != "false",
        str(cfg.get("consumeBroadcastEnable", True)).lower() != "false",
        int(cfg.get("retryQueueNums", 1) or 0),
        int(cfg.get("retryMaxTimes", 16) or 0),
    )


# Fast paths for the two bulk bodies the group list reads on every request. fastjson writes
# consumerOffset.json with bare integer queue ids and a topic's stats keyed by MessageQueue
# objects, both beyond the C JSON parser; topic and group names hold no quote, brace, comma or
# colon, so a regular expression reads them exactly, about ten times faster than the tolerant
# reader, which stays the fallback for anything else.
_OFFSET_ENTRY = re.compile(rb'"([^"@]+)@([^"]+)":\{([^{}]*)\}')
_QUEUE_MAX = re.compile(rb'"queueId":(\d+),"topic":"[^"]*"\}:\{[^{}]*?"maxOffset":(-?\d+)')


def _offset_table(body: bytes) -> dict[tuple[str, str], dict[int, int]]:
    out: dict[tuple[str, str], dict[int, int]] = {}
    try:
        for m in _OFFSET_ENTRY.finditer(body):
            queues = {}
            for pair in m.group(3).split(b","):
                if pair:
                    qid, _, offset = pair.partition(b":")
                    queues[int(qid.strip(b'"'))] = int(offset)
            out[(m.group(1).decode(), m.group(2).decode())] = queues
        if out or b"@" not in body:
            return out
    except ValueError:
        out = {}
    for key, queues in as_dict(load_object(body).get("offsetTable")).items():
        topic, sep, group = str(key).partition("@")
        if sep:
            out[(topic, group)] = {int(q): int(o) for q, o in as_dict(queues).items()}
    return out


def _topic_max_offsets(body: bytes) -> dict[int, int]:
    """Queue id -> max offset of a GET_TOPIC_STATS_INFO body (one broker's queues of one topic)."""
    found = {int(q): int(o) for q, o in _QUEUE_MAX.findall(body)}
    if found or b"maxOffset" not in body:
        return found
    return {message_queue_from_key(k).queue_id: int(as_dict(v).get("maxOffset", 0))
            for k, v in as_dict(load_object(body).get("offsetTable")).items()}


# A ConsumeStatsList holds one MessageQueue key per queue of every group (8,000 for 1,000 groups):
# the fast path turns each inline key, as fastjson and json_compat write it (fields sorted), into
# the string "topic\0brokerName\0queueId" so that the C JSON parser reads the body.
_INLINE_MQ_KEY = re.compile(rb'\{"brokerName":"([^"\\]*)","queueId":(\d+),"topic":"([^"\\]*)"\}:')


def _load_consume_stats_list(body: bytes) -> dict:
    try:
        return as_dict(json.loads(_INLINE_MQ_KEY.sub(rb'"\3\\u0000\1\\u0000\2":', body)))
    except ValueError:
        return load_object(body)


def _queue_of(key: object) -> tuple[str, int]:
    if isinstance(key, str) and "\0" in key:
        topic, _, queue_id = key.split("\0")
        return topic, int(queue_id)
    mq = message_queue_from_key(key)
    return mq.topic, mq.queue_id


def _broker_consume_stats(addr: str, body: bytes) -> BrokerGroupSurvey:
    """A survey from a ConsumeStatsList body (``[{group: [ConsumeStats, ...]}, ...]``, every
    subscription group of the broker): lag, TPS and, from the offset tables, topics and offsets."""
    lag: dict[str, int] = {}
    tps: dict[str, float] = {}
    offsets: dict[tuple[str, str], dict[int, int]] = {}
    for entry in _load_consume_stats_list(body).get("consumeStatsList") or ():
        for group, stats_list in as_dict(entry).items():
            lag.setdefault(group, 0)
            for stats in map(as_dict, stats_list or ()):
                tps[group] = tps.get(group, 0.0) + float(stats.get("consumeTps", 0) or 0)
                for key, value in as_dict(stats.get("offsetTable")).items():
                    (topic, queue_id), value = _queue_of(key), as_dict(value)
                    consumer_offset = int(value.get("consumerOffset", 0))
                    lag[group] += int(value.get("brokerOffset", 0)) - consumer_offset
                    offsets.setdefault((topic, group), {})[queue_id] = consumer_offset
    return BrokerGroupSurvey(addr, {g: GroupConfig(g) for g in lag}, offsets, lag, tps, "GET_BROKER_CONSUME_STATS")


def _lag_from_topic_stats(offsets: dict[tuple[str, str], dict[int, int]], max_offsets: dict[str, dict[int, int]]) -> dict[str, int]:
    lag: dict[str, int] = {}
    for (topic, group), committed in offsets.items():
        total = lag.get(group, 0)
        for queue_id, top in max_offsets.get(topic, {}).items():  # a page of 1,000 groups runs this 8,000 times
            offset = committed.get(queue_id, 0)
            behind = top - offset if offset > 0 else top
            if behind > 0:
                total += behind
        lag[group] = total
    return lag


def _bulk_tables_plan(addrs: tuple[str, ...]) -> Plan[dict[str, BrokerGroupSurvey]]:
    """GET_ALL_SUBSCRIPTIONGROUP_CONFIG and GET_ALL_CONSUMER_OFFSET of each broker, all at once."""
    codes = (RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, RequestCode.GET_ALL_CONSUMER_OFFSET)
    calls = tuple(Call(code, addr=a) for a in addrs for code in codes)
    replies = (yield Fanout(calls)) if calls else []
    out: dict[str, BrokerGroupSurvey] = {}
    for i, addr in enumerate(addrs):
        groups_reply, offsets_reply = replies[2 * i: 2 * i + 2]
        error = _failure(groups_reply, codes[0]) or _failure(offsets_reply, codes[1])
        if error is not None:
            out[addr] = BrokerGroupSurvey(addr, {}, {}, {}, {}, error=str(error))
            continue
        table = as_dict(load_object(groups_reply.body).get("subscriptionGroupTable"))
        configs = {str(name): _group_config(str(name), as_dict(cfg)) for name, cfg in table.items()}
        out[addr] = BrokerGroupSurvey(addr, configs, _offset_table(offsets_reply.body), {}, {})
    return out


def group_survey_plan(addrs: Iterable[str], lag: bool = True) -> Plan[dict[str, BrokerGroupSurvey]]:
    """Every group of each broker with its committed offsets and (with ``lag``) its lag and TPS.

    With ``lag``: GET_BROKER_CONSUME_STATS, one request per broker, all at once. A broker that
    does not serve it ("request code not supported") is read with GET_ALL_SUBSCRIPTIONGROUP_CONFIG
    and GET_ALL_CONSUMER_OFFSET, plus one GET_TOPIC_STATS_INFO per topic with committed offsets
    for the queues' max offsets. Without ``lag``: the configs and offset tables only (exact
    committed offsets, and each group's consumeEnable).
    """
    addrs = tuple(dict.fromkeys(addrs))
    out: dict[str, BrokerGroupSurvey] = {}
    rest = addrs
    if lag and addrs:
        replies = yield Fanout(tuple(Call(RequestCode.GET_BROKER_CONSUME_STATS, {"isOrder": False}, addr=a) for a in addrs))
        rest = ()
        for addr, reply in zip(addrs, replies):
            if isinstance(reply, Reply) and reply.code == ResponseCode.SUCCESS:
                out[addr] = _broker_consume_stats(addr, reply.body)
            elif isinstance(reply, Reply) and reply.code == NOT_SUPPORTED:
                rest += (addr,)
            else:
                out[addr] = BrokerGroupSurvey(addr, {}, {}, {}, {}, error=str(_failure(reply, RequestCode.GET_BROKER_CONSUME_STATS)))
    tables = yield from _bulk_tables_plan(rest)
    out.update(tables)
    if not lag:
        return out
    fallback = [(addr, t) for addr, survey in tables.items() if not survey.error for t in sorted({topic for topic, _ in survey.offsets})]
    max_offsets: dict[str, dict[str, dict[int, int]]] = {}
    if fallback:
        stats_replies = yield Fanout(tuple(Call(RequestCode.GET_TOPIC_STATS_INFO, {"topic": t}, addr=a) for a, t in fallback))
        for (addr, topic), reply in zip(fallback, stats_replies):
            if _failure(reply, RequestCode.GET_TOPIC_STATS_INFO) is None:  # else deleted since: nothing to lag behind
                max_offsets.setdefault(addr, {})[topic] = _topic_max_offsets(reply.body)
    for addr, survey in tables.items():
        if not survey.error:
            out[addr] = BrokerGroupSurvey(addr, survey.configs, survey.offsets, _lag_from_topic_stats(survey.offsets, max_offsets.get(addr, {})),
                                          {}, "GET_TOPIC_STATS_INFO")
    return out


def group_survey(addrs: Iterable[str], lag: bool = True) -> dict[str, BrokerGroupSurvey]:
    return run(group_survey_plan(addrs, lag))


@dataclass(frozen=True)
class GroupConnections:
    """A group's live connections merged over brokers, and which brokers see each client."""

    group: str
    connections: tuple[Connection, ...]  # one per client id, sorted
    broker_addrs: dict[str, tuple[str, ...]]  # client id -> brokers it is connected to
    subscription_table: dict[str, SubscriptionData]
    consume_type: str | None = None
    message_model: str | None = None
    consume_from_where: str | None = None
    errors: tuple[str, ...] = ()  # brokers that did not answer

    @property
    def online(self) -> bool:
        return bool(self.connections)


def _connections_by_group(body: bytes) -> dict[str, dict]:
    """Group -> its ConsumerConnection object, from a GANTRY_GET_ALL_CONSUMER_CONNECTIONS body."""
    out: dict[str, dict] = {}
    for entry in load_object(body).get("groups") or ():
        entry = as_dict(entry)
        if entry.get("group"):
            out[str(entry["group"])] = entry
    return out


def consumer_connections_plan(groups: Iterable[str], addrs: Iterable[str]) -> Plan[dict[str, GroupConnections]]:
    """The connections of ``groups`` on each broker, merged per group.

    One GANTRY_GET_ALL_CONSUMER_CONNECTIONS per broker, all at once (a Gantry extension: every
    online group's ConsumerConnection in one answer; docs/protocol.md). A broker that answers
    "request code not supported" (Apache RocketMQ 4.x has no request for every group's
    connections) then gets one GET_CONSUMER_CONNECTION_LIST per group, all at once; callers
    keep ``groups`` to what they show.
    """
    groups, addrs = tuple(dict.fromkeys(groups)), tuple(dict.fromkeys(addrs))
    merged: dict[str, dict] = {g: {"conns": {}, "where": {}, "subs": {}, "errors": [], "meta": {}} for g in groups}

    def add(group: str, addr: str, obj: dict) -> None:
        m = merged[group]
        for c in parse_connections(obj):
            m["conns"].setdefault(c.client_id, c)
            m["where"].setdefault(c.client_id, []).append(addr)
        m["subs"].update(parse_subscription_table(obj.get("subscriptionTable") or {}))
        for key in ("consumeType", "messageModel", "consumeFromWhere"):
            m["meta"].setdefault(key, obj.get(key))

    per_group: tuple[str, ...] = ()
    if groups and addrs:
        code = RequestCode.GANTRY_GET_ALL_CONSUMER_CONNECTIONS
        replies = yield Fanout(tuple(Call(code, addr=a) for a in addrs))
        for addr, reply in zip(addrs, replies):
            if isinstance(reply, Reply) and reply.code == NOT_SUPPORTED:
                per_group += (addr,)
                continue
            error = _failure(reply, code)
            if error is not None:
                for g in groups:
                    merged[g]["errors"].append(f"{addr}: {error}")
                continue
            online = _connections_by_group(reply.body)
            for g in groups:
                if g in online:
                    add(g, addr, online[g])
    pairs = [(g, a) for g in groups for a in per_group]
    replies = (yield Fanout(tuple(Call(RequestCode.GET_CONSUMER_CONNECTION_LIST, {"consumerGroup": g}, addr=a) for g, a in pairs))) if pairs else []
    for (group, addr), reply in zip(pairs, replies):
        if isinstance(reply, Reply) and reply.code == ResponseCode.CONSUMER_NOT_ONLINE:
            continue
        error = _failure(reply, RequestCode.GET_CONSUMER_CONNECTION_LIST)
        if error is not None:
            merged[group]["errors"].append(f"{addr}: {error}")
            continue
        add(group, addr, load_object(reply.body))
    return {
        g: GroupConnections(
            g, tuple(m["conns"][c] for c in sorted(m["conns"])), {c: tuple(a) for c, a in sorted(m["where"].items())},
            dict(sorted(m["subs"].items())), m["meta"].get("consumeType"), m["meta"].get("messageModel"),
            m["meta"].get("consumeFromWhere"), tuple(m["errors"]))
        for g, m in merged.items()
    }


def consumer_connections(groups: Iterable[str], addrs: Iterable[str]) -> dict[str, GroupConnections]:
    return run(consumer_connections_plan(groups, addrs))


RUNNING_INFO_TIMEOUT_S = 5.0  # a member that has not answered by then is shown as not answering (the broker waits 10 s)


def running_infos_plan(targets: dict[tuple[str, str], str], timeout_s: float) -> Plan[dict[tuple[str, str], ConsumerRunningInfo | RemotingError]]:
    """GET_CONSUMER_RUNNING_INFO of each (group, client id) through the broker address given, all at once."""
    keys = sorted(targets)
    calls = tuple(Call(RequestCode.GET_CONSUMER_RUNNING_INFO, {"consumerGroup": g, "clientId": c, "jstackEnable": False},
                       addr=targets[(g, c)], timeout_s=timeout_s) for g, c in keys)
    replies = (yield Fanout(calls)) if calls else []
    out: dict[tuple[str, str], ConsumerRunningInfo | RemotingError] = {}
    for key, reply in zip(keys, replies):
        error = _failure(reply, RequestCode.GET_CONSUMER_RUNNING_INFO)
        out[key] = error if error is not None else parse_consumer_running_info(reply.body)
    return out


def consumer_running_infos(group: str, targets: dict[str, str], timeout_s: float = RUNNING_INFO_TIMEOUT_S) -> dict[str, ConsumerRunningInfo | RemotingError]:
    """Each member's running info (client id -> a broker it is connected to), all at once."""
    answers = run(running_infos_plan({(group, cid): addr for cid, addr in targets.items()}, timeout_s))
    return {cid: answer for (_, cid), answer in answers.items()}
