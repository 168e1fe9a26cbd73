"""Reads of stored messages: by key, by message id, by topic and store-time range (paged).

- by key: QUERY_MESSAGE on every broker of the topic's route (the key index; KEYS or UNIQ_KEY),
  at most 64 per broker (the broker's cap), optionally within a store-time range;
- by id: an offset message id names its broker and commit-log offset (VIEW_MESSAGE_BY_ID to that
  broker, only when it is a member of this cluster: brokers.gateway.message_ids); a client-made
  id (UNIQ_KEY) needs the topic and goes through the key index;
- by time: each queue's offsets at the range's ends (SEARCH_OFFSET_BY_TIMESTAMP, all queues at
  once), then the newest ``page * page_size`` of each queue's range (store times grow along a
  queue), read with PULL_MESSAGE as RocketMQ's tools do (group TOOLS_CONSUMER, no offset
  committed), merged by store time and sliced to the page.

Results are newest first (by store time), by key and by time alike, as rocketmq-dashboard lists them.

Nothing here consumes: no offset of any group moves.
"""

from __future__ import annotations

from collections.abc import Iterable

from brokers.engine.client.simple import TOOLS_CONSUMER_GROUP
from brokers.engine.common.message import MessageExt
from brokers.engine.common.message_queue import MessageQueue
from brokers.gateway.cluster import broker_names_by_addr
from brokers.gateway.errors import BrokerSystemError, MQClientError, RemotingError
from brokers.gateway.message_keys import MAX_TIMESTAMP, query_message_by_key
from brokers.gateway.message_ids import MessageIdNotInCluster, resolve_offset_msg_id, view_message_in_cluster
from brokers.gateway.queues import max_offsets, min_offsets, pull_messages, search_offsets
from brokers.gateway.types import TopicRouteData
from console.errors import InvalidInput, NotFound
from topics import selectors
from topics.types import BODY_SHOWN_BYTES, MessageList, MessageView

MAX_KEY_RESULTS = 64  # QUERY_MESSAGE's cap per broker (maxMsgsNumBatch)
MAX_PAGE_SIZE = 100
DEFAULT_PAGE_SIZE = 20


def _broker_names() -> dict[str, str]:
    """Broker address -> broker name, every address of every broker (masters and slaves)."""
    return broker_names_by_addr(selectors.cluster_info())


def message_view(msg: MessageExt, names: dict[str, str], broker_name: str | None = None) -> MessageView:
    return MessageView(
        msg_id=msg.msg_id,
        topic=msg.topic,
        broker_name=broker_name or names.get(msg.store_host, msg.store_host),
        queue_id=msg.queue_id,
        queue_offset=msg.queue_offset,
        born_timestamp=msg.born_timestamp,
        store_timestamp=msg.store_timestamp,
        born_host=msg.born_host,
        store_host=msg.store_host,
        reconsume_times=msg.reconsume_times,
        properties=tuple(sorted(msg.properties.items())),
        body=bytes(msg.body[:BODY_SHOWN_BYTES]),
        body_size=len(msg.body),
    )


def newest_first(views: Iterable[MessageView]) -> tuple[MessageView, ...]:
    """By store time, newest first; ties (same millisecond) in a fixed order: broker, queue, offset."""
    return tuple(sorted(views, key=lambda v: (-v.store_timestamp, v.broker_name, v.queue_id, -v.queue_offset)))


def _range(begin_ms: int | None, end_ms: int | None) -> tuple[int, int]:
    begin, end = begin_ms or 0, end_ms if end_ms is not None else MAX_TIMESTAMP
    if end < begin:
        raise InvalidInput("end", "the end of the time range is before its beginning.")
    return begin, end


def message_query_by_key(
    *, topic: str, key: str, begin_ms: int | None = None, end_ms: int | None = None
) -> MessageList:
    """Messages of ``topic`` whose KEYS (or UNIQ_KEY) hold ``key``, newest first."""
    key = key.strip()
    if not key:
        raise InvalidInput("key", "the key is empty.")
    begin, end = _range(begin_ms, end_ms)
    selectors.topic_route_data(topic)  # NotFound for an unknown topic
    found = query_message_by_key(topic, key, MAX_KEY_RESULTS, begin, end)
    names = _broker_names()
    views = newest_first(message_view(m, names) for m in found)
    return MessageList(topic, views, len(views), key=key, begin_ms=begin, end_ms=end if end != MAX_TIMESTAMP else 0)


def _looks_like_uniq_key(msg_id: str) -> bool:
    """32 hexadecimal digits, as RocketMQ's clients make them (and as an offset id of an IPv4 host is)."""
    return len(msg_id) == 32 and all(c in "0123456789abcdefABCDEF" for c in msg_id)


def message_detail(*, msg_id: str, topic: str | None = None) -> MessageView:
    """The message with this offset message id, or (with ``topic``) this client-made id (UNIQ_KEY).

    An offset id is read only from the cluster member it names (brokers.gateway.message_ids): an
    id naming any other address is "not found" with one generic text, and nothing connects there.
    """
    msg_id = msg_id.strip()
    if not msg_id:
        raise InvalidInput("msg_id", "the message id is empty.")
    names = _broker_names()
    try:
        resolved = resolve_offset_msg_id(msg_id, names)
        msg = view_message_in_cluster(resolved)
    except BrokerSystemError:
        if topic is None:
            raise MessageIdNotInCluster() from None
    except MessageIdNotInCluster:  # maybe a UNIQ_KEY after all
        if topic is None:
            raise
    except MQClientError:  # not an offset message id (a UNIQ_KEY decodes to a port or offset out of range)
        if topic is None:
            if _looks_like_uniq_key(msg_id):
                raise InvalidInput(
                    "topic",
                    f"{msg_id} is not an offset message id; as a client-made id (UNIQ_KEY) it is "
                    "looked up in its topic's key index: give the topic too.",
                ) from None
            raise InvalidInput(
                "msg_id",
                f"{msg_id!r} is neither an offset message id nor a client-made id (UNIQ_KEY): "
                "both are 32 hexadecimal digits.",
            ) from None
    except RemotingError:  # a member of the cluster that does not answer: maybe a UNIQ_KEY after all
        if topic is None:
            raise
    else:
        return message_view(msg, names, resolved.broker_name)
    selectors.topic_route_data(topic)
    found = query_message_by_key(topic, msg_id, MAX_KEY_RESULTS, 0, MAX_TIMESTAMP, unique_key=True)
    if not found:
        raise NotFound(f"message {msg_id} not found in topic {topic}")
    return message_view(found[0], names)


def topic_queues(route: TopicRouteData) -> dict[MessageQueue, str]:
    """Every readable queue of the route (ids below each broker's read queue count), with its master's address.

    A broker refuses to pull a queue id at or above its read queue count ("queueId[…] is illegal"), so
    messages in write-only queues (write queues above read queues) cannot be read here — as for any
    consumer: the topic pages warn of such hidden queues (topics.unreachable).
    """
    out = {}
    for qd in route.queue_datas:
        addr = route.master_addr(qd.broker_name)
        if addr:
            out.update({MessageQueue(route.topic, qd.broker_name, i): addr for i in range(qd.read_queue_nums)})
    return out


def read_spans(spans: dict[MessageQueue, tuple[str, int, int]]) -> dict[MessageQueue, list[MessageExt]]:
    """All messages of each span (queue -> address, first offset, end offset), in pull-sized rounds."""
    out: dict[MessageQueue, list[MessageExt]] = {mq: [] for mq in spans}
    todo = dict(spans)
    while todo:
        pulled = pull_messages({mq: (addr, lo, hi - lo) for mq, (addr, lo, hi) in todo.items()}, TOOLS_CONSUMER_GROUP)
        nxt = {}
        for mq, msgs in pulled.items():
            addr, lo, hi = todo[mq]
            msgs = [m for m in msgs if m.queue_offset < hi]
            out[mq].extend(msgs)
            if msgs and msgs[-1].queue_offset + 1 < hi:
                nxt[mq] = (addr, msgs[-1].queue_offset + 1, hi)
        todo = nxt
    return out


def message_query_by_time(
    *, topic: str, begin_ms: int, end_ms: int, page: int = 1, page_size: int = DEFAULT_PAGE_SIZE
) -> MessageList:
    """One page of the messages of ``topic`` stored from ``begin_ms`` to ``end_ms``, newest first.

    Page ``p`` needs at most the newest ``p * page_size`` messages of each queue's range (plus one
    at each end: the store-time search may land on a neighbour), so that is what is read.
    """
    begin, end = _range(begin_ms, end_ms)
    if not 1 <= page_size <= MAX_PAGE_SIZE:
        raise InvalidInput("page_size", f"must be from 1 to {MAX_PAGE_SIZE}.")
    if page < 1:
        raise InvalidInput("page", "must be 1 or more.")
    queues = topic_queues(selectors.topic_route_data(topic))
    lows, highs = min_offsets(queues), max_offsets(queues)
    starts, ends = search_offsets(queues, begin), search_offsets(queues, end)
    newest = page * page_size + 2
    total, spans = 0, {}
    for mq in sorted(queues):
        lo = max(starts[mq], lows[mq])
        hi = min(ends[mq] + 1, highs[mq])
        if hi > lo:
            total += hi - lo
            spans[mq] = (queues[mq], max(lo, hi - newest), hi)
    views = newest_first(
        message_view(m, {}, mq.broker_name)
        for mq, msgs in read_spans(spans).items()
        for m in msgs
        if begin <= m.store_timestamp <= end
    )
    shown = views[(page - 1) * page_size : page * page_size]
    return MessageList(topic, shown, total, begin_ms=begin, end_ms=end, page=page, page_size=page_size)


TAIL_MAX = 50  # messages one live tail shows (and reads per queue at most)


def message_tail(*, topic: str, count: int = DEFAULT_PAGE_SIZE) -> MessageList:
    """The topic's ``count`` newest messages over all its queues, newest first (the topic page's live
    tail): each queue's newest ``count`` at most, read as the time search reads (nothing consumed)."""
    if not 1 <= count <= TAIL_MAX:
        raise InvalidInput("count", f"must be from 1 to {TAIL_MAX}.")
    queues = topic_queues(selectors.topic_route_data(topic))
    lows, highs = min_offsets(queues), max_offsets(queues)
    spans = {
        mq: (queues[mq], max(lows[mq], highs[mq] - count), highs[mq]) for mq in sorted(queues) if highs[mq] > lows[mq]
    }
    views = newest_first(message_view(m, {}, mq.broker_name) for mq, msgs in read_spans(spans).items() for m in msgs)
    total = sum(highs[mq] - lows[mq] for mq in queues)
    return MessageList(topic, views[:count], total, page_size=count)
