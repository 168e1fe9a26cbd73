"""Name server headers: a broker's registration and liveness, write permission, KV config, topics of a cluster.

Wire names and requiredness are RocketMQ's (``RegisterBrokerRequestHeader`` and friends, and the
5.x broker's ``BrokerHeartbeatRequestHeader``, ``GetBrokerMemberGroupRequestHeader`` and
``RegisterTopicRequestHeader``). RocketMQ marks REGISTER_BROKER's ``haServerAddr`` ``@CFNotNull``;
Gantry's name server has always read a missing one as empty, so it stays optional here.

Gantry adds ``gantryEpoch`` (the broker's group epoch) to REGISTER_BROKER, and the name server answers
it, with ``gantrySlaveId`` when it refuses a stale master (see :mod:`brokers.engine.namesrv.processor`).

The name server's answers with a custom header are typed here too (``*ResponseHeader``, decoded by
the sender). Their counts default to 0 when missing, as the admin client has always read them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.headers.base import RequestHeader

__all__ = [
    "AddWritePermOfBrokerRequestHeader",
    "AddWritePermOfBrokerResponseHeader",
    "BrokerHeartbeatRequestHeader",
    "DeleteKVConfigRequestHeader",
    "GetBrokerMemberGroupRequestHeader",
    "GetKVConfigRequestHeader",
    "GetKVConfigResponseHeader",
    "GetKVListByNamespaceRequestHeader",
    "GetTopicsByClusterRequestHeader",
    "PutKVConfigRequestHeader",
    "QueryDataVersionRequestHeader",
    "QueryDataVersionResponseHeader",
    "RegisterBrokerRequestHeader",
    "RegisterBrokerResponseHeader",
    "RegisterTopicRequestHeader",
    "UnRegisterBrokerRequestHeader",
    "WipeWritePermOfBrokerRequestHeader",
    "WipeWritePermOfBrokerResponseHeader",
]


# -- a broker's registration and liveness ---------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class RegisterBrokerRequestHeader(RequestHeader):
    """REGISTER_BROKER (103); the body is the RegisterBrokerBody, ``compressed`` or JSON, with its
    masked CRC32 in ``body_crc32`` (0: not checked).

    ``heartbeat_timeout_millis`` and ``enable_acting_master`` are RocketMQ 5's and not honoured
    (a broker expires after the name server's ``broker_channel_expired_s``).
    """

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.REGISTER_BROKER,)

    broker_name: str
    broker_addr: str
    cluster_name: str
    ha_server_addr: str = ""
    broker_id: int
    heartbeat_timeout_millis: int | None = None
    enable_acting_master: bool | None = None
    compressed: bool = False
    body_crc32: int = 0
    gantry_epoch: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class RegisterBrokerResponseHeader(RequestHeader):
    """REGISTER_BROKER's answer: the group master's address and HA address (a slave learns its master
    here), and Gantry's ``gantryEpoch`` (the broker name's highest epoch); with a stale master's
    refusal, ``gantrySlaveId``, the id to rejoin the group with."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.REGISTER_BROKER,)

    ha_server_addr: str | None = None
    master_addr: str | None = None
    gantry_epoch: int = 0
    gantry_slave_id: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UnRegisterBrokerRequestHeader(RequestHeader):
    """UNREGISTER_BROKER (104)."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.UNREGISTER_BROKER,)

    broker_name: str
    broker_addr: str
    cluster_name: str
    broker_id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryDataVersionRequestHeader(RequestHeader):
    """QUERY_DATA_VERSION (322): has the broker's topic config changed since it registered? The body
    is the broker's DataVersion; only ``broker_addr`` is looked up, the rest is RocketMQ's and required."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.QUERY_DATA_VERSION,)

    broker_name: str
    broker_addr: str
    cluster_name: str
    broker_id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryDataVersionResponseHeader(RequestHeader):
    """QUERY_DATA_VERSION's answer; the body is the DataVersion the name server holds."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.QUERY_DATA_VERSION,)

    changed: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerHeartbeatRequestHeader(RequestHeader):
    """BROKER_HEARTBEAT (904), a RocketMQ 5 broker's liveness refresh; the optional fields are the
    controller mode's and not read."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.BROKER_HEARTBEAT,)

    cluster_name: str
    broker_addr: str
    broker_name: str
    broker_id: int | None = None
    epoch: int | None = None
    max_offset: int | None = None
    confirm_offset: int | None = None
    heartbeat_timeout_mills: int | None = None
    election_priority: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class GetBrokerMemberGroupRequestHeader(RequestHeader):
    """GET_BROKER_MEMBER_GROUP (901): the addresses of ``broker_name``'s group."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.GET_BROKER_MEMBER_GROUP,)

    cluster_name: str
    broker_name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RegisterTopicRequestHeader(RequestHeader):
    """REGISTER_TOPIC_IN_NAMESRV (217): one topic's queue data (the body) for registered brokers."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.REGISTER_TOPIC_IN_NAMESRV,)

    topic: str


# -- routes and write permission ------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class GetTopicsByClusterRequestHeader(RequestHeader):
    """GET_TOPICS_BY_CLUSTER (224)."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.GET_TOPICS_BY_CLUSTER,)

    cluster: str


@dataclass(frozen=True, slots=True, kw_only=True)
class WipeWritePermOfBrokerRequestHeader(RequestHeader):
    """WIPE_WRITE_PERM_OF_BROKER (205)."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.WIPE_WRITE_PERM_OF_BROKER,)

    broker_name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class WipeWritePermOfBrokerResponseHeader(RequestHeader):
    """WIPE_WRITE_PERM_OF_BROKER's answer: how many topics' queue data lost the WRITE bit."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.WIPE_WRITE_PERM_OF_BROKER,)

    wipe_topic_count: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class AddWritePermOfBrokerRequestHeader(RequestHeader):
    """ADD_WRITE_PERM_OF_BROKER (327)."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.ADD_WRITE_PERM_OF_BROKER,)

    broker_name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AddWritePermOfBrokerResponseHeader(RequestHeader):
    """ADD_WRITE_PERM_OF_BROKER's answer: how many topics' queue data got READ|WRITE."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.ADD_WRITE_PERM_OF_BROKER,)

    add_topic_count: int = 0


# -- KV config ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class PutKVConfigRequestHeader(RequestHeader):
    """PUT_KV_CONFIG (100)."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.PUT_KV_CONFIG,)

    namespace: str
    key: str
    value: str


@dataclass(frozen=True, slots=True, kw_only=True)
class GetKVConfigRequestHeader(RequestHeader):
    """GET_KV_CONFIG (101); an absent entry is answered QUERY_NOT_FOUND."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.GET_KV_CONFIG,)

    namespace: str
    key: str


@dataclass(frozen=True, slots=True, kw_only=True)
class GetKVConfigResponseHeader(RequestHeader):
    """GET_KV_CONFIG's answer."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.GET_KV_CONFIG,)

    value: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteKVConfigRequestHeader(RequestHeader):
    """DELETE_KV_CONFIG (102)."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.DELETE_KV_CONFIG,)

    namespace: str
    key: str


@dataclass(frozen=True, slots=True, kw_only=True)
class GetKVListByNamespaceRequestHeader(RequestHeader):
    """GET_KVLIST_BY_NAMESPACE (219); the table is the body."""

    CODES: ClassVar[tuple[int, ...]] = (RequestCode.GET_KVLIST_BY_NAMESPACE,)

    namespace: str
