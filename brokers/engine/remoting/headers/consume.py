"""Consumption headers: PULL_MESSAGE (and RocketMQ 5's LITE_PULL_MESSAGE, the same header),
CONSUMER_SEND_MSG_BACK, and RocketMQ 5's message-level consumption: POP_MESSAGE, ACK_MESSAGE,
CHANGE_MESSAGE_INVISIBLETIME."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.headers.base import RequestHeader, wire
from brokers.engine.remoting.headers.offsets import QueueRequestHeader

__all__ = [
    "AckMessageRequestHeader",
    "ChangeInvisibleTimeRequestHeader",
    "ConsumerSendMsgBackRequestHeader",
    "PopMessageRequestHeader",
    "PullMessageRequestHeader",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class PullMessageRequestHeader(QueueRequestHeader):
    """PULL_MESSAGE (11) / LITE_PULL_MESSAGE (361): up to ``max_msg_nums`` records of the queue from
    ``queue_offset``. ``sys_flag`` bits: 1 commit ``commit_offset`` as well, 2 park the pull up to
    ``suspend_timeout_millis`` when there is nothing, 4 the subscription (``subscription``,
    ``expression_type``, ``sub_version``) travels in the request instead of the heartbeat's.

    RocketMQ marks sysFlag, commitOffset, suspendTimeoutMillis and subVersion ``@CFNotNull``;
    Gantry's broker has always taken a missing one as 0 (commitOffset: -1, none), and still does.
    """

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.PULL_MESSAGE, RequestCode.LITE_PULL_MESSAGE)

    consumer_group: str
    queue_offset: int
    max_msg_nums: int
    sys_flag: int = 0
    commit_offset: int = -1
    suspend_timeout_millis: int = 0
    subscription: str | None = None
    sub_version: int = 0
    expression_type: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PopMessageRequestHeader(QueueRequestHeader):
    """POP_MESSAGE (200050): up to ``max_msg_nums`` messages of the queue (``queue_id`` -1: any
    queue of the topic), invisible to the group for ``invisible_time`` ms; park up to
    ``poll_time`` ms when there is none. ``exp``/``exp_type`` filter (TAG or SQL92), ``order``
    pops FIFO. RocketMQ marks pollTime, bornTime and initMode ``@CFNotNull``; Gantry's broker
    takes a missing pollTime and initMode as 0 and does not use bornTime."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.POP_MESSAGE,)

    consumer_group: str
    max_msg_nums: int
    invisible_time: int
    poll_time: int = 0
    born_time: int | None = None
    init_mode: int = 0
    exp_type: str | None = None
    exp: str | None = None
    order: bool = False
    attempt_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AckMessageRequestHeader(QueueRequestHeader):
    """ACK_MESSAGE (200051): the message at ``offset``, delivered with the handle ``extra_info``, is consumed."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.ACK_MESSAGE,)

    consumer_group: str
    extra_info: str
    offset: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ChangeInvisibleTimeRequestHeader(AckMessageRequestHeader):
    """CHANGE_MESSAGE_INVISIBLETIME (200053): the delivery ``extra_info`` names comes back after
    ``invisible_time`` ms from now instead."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.CHANGE_MESSAGE_INVISIBLETIME,)

    invisible_time: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumerSendMsgBackRequestHeader(RequestHeader):
    """CONSUMER_SEND_MSG_BACK (36): the message stored at commit-log ``offset`` goes back to the
    group's retry topic with ``delay_level`` (0: 3 + its reconsume times; negative: straight to the
    DLQ), or to the DLQ once it was reconsumed ``max_reconsume_times`` (None: the group's setting).

    ``bname`` is RocketMQ 5's broker name (``RpcRequestHeader``), which a proxy routes by;
    ``lastError`` is Gantry's (why the listener failed, kept on the retry), which Apache's broker ignores.
    """

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.CONSUMER_SEND_MSG_BACK,)

    offset: int
    group: str
    delay_level: int
    origin_msg_id: str | None = None
    origin_topic: str | None = None
    unit_mode: bool = False
    max_reconsume_times: int | None = None
    broker_name: str | None = field(default=None, metadata=wire("bname"))
    last_error: str | None = None
