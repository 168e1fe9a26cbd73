"""Reading admin response bodies: fastjson objects into :mod:`~brokers.engine.client.admin_types`.

Bodies are read with the tolerant fastjson reader (:mod:`brokers.engine.common.json_compat`),
which accepts what Java brokers write: bare integer keys (``{0:"addr"}``) and MessageQueue
objects as map keys, which :func:`message_queue_from_key` turns back into MessageQueues. Also
here: decoding offset message ids, inflating zlib bodies of fetched messages, and re-checking
the hash hits of a key query.
"""

from __future__ import annotations

import zlib
from typing import Any

from brokers.engine.client.admin_types import (
    BrokerData,
    BrokerInfo,
    ClusterInfo,
    Connection,
    ConsumerRunningInfo,
    ConsumeStatus,
    ProcessQueueInfo,
    QueueData,
    SubscriptionData,
    TopicRouteData,
)
from brokers.engine.client.errors import CLIENT_ERROR, MQClientError
from brokers.engine.common import json_compat, message_codec
from brokers.engine.common.message import PROPERTY_KEYS, PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, MessageExt
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.topic_config import TopicConfig

__all__ = [
    "as_dict",
    "decode_offset_msg_id",
    "inflate_bodies",
    "key_matches",
    "load_object",
    "message_queue_from_key",
    "parse_broker_data",
    "parse_cluster_info",
    "parse_connections",
    "parse_consumer_running_info",
    "parse_group_list",
    "parse_kv_table",
    "parse_notified_client_ids",
    "parse_offset_table",
    "parse_subscription_table",
    "parse_topic_config_table",
    "parse_topic_list",
    "parse_topic_route",
]

_COMPRESSION_TYPE_MASK = 0x700  # message sysFlag bits 8-10
_COMPRESSION_ZLIB = 0x300


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` if it is a dict, else an empty one (a body field may be missing or null)."""
    return value if isinstance(value, dict) else {}


def load_object(body: bytes) -> dict[str, Any]:
    """The JSON object of a body; empty for an empty body (or one that is not an object)."""
    if not body:
        return {}
    return as_dict(json_compat.loads(body))


def message_queue_from_key(key: Any) -> MessageQueue:
    """Turn a MessageQueue map key as the tolerant reader returns it into a MessageQueue."""
    if isinstance(key, MessageQueue):
        return key
    if isinstance(key, str):
        key = json_compat.loads(key)
    if isinstance(key, dict):
        return MessageQueue.from_json(key)
    if isinstance(key, (tuple, frozenset, list)):
        items = list(key)
        if items and all(isinstance(i, tuple) and len(i) == 2 for i in items):
            return MessageQueue.from_json(dict(items))
        if len(items) == 3:
            return MessageQueue(str(items[0]), str(items[1]), int(items[2]))
    raise MQClientError(CLIENT_ERROR, f"unexpected MessageQueue key in a response body: {key!r}")


def parse_broker_data(data: dict[str, Any]) -> BrokerData:
    addrs = {int(k): str(v) for k, v in as_dict(data.get("brokerAddrs")).items()}
    return BrokerData(str(data.get("cluster", "")), str(data.get("brokerName", "")), addrs)


def parse_cluster_info(body: bytes) -> ClusterInfo:
    obj = load_object(body)
    datas = {str(name): parse_broker_data(as_dict(bd)) for name, bd in as_dict(obj.get("brokerAddrTable")).items()}
    clusters = {
        str(c): tuple(sorted(str(n) for n in names or ())) for c, names in as_dict(obj.get("clusterAddrTable")).items()
    }
    brokers: list[BrokerInfo] = []
    for name, data in datas.items():
        cluster = data.cluster or next((c for c, names in clusters.items() if name in names), "")
        brokers.extend(BrokerInfo(cluster, name, bid, addr) for bid, addr in data.broker_addrs.items())
    brokers.sort(key=lambda b: (b.cluster, b.broker_name, b.broker_id))
    return ClusterInfo(tuple(brokers), clusters, datas)


def parse_topic_route(topic: str, body: bytes) -> TopicRouteData:
    obj = load_object(body)
    queue_datas = tuple(
        sorted(
            (QueueData.from_json(q) for q in map(as_dict, obj.get("queueDatas") or ())),
            key=lambda q: q.broker_name,
        )
    )
    broker_datas = tuple(
        sorted((parse_broker_data(as_dict(b)) for b in obj.get("brokerDatas") or ()), key=lambda b: b.broker_name)
    )
    filters = {str(k): tuple(str(a) for a in v or ()) for k, v in as_dict(obj.get("filterServerTable")).items()}
    order = obj.get("orderTopicConf")
    return TopicRouteData(topic, queue_datas, broker_datas, str(order) if order else None, filters)


def parse_topic_list(body: bytes) -> list[str]:
    return sorted(str(t) for t in load_object(body).get("topicList") or ())


def parse_topic_config_table(body: bytes) -> dict[str, TopicConfig]:
    """Topic name -> config of a GET_ALL_TOPIC_CONFIG body (TopicConfigSerializeWrapper), sorted by name."""
    table = as_dict(load_object(body).get("topicConfigTable"))
    return {str(name): TopicConfig.from_json(as_dict(cfg)) for name, cfg in sorted(table.items())}


def parse_group_list(body: bytes) -> list[str]:
    """The group names of a GroupList body (QUERY_TOPIC_CONSUME_BY_WHO), as the broker lists them."""
    return [str(g) for g in load_object(body).get("groupList") or ()]


def parse_offset_table(body: bytes) -> dict[MessageQueue, int]:
    """Queue -> offset of a body ``{"offsetTable": {<MessageQueue>: offset}}`` (ResetOffsetBody,
    the answer of INVOKE_BROKER_TO_RESET_OFFSET)."""
    return {
        message_queue_from_key(key): int(value) for key, value in as_dict(load_object(body).get("offsetTable")).items()
    }


def parse_notified_client_ids(body: bytes) -> tuple[str, ...]:
    """The client ids a broker notified (Gantry's GANTRY_NOTIFY_CONSUMER_IDS_CHANGED answer ``{"notified": [...]}``)."""
    return tuple(str(c) for c in load_object(body).get("notified") or ())


def parse_kv_table(body: bytes) -> dict[str, str]:
    return {str(k): str(v) for k, v in as_dict(load_object(body).get("table")).items()}


def parse_subscription_table(obj: dict[str, Any]) -> dict[str, SubscriptionData]:
    return {str(t): SubscriptionData.from_json(as_dict(s)) for t, s in as_dict(obj).items()}


def parse_connections(obj: dict[str, Any]) -> tuple[Connection, ...]:
    conns = (
        Connection(
            str(c.get("clientId", "")),
            str(c.get("clientAddr", "")),
            str(c.get("language", "")),
            int(c.get("version", 0) or 0),
        )
        for c in map(as_dict, obj.get("connectionSet") or ())
    )
    return tuple(sorted(conns, key=lambda c: (c.client_id, c.client_addr)))


def parse_consumer_running_info(body: bytes) -> ConsumerRunningInfo:
    obj = load_object(body)
    mq_table = {}
    for key, value in as_dict(obj.get("mqTable")).items():
        v = as_dict(value)
        mq_table[message_queue_from_key(key)] = ProcessQueueInfo(
            commit_offset=int(v.get("commitOffset", 0) or 0),
            cached_msg_min_offset=int(v.get("cachedMsgMinOffset", 0) or 0),
            cached_msg_max_offset=int(v.get("cachedMsgMaxOffset", 0) or 0),
            cached_msg_count=int(v.get("cachedMsgCount", 0) or 0),
            cached_msg_size_in_mib=int(v.get("cachedMsgSizeInMiB", 0) or 0),
            locked=bool(v.get("locked", False)),
            droped=bool(v.get("droped", False)),
            last_pull_timestamp=int(v.get("lastPullTimestamp", 0) or 0),
            last_consume_timestamp=int(v.get("lastConsumeTimestamp", 0) or 0),
        )
    status = {}
    for topic, value in as_dict(obj.get("statusTable")).items():
        v = as_dict(value)
        status[str(topic)] = ConsumeStatus(
            pull_rt=float(v.get("pullRT", 0) or 0),
            pull_tps=float(v.get("pullTPS", 0) or 0),
            consume_rt=float(v.get("consumeRT", 0) or 0),
            consume_ok_tps=float(v.get("consumeOKTPS", 0) or 0),
            consume_failed_tps=float(v.get("consumeFailedTPS", 0) or 0),
            consume_failed_msgs=int(v.get("consumeFailedMsgs", 0) or 0),
        )
    subs = tuple(SubscriptionData.from_json(as_dict(s)) for s in obj.get("subscriptionSet") or ())
    props = {str(k): str(v) for k, v in as_dict(obj.get("properties")).items()}
    jstack = obj.get("jstack")
    return ConsumerRunningInfo(props, subs, mq_table, status, str(jstack) if jstack else None)


def decode_offset_msg_id(msg_id: str) -> tuple[str, int]:
    """Return (store host "ip:port", commit-log offset) of an offset message id; MQClientError if malformed."""
    try:
        addr, offset = message_codec.parse_offset_msg_id(msg_id.strip())
    except (ValueError, TypeError) as exc:
        raise MQClientError(CLIENT_ERROR, f"{msg_id!r} is not an offset message id: {exc}") from None
    port = int(addr.rpartition(":")[2])
    if not 0 < port < 65536 or offset < 0:
        # A UNIQ_KEY has the same length; its bytes decode to a port or offset out of range.
        raise MQClientError(
            CLIENT_ERROR, f"{msg_id!r} is not an offset message id (it decodes to {addr}, offset {offset})"
        )
    return addr, offset


def inflate_bodies(messages: list[MessageExt]) -> list[MessageExt]:
    """Decompress zlib bodies in place (sysFlag bit 0 with compression type 0 or ZLIB), as consumers do.

    LZ4 and ZSTD bodies (4.9.4+ Java producers, on request only) are left as stored.
    """
    for msg in messages:
        if msg.sys_flag & message_codec.COMPRESSED_FLAG and msg.sys_flag & _COMPRESSION_TYPE_MASK in (
            0,
            _COMPRESSION_ZLIB,
        ):
            try:
                msg.body = zlib.decompress(msg.body)
            except zlib.error:
                pass  # not zlib after all: hand over the stored bytes
    return messages


def key_matches(msg: MessageExt, topic: str, key: str) -> bool:
    """Index hits are hash hits: keep a message only if its KEYS or UNIQ_KEY really holds ``key``."""
    if msg.topic != topic:
        return False
    keys = (msg.properties.get(PROPERTY_KEYS) or "").split(" ")
    return key in keys or msg.properties.get(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX) == key
