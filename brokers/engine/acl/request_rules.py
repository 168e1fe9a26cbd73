"""REQUEST_RULES: what each request code needs from the signing account, as one table of data.

Every code in :class:`~brokers.engine.remoting.codes.RequestCode` has a row (a test holds this), of one
of three kinds:

- ``SIGNATURE``: a valid signature by any account; no resource is checked (route and KV reads).
- ``RESOURCE``: PUB or SUB on topics and groups named by the request (``needs``, read from ext fields,
  or ``body_needs`` for what is in the body). A group is the resource ``%RETRY%<group>``.
- ``ADMIN``: an account with ``admin: true``.

The resource rows follow RocketMQ 4.9's ``PlainAccessValidator.parse`` (sends PUB on the topic;
pulls, offsets, heartbeats SUB on the group and the topic) and go further where 4.9 checks nothing:
SEND_BATCH_MESSAGE needs PUB like any send; the offset, lock and stats codes a consumer uses need SUB
on its group and topics; and every code that changes the tier, reads another group's or the broker's
state, or acts on clients (resets, forced rebalances, promotion, config and runtime reads, message
reads by commit-log offset) is admin-only. A code absent from the table (a newer RocketMQ code) is
admin-only too. Unserved codes have rows all the same, so the table is the whole protocol.

Two departures from 4.9 on the send codes, both closing a way round the check:
- a send to a retry topic ``%RETRY%G`` needs SUB on G itself (4.9 checks the producer-group field,
  which the sender chooses);
- a send names its topic in ``topic`` (V1) or ``b`` (V2); both are checked when both are present, so
  the check cannot read one field while the broker stores under the other.
Like 4.9, PUB on ``RMQ_SYS_TRACE_TOPIC`` needs only a signature (every client may write traces).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType
from typing import Any, NamedTuple

from brokers.engine.acl.acl_refused import AclRefused
from brokers.engine.acl.permission import Perm, group_resource
from brokers.engine.common import json_compat
from brokers.engine.common.constants import RETRY_GROUP_TOPIC_PREFIX, RMQ_SYS_TRACE_TOPIC
from brokers.engine.remoting.codes import RequestCode as C
from brokers.engine.remoting.command import RemotingCommand


# RocketMQ 4.6-4.8's code for reading the whole ACL; 4.9 dropped it, so codes.py (4.9.8) lacks it.
GET_BROKER_CLUSTER_ACL_CONFIG = 54


class Access(Enum):
    SIGNATURE = "signature only"
    RESOURCE = "resources"
    ADMIN = "admin"


class ResourceNeed(NamedTuple):
    """One (resource, perm) a request needs: a topic, or ``%RETRY%<group>`` for a group."""

    resource: str
    perm: Perm


@dataclass(frozen=True, slots=True)
class FieldNeed:
    """A topic or group named by an ext field, and the perm needed on it."""

    field: str
    perm: Perm
    is_group: bool
    optional: bool = False  # absent or empty: nothing to check (else the request is refused)


BodyNeeds = Callable[[RemotingCommand], list[ResourceNeed]]


@dataclass(frozen=True, slots=True)
class RequestRule:
    access: Access
    why: str
    needs: tuple[FieldNeed, ...] = ()
    body_needs: BodyNeeds | None = None
    # The ext fields whose values alone decide the needs (None: the body does too). A validator may
    # remember a granted request by (accessKey, code, these values) until the ACL is reloaded.
    decided_by: tuple[str, ...] | None = ()


def _topic(field: str, perm: Perm = Perm.SUB, *, optional: bool = False) -> FieldNeed:
    return FieldNeed(field, perm, is_group=False, optional=optional)


def _group(field: str, perm: Perm = Perm.SUB, *, optional: bool = False) -> FieldNeed:
    return FieldNeed(field, perm, is_group=True, optional=optional)


def _signature(why: str) -> RequestRule:
    return RequestRule(Access.SIGNATURE, why)


def _admin(why: str) -> RequestRule:
    return RequestRule(Access.ADMIN, why)


def _resources(why: str, *needs: FieldNeed, body: BodyNeeds | None = None) -> RequestRule:
    decided_by: tuple[str, ...] | None = tuple(need.field for need in needs)
    if body is _send_needs:
        decided_by = SEND_TOPIC_FIELDS  # the "body" needs of a send are read from these ext fields
    elif body is not None:
        decided_by = None
    return RequestRule(Access.RESOURCE, why, tuple(needs), body, decided_by)


# -- what the body names (heartbeats, lock requests) and what a send names ------------------------


MAX_CHECKED_BODY_BYTES = 4 * 1024 * 1024  # a heartbeat or lock body the guard parses: 4x the broker's heartbeat cap


def _json_body(request: RemotingCommand, what: str) -> object:
    if len(request.body) > MAX_CHECKED_BODY_BYTES:
        raise AclRefused(
            f"the {what} body of {len(request.body)} bytes is over the {MAX_CHECKED_BODY_BYTES} bytes "
            "whose permissions are checked"
        )
    try:
        return json_compat.loads(request.body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise AclRefused(f"the {what} body is not JSON, so its permissions cannot be checked") from None


def _items(value: object, what: str) -> list[Any]:
    """A JSON list from a body (absent: empty); anything else is refused."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise AclRefused(f"{what} in the body is not a list, so its permissions cannot be checked")
    return value


SEND_TOPIC_FIELDS = ("topic", "b")  # where a send names its topic: V1 header, V2 header


def _send_needs(request: RemotingCommand) -> list[ResourceNeed]:
    """PUB on the topic (``topic`` in V1, ``b`` in V2; both if both), SUB on G for a ``%RETRY%G`` topic."""
    ext_fields = request.ext_fields
    needs: list[ResourceNeed] = []
    named = False
    for key in SEND_TOPIC_FIELDS:  # every send, so no comprehension frames
        topic = ext_fields.get(key)
        if not topic:
            continue
        named = True
        if topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
            needs.append(ResourceNeed(topic, Perm.SUB))  # the retry topic is its group's resource
        elif topic != RMQ_SYS_TRACE_TOPIC:
            needs.append(ResourceNeed(topic, Perm.PUB))
    if not named:
        raise AclRefused(f"request code {request.code} names no topic, so its permissions cannot be checked")
    return needs


def _heartbeat_needs(request: RemotingCommand) -> list[ResourceNeed]:
    """SUB on every consumer group of the heartbeat and on every topic it subscribes (producers: none)."""
    data = _json_body(request, "heartbeat")
    if not isinstance(data, dict):
        raise AclRefused("the heartbeat body is not a JSON object, so its permissions cannot be checked")
    needs = []
    for consumer in _items(data.get("consumerDataSet"), "consumerDataSet"):
        group = consumer.get("groupName") if isinstance(consumer, dict) else None
        if not isinstance(group, str) or not group:
            raise AclRefused("a heartbeat consumer has no groupName, so its permissions cannot be checked")
        needs.append(ResourceNeed(group_resource(group), Perm.SUB))
        for subscription in _items(consumer.get("subscriptionDataSet"), "subscriptionDataSet"):
            topic = subscription.get("topic") if isinstance(subscription, dict) else None
            if not isinstance(topic, str) or not topic:
                raise AclRefused(f"a heartbeat subscription of group {group} has no topic")
            needs.append(ResourceNeed(topic, Perm.SUB))
    return needs


def _lock_needs(request: RemotingCommand) -> list[ResourceNeed]:
    """SUB on the body's ``consumerGroup`` and on the topic of every queue in its ``mqSet``."""
    data = _json_body(request, "lock")
    group = data.get("consumerGroup") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(group, str) or not group:
        raise AclRefused("the lock body names no consumerGroup, so its permissions cannot be checked")
    needs = [ResourceNeed(group_resource(group), Perm.SUB)]
    for queue in _items(data.get("mqSet"), "mqSet"):
        topic = queue.get("topic") if isinstance(queue, dict) else None
        if not isinstance(topic, str) or not topic:
            raise AclRefused("a queue in the lock body has no topic")
        needs.append(ResourceNeed(topic, Perm.SUB))
    return needs


def _batch_ack_needs(request: RemotingCommand) -> list[ResourceNeed]:
    """SUB on the group and the topic of every entry of a BATCH_ACK_MESSAGE body (``c``/``t`` or the long names)."""
    data = _json_body(request, "batch ack")
    needs = []
    for ack in _items(data.get("acks") if isinstance(data, dict) else None, "acks"):
        group = (ack.get("c") or ack.get("consumerGroup")) if isinstance(ack, dict) else None
        topic = (ack.get("t") or ack.get("topic")) if isinstance(ack, dict) else None
        if not isinstance(group, str) or not group or not isinstance(topic, str) or not topic:
            raise AclRefused("an entry of the batch ack body names no consumerGroup or topic")
        needs += [ResourceNeed(topic, Perm.SUB), ResourceNeed(group_resource(group), Perm.SUB)]
    if not needs:
        raise AclRefused("the batch ack body names nothing, so its permissions cannot be checked")
    return needs


# -- the table: one row per request code ------------------------------------------------------------

_RULES: dict[int, RequestRule] = {
    C.SEND_MESSAGE: _resources("PUB on the topic; a retry topic: SUB on its group", body=_send_needs),
    C.PULL_MESSAGE: _resources("consume: SUB on the topic and the group", _topic("topic"), _group("consumerGroup")),
    C.POP_MESSAGE: _resources("5.x pop: SUB on the topic and the group", _topic("topic"), _group("consumerGroup")),
    C.ACK_MESSAGE: _resources(
        "5.x ack of a popped message: SUB on the topic and the group", _topic("topic"), _group("consumerGroup")
    ),
    C.CHANGE_MESSAGE_INVISIBLETIME: _resources(
        "5.x change of a popped message's invisible time: SUB on the topic and the group",
        _topic("topic"),
        _group("consumerGroup"),
    ),
    C.BATCH_ACK_MESSAGE: _resources("5.x batch ack: SUB on each topic and group of the body", body=_batch_ack_needs),
    C.LITE_PULL_MESSAGE: _resources(
        "5.x lite pull, as PULL_MESSAGE: SUB on the topic and the group", _topic("topic"), _group("consumerGroup")
    ),
    C.QUERY_MESSAGE: _resources("read messages by key: SUB on the topic", _topic("topic")),
    C.QUERY_BROKER_OFFSET: _admin("the broker's commit-log size: runtime state"),
    C.QUERY_CONSUMER_OFFSET: _resources(
        "a group's offset: SUB on group and topic", _group("consumerGroup"), _topic("topic")
    ),
    C.UPDATE_CONSUMER_OFFSET: _resources(
        "commit an offset: SUB on group and topic", _group("consumerGroup"), _topic("topic")
    ),
    C.UPDATE_AND_CREATE_TOPIC: _admin("creates or changes a topic"),
    C.GET_ALL_TOPIC_CONFIG: _admin("every topic's config (slave sync signs as admin)"),
    C.GET_TOPIC_CONFIG_LIST: _admin("every topic's config"),
    C.GET_TOPIC_CONFIG: _resources("one topic's config (RocketMQ 5.x): SUB on the topic", _topic("topic")),
    C.GET_SUBSCRIPTIONGROUP_CONFIG: _resources("one group's config (RocketMQ 5.x): SUB on the group", _group("group")),
    C.GET_TOPIC_NAME_LIST: _admin("every topic name on the broker"),
    C.UPDATE_BROKER_CONFIG: _admin("changes the broker's config"),
    C.GET_BROKER_CONFIG: _admin("the broker's config"),
    C.TRIGGER_DELETE_FILES: _admin("deletes store files"),
    C.GET_BROKER_RUNTIME_INFO: _admin("the broker's runtime state"),
    C.SEARCH_OFFSET_BY_TIMESTAMP: _resources("a queue's offset at a time: SUB on the topic", _topic("topic")),
    C.GET_MAX_OFFSET: _resources("a queue's max offset: SUB on the topic", _topic("topic")),
    C.GET_MIN_OFFSET: _resources("a queue's min offset: SUB on the topic", _topic("topic")),
    C.GET_EARLIEST_MSG_STORETIME: _resources("a queue's oldest store time: SUB on the topic", _topic("topic")),
    C.VIEW_MESSAGE_BY_ID: _admin("reads any message by commit-log offset; its topic is known only after the read"),
    C.HEART_BEAT: _resources("SUB on each consumer group and subscribed topic in the body", body=_heartbeat_needs),
    C.UNREGISTER_CLIENT: _resources(
        "leave a group: SUB on it (producers: none)", _group("consumerGroup", optional=True)
    ),
    C.CONSUMER_SEND_MSG_BACK: _resources(
        "retry a message: SUB on the group (and originTopic, if named)",
        _group("group"),
        _topic("originTopic", optional=True),
    ),
    C.END_TRANSACTION: _admin("commits a prepared message read by offset; transactions are not served"),
    C.GET_CONSUMER_LIST_BY_GROUP: _resources("a group's members: SUB on the group", _group("consumerGroup")),
    C.CHECK_TRANSACTION_STATE: _admin("broker-to-client call; not served by brokers"),
    C.NOTIFY_CONSUMER_IDS_CHANGED: _admin("broker-to-client call; not served by brokers"),
    C.LOCK_BATCH_MQ: _resources("lock queues: SUB on the body's group and topics", body=_lock_needs),
    C.UNLOCK_BATCH_MQ: _resources("unlock queues: SUB on the body's group and topics", body=_lock_needs),
    C.GET_ALL_CONSUMER_OFFSET: _admin("every group's offsets (slave sync signs as admin)"),
    C.GET_ALL_DELAY_OFFSET: _admin("the schedule service's offsets (slave sync)"),
    C.CHECK_CLIENT_CONFIG: _signature("checks a filter expression; changes and reveals nothing"),
    C.UPDATE_AND_CREATE_ACL_CONFIG: _admin("changes the ACL"),
    C.DELETE_ACL_CONFIG: _admin("changes the ACL"),
    C.GET_BROKER_CLUSTER_ACL_INFO: _admin("the ACL's version and addresses"),
    C.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG: _admin("changes the ACL"),
    GET_BROKER_CLUSTER_ACL_CONFIG: _admin("the ACL, secrets included (4.6-4.8 clients)"),
    C.PUT_KV_CONFIG: _admin("name server KV write"),
    C.GET_KV_CONFIG: _signature("name server KV read, open to clients as in RocketMQ"),
    C.DELETE_KV_CONFIG: _admin("name server KV write"),
    C.REGISTER_BROKER: _admin("route write: brokers sign with an admin account"),
    C.UNREGISTER_BROKER: _admin("route write"),
    C.GET_ROUTEINFO_BY_TOPIC: _signature("route read, open to every client"),
    C.GET_BROKER_CLUSTER_INFO: _signature("route read: broker names and addresses"),
    C.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: _admin("creates or changes a group"),
    C.GET_ALL_SUBSCRIPTIONGROUP_CONFIG: _admin("every group's config (slave sync)"),
    C.GET_TOPIC_STATS_INFO: _resources("a topic's queue offsets: SUB on the topic", _topic("topic")),
    C.GET_CONSUMER_CONNECTION_LIST: _resources("a group's clients: SUB on the group", _group("consumerGroup")),
    C.GET_PRODUCER_CONNECTION_LIST: _admin("a producer group's clients; producer groups are no ACL resource"),
    C.GET_ALL_PRODUCER_INFO: _admin("every producer group's clients"),
    C.WIPE_WRITE_PERM_OF_BROKER: _admin("route write"),
    C.GET_ALL_TOPIC_LIST_FROM_NAMESERVER: _admin("every topic name (admin tools)"),
    C.DELETE_SUBSCRIPTIONGROUP: _admin("deletes a group and maybe its offsets"),
    C.GET_CONSUME_STATS: _resources(
        "a group's lag: SUB on the group (and topic, if named)", _group("consumerGroup"), _topic("topic", optional=True)
    ),
    C.WHO_CONSUME_THE_MESSAGE: _admin("not served; reveals groups"),
    C.DELETE_TOPIC_IN_BROKER: _admin("deletes a topic"),
    C.DELETE_TOPIC_IN_NAMESRV: _admin("route write"),
    C.REGISTER_TOPIC_IN_NAMESRV: _admin("route write: brokers sign with an admin account"),
    C.GET_BROKER_MEMBER_GROUP: _admin("a broker group's members (broker to name server)"),
    C.BROKER_HEARTBEAT: _admin("a broker's liveness refresh (broker to name server)"),
    C.GET_KVLIST_BY_NAMESPACE: _signature("name server KV read"),
    C.RESET_CONSUMER_CLIENT_OFFSET: _admin("broker-to-client push; not served by brokers"),
    C.GET_CONSUMER_STATUS_FROM_CLIENT: _admin("broker-to-client call; not served by brokers"),
    C.INVOKE_BROKER_TO_RESET_OFFSET: _admin("rewrites a group's offsets and pushes them to live consumers"),
    C.INVOKE_BROKER_TO_GET_CONSUMER_STATUS: _admin("not served; reads clients' state"),
    C.GET_TOPICS_BY_CLUSTER: _admin("every topic of a cluster (admin tools)"),
    C.QUERY_TOPIC_CONSUME_BY_WHO: _admin("reveals every group consuming a topic"),
    C.REGISTER_FILTER_SERVER: _admin("not served; registers a server"),
    C.REGISTER_MESSAGE_FILTER_CLASS: _admin("not served; uploads code"),
    C.QUERY_CONSUME_TIME_SPAN: _resources(
        "not served; a group's time span: SUB on topic and group", _topic("topic"), _group("group")
    ),
    C.GET_SYSTEM_TOPIC_LIST_FROM_NS: _signature("system topic names, public knowledge"),
    C.GET_SYSTEM_TOPIC_LIST_FROM_BROKER: _signature("system topic names, public knowledge"),
    C.CLEAN_EXPIRED_CONSUMEQUEUE: _admin("store maintenance"),
    C.GET_CONSUMER_RUNNING_INFO: _admin("forwards to a client: its threads, config, stack"),
    C.QUERY_CORRECTION_OFFSET: _admin("not served; reads other groups' offsets"),
    C.CONSUME_MESSAGE_DIRECTLY: _admin("makes a client consume a message"),
    C.SEND_MESSAGE_V2: _resources("PUB on the topic (field b); a retry topic: SUB on its group", body=_send_needs),
    C.GET_UNIT_TOPIC_LIST: _admin("not served; topic lists"),
    C.GET_HAS_UNIT_SUB_TOPIC_LIST: _admin("not served; topic lists"),
    C.GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST: _admin("not served; topic lists"),
    C.CLONE_GROUP_OFFSET: _admin("writes a group's offsets"),
    C.VIEW_BROKER_STATS_DATA: _admin("the broker's statistics"),
    C.CLEAN_UNUSED_TOPIC: _admin("deletes topics"),
    C.GET_BROKER_CONSUME_STATS: _admin("every group's lag"),
    C.SEND_BATCH_MESSAGE: _resources("PUB on the topic, like any send (4.9 checks nothing)", body=_send_needs),
    C.QUERY_CONSUME_QUEUE: _admin("reads any queue's index and a group's filter"),
    C.QUERY_DATA_VERSION: _admin("a broker's registration check: broker credential"),
    C.RESUME_CHECK_HALF_MESSAGE: _admin("not served; transactions"),
    C.PUSH_REPLY_MESSAGE_TO_CLIENT: _admin("broker-to-client push; not served by brokers"),
    C.ADD_WRITE_PERM_OF_BROKER: _admin("route write"),
    C.GET_ALL_PRODUCER_INFO: _admin("every producer's connection"),
    C.DELETE_EXPIRED_COMMITLOG: _admin("store maintenance"),
    C.GANTRY_GET_ALL_CONSUMER_CONNECTIONS: _admin("every group's clients"),
    C.GANTRY_GET_QUEUE_STATS: _admin("every queue's offsets and every group's"),
    C.GANTRY_NOTIFY_CONSUMER_IDS_CHANGED: _admin("forces a group to rebalance"),
    C.GANTRY_PROMOTE_SLAVE: _admin("makes a slave the master"),
    C.GANTRY_GET_MASTERLESS_OFFSETS: _admin("offsets a slave took while masterless (broker to broker)"),
    C.GANTRY_GET_ACL_ACCOUNTS: _admin("who may do what: the ACL's accounts and perms (no secrets)"),
    C.GANTRY_SUBSCRIBE_CONFIG: _admin("a slave's subscription to its master's config changes (broker to broker)"),
    C.GANTRY_PUSH_CONFIG: _admin("master-to-slave push; not served by a broker's port"),
    C.GANTRY_GET_GRPC_ENDPOINT: _signature("where 5.x clients reach this broker, as a route says"),
    C.GANTRY_GET_POP_STATE: _admin("a group's POP deliveries in flight, with message ids"),
}
REQUEST_RULES: Mapping[int, RequestRule] = MappingProxyType(_RULES)
UNKNOWN_CODE_RULE = _admin("a code this table does not know: admin-only")


def rule_for(code: int) -> RequestRule:
    """The row for ``code``; an unknown code is admin-only."""
    return REQUEST_RULES.get(code, UNKNOWN_CODE_RULE)


def required_resources(request: RemotingCommand, rule: RequestRule | None = None) -> list[ResourceNeed]:
    """The (resource, perm) pairs a request needs; [] for signature-only and admin codes.

    ``rule`` is the request code's row when the caller has already looked it up.
    Raises AclRefused when a required field is missing or the body cannot be read, since then its
    permissions cannot be checked (the broker would refuse such a request anyway).
    """
    if rule is None:
        rule = rule_for(request.code)
    needs: list[ResourceNeed] = []
    for need in rule.needs:
        name = request.ext_fields.get(need.field)
        if not name:
            if need.optional:
                continue
            raise AclRefused(
                f"request code {request.code} lacks the field {need.field}, so its permissions cannot be checked"
            )
        needs.append(ResourceNeed(group_resource(name) if need.is_group else name, need.perm))
    if rule.body_needs is not None:
        needs.extend(rule.body_needs(request))
    return needs
