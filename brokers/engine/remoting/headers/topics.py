"""Topic headers: create/update and delete on a broker, delete on a name server, stats, route.

Wire names and requiredness are RocketMQ's (``CreateTopicRequestHeader`` and friends); a field
RocketMQ marks ``@CFNotNull`` that Gantry's broker has always defaulted (``defaultTopic``,
``topicFilterType``, ``order``) stays optional here, so older senders keep working.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.headers.base import RequestHeader

__all__ = [
    "CreateTopicRequestHeader",
    "DeleteTopicFromNamesrvRequestHeader",
    "DeleteTopicRequestHeader",
    "GetRouteInfoRequestHeader",
    "GetTopicStatsInfoRequestHeader",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateTopicRequestHeader(RequestHeader):
    """UPDATE_AND_CREATE_TOPIC (17): the topic's whole config; ``attributes`` is RocketMQ 5's
    modification text (``+message.type=FIFO,-key``), None to leave the attributes as they are."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.UPDATE_AND_CREATE_TOPIC,)

    topic: str
    default_topic: str | None = None
    read_queue_nums: int
    write_queue_nums: int
    perm: int
    topic_filter_type: str = "SINGLE_TAG"
    topic_sys_flag: int = 0
    order: bool = False
    attributes: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteTopicRequestHeader(RequestHeader):
    """DELETE_TOPIC_IN_BROKER (215)."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.DELETE_TOPIC_IN_BROKER,)

    topic: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteTopicFromNamesrvRequestHeader(RequestHeader):
    """DELETE_TOPIC_IN_NAMESRV (216): the topic's queue data of every broker, or of ``cluster_name``'s only."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.DELETE_TOPIC_IN_NAMESRV,)

    topic: str
    cluster_name: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class GetTopicStatsInfoRequestHeader(RequestHeader):
    """GET_TOPIC_STATS_INFO (202)."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.GET_TOPIC_STATS_INFO,)

    topic: str


@dataclass(frozen=True, slots=True, kw_only=True)
class GetRouteInfoRequestHeader(RequestHeader):
    """GET_ROUTEINFO_BY_TOPIC (105), to a name server."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.GET_ROUTEINFO_BY_TOPIC,)

    topic: str
