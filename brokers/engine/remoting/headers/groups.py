"""Consumer-group headers: delete a subscription group, consume stats, connections, running info.

UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200) carries its config as a body and has no header.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.headers.base import RequestHeader, wire

__all__ = [
    "DeleteSubscriptionGroupRequestHeader",
    "GetConsumeStatsRequestHeader",
    "GetConsumerConnectionListRequestHeader",
    "GetConsumerRunningInfoRequestHeader",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteSubscriptionGroupRequestHeader(RequestHeader):
    """DELETE_SUBSCRIPTIONGROUP (207); ``clean_offset`` drops the group's committed offsets too.

    RocketMQ 5 names the flag ``cleanOffset``, 4.x ``removeOffset``: it is read from either and
    written as both, so brokers of either line honour it.
    """

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.DELETE_SUBSCRIPTIONGROUP,)

    group_name: str
    clean_offset: bool = field(default=False, metadata=wire("cleanOffset", "removeOffset"))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetConsumeStatsRequestHeader(RequestHeader):
    """GET_CONSUME_STATS (208): the group's offsets of ``topic``, or of every topic it has offsets of."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.GET_CONSUME_STATS,)

    consumer_group: str
    topic: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class GetConsumerConnectionListRequestHeader(RequestHeader):
    """GET_CONSUMER_CONNECTION_LIST (203)."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.GET_CONSUMER_CONNECTION_LIST,)

    consumer_group: str


@dataclass(frozen=True, slots=True, kw_only=True)
class GetConsumerRunningInfoRequestHeader(RequestHeader):
    """GET_CONSUMER_RUNNING_INFO (307): an admin's to a broker, and the same header forwarded by the
    broker to the client ``client_id``."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.GET_CONSUMER_RUNNING_INFO,)

    consumer_group: str
    client_id: str
    jstack_enable: bool = False
