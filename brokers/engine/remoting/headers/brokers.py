"""Broker headers: a broker's clients (unregistering, a group's members, a producer group's
connections, every group's consume stats) and its single-config reads (a topic's, a group's, who consumes a topic).

GET_BROKER_RUNTIME_INFO, GET_BROKER_CONFIG, GET_ALL_TOPIC_CONFIG and the other whole-table reads
carry no header.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.headers.base import RequestHeader, wire

__all__ = [
    "GetConsumeStatsInBrokerRequestHeader",
    "GetConsumerListByGroupRequestHeader",
    "GetProducerConnectionListRequestHeader",
    "GetSubscriptionGroupConfigRequestHeader",
    "GetTopicConfigRequestHeader",
    "QueryTopicConsumeByWhoRequestHeader",
    "UnregisterClientRequestHeader",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class UnregisterClientRequestHeader(RequestHeader):
    """UNREGISTER_CLIENT (35): the client ``client_id`` leaves its producer and/or consumer group."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.UNREGISTER_CLIENT,)

    client_id: str = field(metadata=wire("clientID"))
    producer_group: str | None = None
    consumer_group: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class GetConsumerListByGroupRequestHeader(RequestHeader):
    """GET_CONSUMER_LIST_BY_GROUP (38): the client ids of the group's members connected to the broker."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.GET_CONSUMER_LIST_BY_GROUP,)

    consumer_group: str


@dataclass(frozen=True, slots=True, kw_only=True)
class GetProducerConnectionListRequestHeader(RequestHeader):
    """GET_PRODUCER_CONNECTION_LIST (204)."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.GET_PRODUCER_CONNECTION_LIST,)

    producer_group: str


@dataclass(frozen=True, slots=True, kw_only=True)
class GetConsumeStatsInBrokerRequestHeader(RequestHeader):
    """GET_BROKER_CONSUME_STATS (317, RocketMQ's ``GetConsumeStatsInBrokerHeader``): every group's
    consume stats, of ordered topics only with ``is_order``. RocketMQ marks isOrder ``@CFNotNull``;
    Gantry's broker has always taken a missing one as false, and still does."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.GET_BROKER_CONSUME_STATS,)

    is_order: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryTopicConsumeByWhoRequestHeader(RequestHeader):
    """QUERY_TOPIC_CONSUME_BY_WHO (300): the groups that consume ``topic`` on the broker."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.QUERY_TOPIC_CONSUME_BY_WHO,)

    topic: str


@dataclass(frozen=True, slots=True, kw_only=True)
class GetTopicConfigRequestHeader(RequestHeader):
    """GET_TOPIC_CONFIG (351, RocketMQ 5)."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.GET_TOPIC_CONFIG,)

    topic: str


@dataclass(frozen=True, slots=True, kw_only=True)
class GetSubscriptionGroupConfigRequestHeader(RequestHeader):
    """GET_SUBSCRIPTIONGROUP_CONFIG (352, RocketMQ 5)."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.GET_SUBSCRIPTIONGROUP_CONFIG,)

    group: str
