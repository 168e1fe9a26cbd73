"""Consumption headers: PULL_MESSAGE (and RocketMQ 5's LITE_PULL_MESSAGE, the same header)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.headers.offsets import QueueRequestHeader

__all__ = ["PullMessageRequestHeader"]


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
