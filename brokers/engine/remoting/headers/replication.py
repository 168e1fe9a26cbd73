"""Gantry's own broker codes (no RocketMQ counterpart; an Apache broker answers them
REQUEST_CODE_NOT_SUPPORTED): promoting a slave, a slave's config subscription, a group's POP state,
and an operator's rebalance of a group.

GANTRY_GET_QUEUE_STATS (10002), GANTRY_GET_MASTERLESS_OFFSETS (10005) and GANTRY_GET_ACL_ACCOUNTS
(10006) carry no header.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.headers.base import RequestHeader

__all__ = [
    "GantryNotifyConsumerIdsChangedRequestHeader",
    "GetPopStateRequestHeader",
    "PromoteSlaveRequestHeader",
    "SubscribeConfigRequestHeader",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class PromoteSlaveRequestHeader(RequestHeader):
    """GANTRY_PROMOTE_SLAVE (10004): the slave ``broker_name`` id ``broker_id`` (the receiver's own,
    or it changes nothing) becomes its group's master in ``role`` (SYNC_MASTER | ASYNC_MASTER; None:
    the role the master had); ``dry_run`` only answers the plan. docs/broker-group-promotion.md."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.GANTRY_PROMOTE_SLAVE,)

    broker_name: str
    broker_id: int
    force: bool = False
    dry_run: bool = False
    role: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SubscribeConfigRequestHeader(RequestHeader):
    """GANTRY_SUBSCRIBE_CONFIG (10007): the slave at ``slave_addr`` asks its master to push topic and
    group changes on this connection (``broker/config_push.py``)."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.GANTRY_SUBSCRIBE_CONFIG,)

    slave_addr: str


@dataclass(frozen=True, slots=True, kw_only=True)
class GetPopStateRequestHeader(RequestHeader):
    """GANTRY_GET_POP_STATE (10010): the group's POP deliveries in flight on the broker, of ``topic``
    (None: every topic it popped), at most ``max_entries`` listed (None: the broker's default)."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.GANTRY_GET_POP_STATE,)

    consumer_group: str
    topic: str | None = None
    max_entries: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class GantryNotifyConsumerIdsChangedRequestHeader(RequestHeader):
    """GANTRY_NOTIFY_CONSUMER_IDS_CHANGED (10003): the broker sends NOTIFY_CONSUMER_IDS_CHANGED to
    the group's members connected to it now, whatever the notification settings."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.GANTRY_NOTIFY_CONSUMER_IDS_CHANGED,)

    consumer_group: str
