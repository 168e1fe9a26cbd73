"""5.x messages <-> the broker's: a gRPC ``Message`` becomes a SEND_MESSAGE request, a stored record
becomes a gRPC ``Message`` (the mapping RocketMQ 5's proxy uses: SendMessageActivity.buildMessageProperty
and GrpcConverter.buildMessage).

- tag -> ``TAGS``; keys -> ``KEYS`` joined by spaces; message id -> ``UNIQ_KEY``; message group ->
  ``__SHARDINGKEY``; trace context -> ``TRACE_CONTEXT``; born host and time -> ``BORN_HOST``,
  ``BORN_TIMESTAMP``; GZIP body encoding -> the compressed sys flag; user properties as they are.
- A received message carries the body digest (MD5, upper-case hex, as Apache's proxy sends it: the
  Java and Python clients both check it and dead-letter a message whose digest is wrong), its
  receipt handle (``POP_CK``), queue id and offset, and delivery attempt = reconsume times + 1.

Bad input raises :class:`ProxyError` with the 5.x status code and a message naming the field.
"""

from __future__ import annotations

import hashlib
import re

from google.protobuf.timestamp_pb2 import Timestamp
from brokers.engine.proxy.stubs import definition_pb2 as pb

from brokers.engine.common import message as m
from brokers.engine.common.message import MessageExt, properties_to_string
from brokers.engine.common.message_codec import COMPRESSED_FLAG
from brokers.engine.common.topic_message_type import (
    DELAY,
    FIFO,
    NORMAL,
    PROPERTY_SHARDING_KEY,
    PROPERTY_TIMER_DELIVER_MS,
    TRANSACTION,
    UNSPECIFIED,
    message_type_of,
)

PROPERTY_POP_CK = "POP_CK"
PROPERTY_TRACE_CONTEXT = "TRACE_CONTEXT"
PROPERTY_BORN_HOST = "BORN_HOST"
PROPERTY_BORN_TIMESTAMP = "BORN_TIMESTAMP"
PROPERTY_DLQ_ORIGIN_TOPIC = "DLQ_ORIGIN_TOPIC"
PROPERTY_DLQ_ORIGIN_MESSAGE_ID = "DLQ_ORIGIN_MESSAGE_ID"
MAX_USER_PROPERTIES = 128  # RocketMQ proxy's userPropertyMaxNum
MAX_USER_PROPERTY_BYTES = 16 * 1024  # maxUserPropertySize: keys, values, tag and keys together
MAX_MESSAGE_GROUP_BYTES = 64  # maxMessageGroupSize
MAX_MESSAGE_ID = 128
SYSTEM_PROPERTIES = frozenset(
    {
        m.PROPERTY_KEYS,
        m.PROPERTY_TAGS,
        m.PROPERTY_WAIT_STORE_MSG_OK,
        m.PROPERTY_DELAY_TIME_LEVEL,
        m.PROPERTY_RETRY_TOPIC,
        m.PROPERTY_REAL_TOPIC,
        m.PROPERTY_REAL_QUEUE_ID,
        m.PROPERTY_TRANSACTION_PREPARED,
        m.PROPERTY_PRODUCER_GROUP,
        m.PROPERTY_MIN_OFFSET,
        m.PROPERTY_MAX_OFFSET,
        m.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX,
        m.PROPERTY_ORIGIN_MESSAGE_ID,
        m.PROPERTY_RECONSUME_TIME,
        m.PROPERTY_MAX_RECONSUME_TIMES,
        m.PROPERTY_CLUSTER,
        m.PROPERTY_MSG_REGION,
        m.PROPERTY_TRACE_SWITCH,
        m.PROPERTY_CONSUME_START_TIMESTAMP,
        PROPERTY_SHARDING_KEY,
        PROPERTY_POP_CK,
        PROPERTY_TRACE_CONTEXT,
        PROPERTY_BORN_HOST,
        PROPERTY_BORN_TIMESTAMP,
        PROPERTY_TIMER_DELIVER_MS,
        PROPERTY_DLQ_ORIGIN_TOPIC,
        PROPERTY_DLQ_ORIGIN_MESSAGE_ID,
        "TIMER_DELAY_SEC",
        "TIMER_DELAY_MS",
        "TIMER_OUT_MS",
        "FIRST_POP_TIME",
        "TRANSACTION_ID",
        "CHECK_IMMUNITY_TIME_IN_SECONDS",
        "INSTANCE_ID",
        "CORRELATION_ID",
        "REPLY_TO_CLIENT",
        "TTL",
        "ARRIVE_TIME",
        "PUSH_REPLY_TIME",
        "MSG_TYPE",
        "INNER_MULTI_DISPATCH",
        "INNER_MULTI_QUEUE_OFFSET",
        m.PROPERTY_LAST_ERROR,
    }
)
_TYPE_NAMES = {pb.NORMAL: NORMAL, pb.FIFO: FIFO, pb.DELAY: DELAY, pb.TRANSACTION: TRANSACTION}
_TYPE_CODES = {name: code for code, name in _TYPE_NAMES.items()} | {UNSPECIFIED: pb.MESSAGE_TYPE_UNSPECIFIED}


class ProxyError(Exception):
    """A 5.x status to answer with: ``code`` (definition_pb2.Code) and a message naming the field."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def type_code(name: str) -> int:
    code: int = _TYPE_CODES.get(name, pb.MESSAGE_TYPE_UNSPECIFIED)
    return code


def type_name(code: int) -> str:
    return _TYPE_NAMES.get(code, UNSPECIFIED)


_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f]")


def _has_control(text: str) -> bool:
    return _CONTROL.search(text) is not None


def send_properties(msg: pb.Message, born_host: str) -> tuple[dict[str, str], int]:
    """The stored properties and sys flag of one 5.x message; ProxyError names what is wrong."""
    sp = msg.system_properties
    user = dict(msg.user_properties)
    if len(user) > MAX_USER_PROPERTIES:
        raise ProxyError(
            pb.MESSAGE_PROPERTIES_TOO_LARGE, f"too many user properties ({len(user)}), max is {MAX_USER_PROPERTIES}"
        )
    size = 0
    for key, value in user.items():
        if key in SYSTEM_PROPERTIES:
            raise ProxyError(pb.ILLEGAL_MESSAGE_PROPERTY_KEY, f"property is used by the system: {key[:64]}")
        if not key or _has_control(key) or _has_control(value):
            raise ProxyError(
                pb.ILLEGAL_MESSAGE_PROPERTY_KEY, f"property {key[:64]!r} is empty or has a control character"
            )
        size += len(key.encode()) + len(value.encode())
    props = dict(user)
    tag = sp.tag
    if tag:
        if not tag.strip() or "|" in tag or _has_control(tag):
            raise ProxyError(pb.ILLEGAL_MESSAGE_TAG, f"tag {tag[:64]!r} is blank, has '|' or a control character")
        props[m.PROPERTY_TAGS] = tag
        size += len(tag.encode())
    keys = list(sp.keys)
    for key in keys:
        if not key.strip() or _has_control(key):
            raise ProxyError(pb.ILLEGAL_MESSAGE_KEY, f"key {key[:64]!r} is blank or has a control character")
        size += len(key.encode())
    if keys:
        props[m.PROPERTY_KEYS] = m.KEY_SEPARATOR.join(keys)
    if size > MAX_USER_PROPERTY_BYTES:
        raise ProxyError(
            pb.MESSAGE_PROPERTIES_TOO_LARGE,
            f"user properties, tag and keys take {size} bytes, max is {MAX_USER_PROPERTY_BYTES}",
        )
    message_id = sp.message_id
    if not message_id.strip() or len(message_id) > MAX_MESSAGE_ID or _has_control(message_id):
        raise ProxyError(pb.ILLEGAL_MESSAGE_ID, "message_id is empty, too long or has a control character")
    props[m.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX] = message_id
    group = sp.message_group
    if group:
        if not group.strip() or len(group.encode()) >= MAX_MESSAGE_GROUP_BYTES or _has_control(group):
            raise ProxyError(
                pb.ILLEGAL_MESSAGE_GROUP,
                f"message_group is blank, has a control character or is not under {MAX_MESSAGE_GROUP_BYTES} bytes",
            )
        props[PROPERTY_SHARDING_KEY] = group
    if sp.HasField("delivery_timestamp"):
        props[PROPERTY_TIMER_DELIVER_MS] = str(sp.delivery_timestamp.ToMilliseconds())
    if sp.message_type == pb.TRANSACTION:
        props[m.PROPERTY_TRANSACTION_PREPARED] = "true"
    if sp.trace_context:
        props[PROPERTY_TRACE_CONTEXT] = sp.trace_context[:1024]
    props[PROPERTY_BORN_HOST] = (sp.born_host or born_host)[:128]
    if sp.HasField("born_timestamp"):
        props[PROPERTY_BORN_TIMESTAMP] = str(sp.born_timestamp.ToMilliseconds())
    declared = type_name(sp.message_type)
    actual = message_type_of(props)
    if declared != UNSPECIFIED and declared != actual:
        raise ProxyError(
            pb.MESSAGE_PROPERTY_CONFLICT_WITH_TYPE,
            f"message_type is {declared} but the message's properties make it {actual}",
        )
    sys_flag = COMPRESSED_FLAG if sp.body_encoding == pb.GZIP else 0
    return props, sys_flag


def encoded_properties(props: dict[str, str]) -> str:
    return properties_to_string(props)


def _timestamp(ms: int) -> Timestamp:
    ts = Timestamp()
    ts.FromMilliseconds(max(0, ms))
    return ts


def to_grpc_message(ext: MessageExt, topic: str | None = None, namespace: str = "") -> pb.Message:
    """A stored (popped) message as a 5.x ``Message``."""
    props = ext.properties
    out = pb.Message()
    out.topic.name = topic or ext.topic
    out.topic.resource_namespace = namespace
    for key, value in props.items():
        if key not in SYSTEM_PROPERTIES:
            out.user_properties[key] = value
    sp = out.system_properties
    if props.get(m.PROPERTY_TAGS) is not None:
        sp.tag = props[m.PROPERTY_TAGS]
    if props.get(m.PROPERTY_KEYS):
        sp.keys.extend(k for k in props[m.PROPERTY_KEYS].split(m.KEY_SEPARATOR) if k)
    sp.message_id = props.get(m.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX) or ext.msg_id
    sp.body_digest.type = pb.MD5
    sp.body_digest.checksum = hashlib.md5(ext.body).hexdigest().upper()
    sp.body_encoding = pb.GZIP if ext.sys_flag & COMPRESSED_FLAG else pb.IDENTITY
    sp.message_type = type_code(message_type_of(props))
    sp.born_timestamp.CopyFrom(_timestamp(ext.born_timestamp))
    sp.born_host = props.get(PROPERTY_BORN_HOST) or ext.born_host
    sp.store_timestamp.CopyFrom(_timestamp(ext.store_timestamp))
    sp.store_host = ext.store_host
    deliver_ms = props.get(PROPERTY_TIMER_DELIVER_MS)
    if deliver_ms and deliver_ms.isdigit():
        sp.delivery_timestamp.CopyFrom(_timestamp(int(deliver_ms)))
    if props.get(PROPERTY_SHARDING_KEY) is not None:
        sp.message_group = props[PROPERTY_SHARDING_KEY]
    if props.get(PROPERTY_POP_CK):
        sp.receipt_handle = props[PROPERTY_POP_CK]
    sp.queue_id = ext.queue_id
    sp.queue_offset = ext.queue_offset
    sp.delivery_attempt = ext.reconsume_times + 1
    if props.get(PROPERTY_TRACE_CONTEXT):
        sp.trace_context = props[PROPERTY_TRACE_CONTEXT]
    origin_topic, origin_id = props.get(PROPERTY_DLQ_ORIGIN_TOPIC), props.get(PROPERTY_DLQ_ORIGIN_MESSAGE_ID)
    if origin_topic and origin_id:
        sp.dead_letter_queue.topic = origin_topic
        sp.dead_letter_queue.message_id = origin_id
    out.body = ext.body
    return out
