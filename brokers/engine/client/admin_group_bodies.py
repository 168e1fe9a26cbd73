"""Reading the bulk bodies about every consumer group of a broker, with fast paths.

The console's group pages read, per broker and per request, bodies that hold every group at once:

- GET_ALL_SUBSCRIPTIONGROUP_CONFIG (SubscriptionGroupWrapper: ``subscriptionGroupTable``);
- GET_ALL_CONSUMER_OFFSET (ConsumerOffsetSerializeWrapper: ``offsetTable`` keyed ``topic@group``,
  queue ids as bare integers, as fastjson writes consumerOffset.json);
- GET_TOPIC_STATS_INFO (TopicStatsTable: ``offsetTable`` keyed by MessageQueue objects);
- GET_BROKER_CONSUME_STATS (ConsumeStatsList: ``[{group: [ConsumeStats, ...]}, ...]``, one
  MessageQueue key per queue of every group: 8,000 for 1,000 groups);
- Gantry's GANTRY_GET_ALL_CONSUMER_CONNECTIONS (``{"groups": [ConsumerConnection + "group"]}``).

A queue's OffsetWrapper also holds ``lastTimestamp``: the store time (ms) of the message at
``consumerOffset - 1``, the last one consumed (0 when none is, or it is gone). The consume delay of
a group (:func:`consume_delay_s`) is measured from the earliest such time over its queues with a
backlog: the messages not consumed yet were stored after it.

Bare integer keys and MessageQueue object keys are beyond the C JSON parser. Topic and group names
hold no quote, brace, comma or colon, so a regular expression reads them exactly, about ten times
faster than the tolerant reader (:mod:`brokers.engine.common.json_compat`), which stays the
fallback for anything else.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from brokers.engine.client.admin_bodies import as_dict, load_object, message_queue_from_key

__all__ = [
    "BrokerGroupSurvey",
    "GroupConfig",
    "backlog_since",
    "consume_delay_s",
    "merge_backlog_since",
    "parse_connections_by_group",
    "parse_consume_stats_list",
    "parse_consumer_offset_table",
    "parse_subscription_group_table",
    "parse_topic_max_offsets",
]


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
    it (``stats_source`` "GET_BROKER_CONSUME_STATS"; :func:`parse_consume_stats_list` gives default
    ``configs``, as that answer names the groups only, and the survey plan fills them from
    GET_ALL_SUBSCRIPTIONGROUP_CONFIG); a broker that answers "request code not supported" gets them
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
    topic_lag: dict[tuple[str, str], int] = field(default_factory=dict)  # (topic, group) -> lag on that topic
    # group -> backlog_since() over its queues here (groups without a backlog left out); GET_BROKER_CONSUME_STATS only
    backlog_since: dict[str, int] = field(default_factory=dict)


def backlog_since(queues: Iterable[tuple[int, int, int]]) -> int | None:
    """The earliest ``lastTimestamp`` (ms) over the queues with a backlog, of (brokerOffset, consumerOffset,
    lastTimestamp) triples: None when no queue is behind, 0 when those behind have consumed nothing yet
    (the time is unknown)."""
    since: int | None = None
    for broker_offset, consumer_offset, last in queues:
        if broker_offset > consumer_offset:
            since = last if since is None or since <= 0 else (since if last <= 0 else min(since, last))
    return since


def merge_backlog_since(values: Iterable[int | None]) -> int | None:
    """One group's backlog_since over several brokers (each value as :func:`backlog_since` gives it)."""
    known = [v for v in values if v is not None]
    if not known:
        return None
    timed = [v for v in known if v > 0]
    return min(timed) if timed else 0


def consume_delay_s(since: int | None, now_ms: int) -> float | None:
    """The consume delay in seconds from a :func:`backlog_since` value: 0 without backlog, None unknown."""
    if since is None:
        return 0.0
    if since <= 0:
        return None
    return max(now_ms - since, 0) / 1000.0


def _group_config(name: str, cfg: dict[str, Any]) -> GroupConfig:
    return GroupConfig(
        str(cfg.get("groupName") or name),
        str(cfg.get("consumeEnable", True)).lower() != "false",
        str(cfg.get("consumeBroadcastEnable", True)).lower() != "false",
        int(cfg.get("retryQueueNums", 1) or 0),
        int(cfg.get("retryMaxTimes", 16) or 0),
    )


def parse_subscription_group_table(body: bytes) -> dict[str, GroupConfig]:
    """Group name -> config of a GET_ALL_SUBSCRIPTIONGROUP_CONFIG body."""
    table = as_dict(load_object(body).get("subscriptionGroupTable"))
    return {str(name): _group_config(str(name), as_dict(cfg)) for name, cfg in table.items()}


_OFFSET_ENTRY = re.compile(rb'"([^"@]+)@([^"]+)":\{([^{}]*)\}')
_QUEUE_MAX = re.compile(rb'"queueId":(\d+),"topic":"[^"]*"\}:\{[^{}]*?"maxOffset":(-?\d+)')


def parse_consumer_offset_table(body: bytes) -> dict[tuple[str, str], dict[int, int]]:
    """(topic, group) -> queue id -> committed offset of a GET_ALL_CONSUMER_OFFSET body."""
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


def parse_topic_max_offsets(body: bytes) -> dict[int, int]:
    """Queue id -> max offset of a GET_TOPIC_STATS_INFO body (one broker's queues of one topic)."""
    found = {int(q): int(o) for q, o in _QUEUE_MAX.findall(body)}
    if found or b"maxOffset" not in body:
        return found
    return {
        message_queue_from_key(k).queue_id: int(as_dict(v).get("maxOffset", 0))
        for k, v in as_dict(load_object(body).get("offsetTable")).items()
    }


# The fast path turns each inline MessageQueue key, as fastjson and json_compat write it (fields
# sorted), into the string "topic\0brokerName\0queueId" so that the C JSON parser reads the body.
_INLINE_MQ_KEY = re.compile(rb'\{"brokerName":"([^"\\]*)","queueId":(\d+),"topic":"([^"\\]*)"\}:')


def _string_key(match: re.Match[bytes]) -> bytes:
    # a callable, not a template: Python 3.11 expands a template in Python for every match
    topic: bytes
    broker: bytes
    queue_id: bytes
    topic, broker, queue_id = match.group(3, 1, 2)
    return b'"' + topic + b"\\u0000" + broker + b"\\u0000" + queue_id + b'":'


def _load_consume_stats_list(body: bytes) -> dict[str, Any]:
    try:
        return as_dict(json.loads(_INLINE_MQ_KEY.sub(_string_key, body)))
    except ValueError:
        return load_object(body)


def _queue_of(key: object) -> tuple[str, int]:
    if isinstance(key, str) and "\0" in key:
        topic, _, queue_id = key.split("\0")
        return topic, int(queue_id)
    mq = message_queue_from_key(key)
    return mq.topic, mq.queue_id


def parse_consume_stats_list(addr: str, body: bytes) -> BrokerGroupSurvey:
    """A survey from a ConsumeStatsList body (``[{group: [ConsumeStats, ...]}, ...]``, every
    subscription group of the broker): lag, TPS and, from the offset tables, topics and offsets."""
    lag: dict[str, int] = {}
    tps: dict[str, float] = {}
    offsets: dict[tuple[str, str], dict[int, int]] = {}
    topic_lag: dict[tuple[str, str], int] = {}
    since: dict[str, int] = {}
    for entry in _load_consume_stats_list(body).get("consumeStatsList") or ():
        for group, stats_list in as_dict(entry).items():
            group_lag = 0
            stamps: list[tuple[int, int, int]] = []
            for stats in map(as_dict, stats_list or ()):
                tps[group] = tps.get(group, 0.0) + float(stats.get("consumeTps", 0) or 0)
                for key, value in as_dict(stats.get("offsetTable")).items():
                    (topic, queue_id), value = _queue_of(key), as_dict(value)
                    consumer_offset = int(value.get("consumerOffset", 0))
                    broker_offset = int(value.get("brokerOffset", 0))
                    behind = broker_offset - consumer_offset
                    stamps.append((broker_offset, consumer_offset, int(value.get("lastTimestamp", 0) or 0)))
                    group_lag += behind
                    pair = (topic, group)
                    topic_lag[pair] = topic_lag.get(pair, 0) + behind
                    per_queue = offsets.get(pair)
                    if per_queue is None:
                        per_queue = offsets[pair] = {}
                    per_queue[queue_id] = consumer_offset
            lag[group] = lag.get(group, 0) + group_lag
            merged = merge_backlog_since((since.get(group), backlog_since(stamps)))
            if merged is not None:
                since[group] = merged
    return BrokerGroupSurvey(
        addr,
        {g: GroupConfig(g) for g in lag},
        offsets,
        lag,
        tps,
        "GET_BROKER_CONSUME_STATS",
        topic_lag=topic_lag,
        backlog_since=since,
    )


def parse_connections_by_group(body: bytes) -> dict[str, dict[str, Any]]:
    """Group -> its ConsumerConnection object, from a GANTRY_GET_ALL_CONSUMER_CONNECTIONS body."""
    out: dict[str, dict[str, Any]] = {}
    for entry in load_object(body).get("groups") or ():
        entry = as_dict(entry)
        if entry.get("group"):
            out[str(entry["group"])] = entry
    return out
