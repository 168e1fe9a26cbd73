"""Send headers: SEND_MESSAGE (10) with RocketMQ's field names, SEND_MESSAGE_V2 (310) and
SEND_BATCH_MESSAGE (320) with the same fields under one-letter keys (``SendMessageRequestHeaderV2``,
which Java clients send for speed: ``a`` producerGroup ... ``n`` bname).

RocketMQ marks producerGroup, topic, defaultTopic, defaultTopicQueueNums, queueId, sysFlag,
bornTimestamp and flag ``@CFNotNull``. Gantry's broker has always taken a missing one as its
default and checks the topic name itself (an empty topic is refused as an illegal name), so all
are optional here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.headers.base import RequestHeader, wire

__all__ = ["SendMessageRequestHeader", "SendMessageRequestHeaderV2"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SendMessageRequestHeader(RequestHeader):
    """SEND_MESSAGE (10). ``reconsume_times``/``max_reconsume_times`` None: not sent (the broker
    then reads the RECONSUME_TIME / MAX_RECONSUME_TIMES properties)."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.SEND_MESSAGE,)

    producer_group: str = ""
    topic: str = ""
    default_topic: str = ""
    default_topic_queue_nums: int = 4
    queue_id: int = -1
    sys_flag: int = 0
    born_timestamp: int = 0
    flag: int = 0
    properties: str = ""
    reconsume_times: int | None = None
    unit_mode: bool = False
    batch: bool = False
    max_reconsume_times: int | None = None
    broker_name: str | None = field(default=None, metadata=wire("bname"))


@dataclass(frozen=True, slots=True, kw_only=True)
class SendMessageRequestHeaderV2(SendMessageRequestHeader):
    """SEND_MESSAGE_V2 (310) and SEND_BATCH_MESSAGE (320): :class:`SendMessageRequestHeader`'s
    fields under RocketMQ's one-letter keys (a V2 header carries nothing else); a refusal names
    the field as V1 does (``the custom field <queueId> is not an integer: 'x'``)."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_BATCH_MESSAGE)

    producer_group: str = field(default="", metadata=wire("a", label="producerGroup"))
    topic: str = field(default="", metadata=wire("b", label="topic"))
    default_topic: str = field(default="", metadata=wire("c", label="defaultTopic"))
    default_topic_queue_nums: int = field(default=4, metadata=wire("d", label="defaultTopicQueueNums"))
    queue_id: int = field(default=-1, metadata=wire("e", label="queueId"))
    sys_flag: int = field(default=0, metadata=wire("f", label="sysFlag"))
    born_timestamp: int = field(default=0, metadata=wire("g", label="bornTimestamp"))
    flag: int = field(default=0, metadata=wire("h", label="flag"))
    properties: str = field(default="", metadata=wire("i", label="properties"))
    reconsume_times: int | None = field(default=None, metadata=wire("j", label="reconsumeTimes"))
    unit_mode: bool = field(default=False, metadata=wire("k", label="unitMode"))
    batch: bool = field(default=False, metadata=wire("m", label="batch"))
    max_reconsume_times: int | None = field(default=None, metadata=wire("l", label="maxReconsumeTimes"))
    broker_name: str | None = field(default=None, metadata=wire("n", label="bname"))
