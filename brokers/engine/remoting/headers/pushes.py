"""Broker-to-client headers: what a broker sends over a client's own connection.

- NOTIFY_CONSUMER_IDS_CHANGED (40, oneway): the group's members changed, rebalance;
- RESET_CONSUMER_CLIENT_OFFSET (220, oneway): an operator's reset (the offsets are the body);
- CONSUME_MESSAGE_DIRECTLY (309): an admin's to the broker storing the message, which forwards the
  same header, with its ``brokerName`` and the stored message as the body, to the client.

GET_CONSUMER_RUNNING_INFO (307) is forwarded the same way with
:class:`~.groups.GetConsumerRunningInfoRequestHeader`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.headers.base import RequestHeader

__all__ = [
    "ConsumeMessageDirectlyResultRequestHeader",
    "NotifyConsumerIdsChangedRequestHeader",
    "ResetConsumerClientOffsetRequestHeader",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class NotifyConsumerIdsChangedRequestHeader(RequestHeader):
    """NOTIFY_CONSUMER_IDS_CHANGED (40)."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.NOTIFY_CONSUMER_IDS_CHANGED,)

    consumer_group: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ResetConsumerClientOffsetRequestHeader(RequestHeader):
    """RESET_CONSUMER_CLIENT_OFFSET (220): the client's consumer of ``group`` resets its offsets of
    ``topic`` to the body's table (RocketMQ's client reads it as ``ResetOffsetRequestHeader``; the
    broker sends the topic, group, timestamp and isForce of the reset it was asked)."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.RESET_CONSUMER_CLIENT_OFFSET,)

    topic: str
    group: str
    timestamp: int
    is_force: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumeMessageDirectlyResultRequestHeader(RequestHeader):
    """CONSUME_MESSAGE_DIRECTLY (309): the client ``client_id`` of ``consumer_group`` consumes the
    message ``msg_id`` once. RocketMQ marks clientId and msgId ``@CFNullable``; a Gantry broker
    needs both (the client to forward to, the message to look up), and every sender sends them."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.CONSUME_MESSAGE_DIRECTLY,)

    consumer_group: str
    client_id: str
    msg_id: str
    broker_name: str | None = None
    topic: str | None = None
    topic_sys_flag: int | None = None
    group_sys_flag: int | None = None
