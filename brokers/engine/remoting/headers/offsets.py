"""Offset headers: a group's committed offsets, a queue's positions, and resetting a group's offsets.

The queue headers carry ``bname``, RocketMQ 5's broker name of the queue (``RpcRequestHeader``),
which a 5.x proxy routes by; a broker ignores it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, TypedDict

from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.headers.base import RequestHeader, wire

__all__ = [
    "GetEarliestMsgStoretimeRequestHeader",
    "GetMaxOffsetRequestHeader",
    "GetMinOffsetRequestHeader",
    "QueryConsumerOffsetRequestHeader",
    "QueueFields",
    "QueueRequestHeader",
    "ResetOffsetRequestHeader",
    "SearchOffsetRequestHeader",
    "UpdateConsumerOffsetRequestHeader",
    "queue_fields",
]


class QueueFields(TypedDict):
    """The keyword arguments of :class:`QueueRequestHeader`'s fields, for ``Header(**fields, ...)``."""

    topic: str
    queue_id: int
    broker_name: str | None


def queue_fields(mq: MessageQueue) -> QueueFields:
    """The queue fields of ``mq``: ``GetMaxOffsetRequestHeader(**queue_fields(mq))``."""
    return {"topic": mq.topic, "queue_id": mq.queue_id, "broker_name": mq.broker_name}


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueRequestHeader(RequestHeader):
    """The fields of every request about one queue (RocketMQ's ``TopicQueueRequestHeader``)."""

    topic: str
    queue_id: int
    broker_name: str | None = field(default=None, metadata=wire("bname"))


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryConsumerOffsetRequestHeader(QueueRequestHeader):
    """QUERY_CONSUMER_OFFSET (14)."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.QUERY_CONSUMER_OFFSET,)

    consumer_group: str


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateConsumerOffsetRequestHeader(QueueRequestHeader):
    """UPDATE_CONSUMER_OFFSET (15)."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.UPDATE_CONSUMER_OFFSET,)

    consumer_group: str
    commit_offset: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchOffsetRequestHeader(QueueRequestHeader):
    """SEARCH_OFFSET_BY_TIMESTAMP (29): the queue offset of the message stored at ``timestamp`` (ms)."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.SEARCH_OFFSET_BY_TIMESTAMP,)

    timestamp: int


@dataclass(frozen=True, slots=True, kw_only=True)
class GetMaxOffsetRequestHeader(QueueRequestHeader):
    """GET_MAX_OFFSET (30)."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.GET_MAX_OFFSET,)


@dataclass(frozen=True, slots=True, kw_only=True)
class GetMinOffsetRequestHeader(QueueRequestHeader):
    """GET_MIN_OFFSET (31)."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.GET_MIN_OFFSET,)


@dataclass(frozen=True, slots=True, kw_only=True)
class GetEarliestMsgStoretimeRequestHeader(QueueRequestHeader):
    """GET_EARLIEST_MSG_STORETIME (32)."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.GET_EARLIEST_MSG_STORETIME,)


@dataclass(frozen=True, slots=True, kw_only=True)
class ResetOffsetRequestHeader(RequestHeader):
    """INVOKE_BROKER_TO_RESET_OFFSET (222): every write queue to ``timestamp`` (-1: its max offset),
    or, with RocketMQ 5's ``queue_id`` (-1: all), that queue, to ``offset`` when given.

    The broker pushes the same topic, group, timestamp and isForce to the group's clients as
    RESET_CONSUMER_CLIENT_OFFSET (220).
    """

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.INVOKE_BROKER_TO_RESET_OFFSET,)

    topic: str
    group: str
    timestamp: int
    is_force: bool = False
    queue_id: int = -1
    offset: int | None = None
