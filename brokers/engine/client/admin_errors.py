"""Typed errors of admin calls: what a non-success response code means, as a class.

A name server or broker refuses a request with a response code; the client turns it into an
:class:`~brokers.engine.client.errors.MQBrokerError` (``code`` and ``remark`` kept). The codes a
caller reacts to get a subclass of their own, so callers catch a meaning instead of comparing wire
codes, and every ``except MQBrokerError`` (or ``except RemotingError``) keeps catching them:

=====================================================  ==========================================
code (RocketMQ's ``ResponseCode``)                     class
=====================================================  ==========================================
TOPIC_NOT_EXIST (17)                                   :class:`TopicNotFound` (a :class:`NotFoundError`)
SUBSCRIPTION_GROUP_NOT_EXIST (26)                      :class:`GroupNotFound` (a :class:`NotFoundError`)
CONSUMER_NOT_ONLINE (206)                              :class:`GroupNotOnline` (a :class:`GroupNotFound`)
TOPIC_EXIST_ALREADY (18)                               :class:`TopicExists`
NO_PERMISSION (16)                                     :class:`NoPermission`
SYSTEM_BUSY (2), SERVICE_NOT_AVAILABLE (14),           :class:`BrokerUnavailable`
FLOW_CONTROL (215)
REQUEST_CODE_NOT_SUPPORTED (3)                         :class:`RequestNotSupported`
SYSTEM_ERROR (1)                                       :class:`BrokerSystemError`
UPDATE_AND_CREATE_ACL_CONFIG_FAILED (209),             :class:`AclChangeRefused`
DELETE_ACL_CONFIG_FAILED (210),
UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED (211)
=====================================================  ==========================================

Any other code stays a plain MQBrokerError. :func:`broker_error` is the one table lookup; the
client's :func:`~brokers.engine.client.plan.check` raises what it returns. The transport's errors
(no connection, no answer in time) and the client's own refusals (:class:`MQClientError` with code
:data:`CLIENT_ERROR`) are re-exported here, so this module names every way an admin call fails.
"""

from __future__ import annotations

from brokers.engine.client.errors import CLIENT_ERROR, MQBrokerError, MQClientError
from brokers.engine.remoting.codes import ResponseCode
from brokers.engine.remoting.errors import RemotingConnectError, RemotingError, RemotingTimeoutError

__all__ = [
    "CLIENT_ERROR",
    "AclChangeRefused",
    "BrokerSystemError",
    "BrokerUnavailable",
    "GroupNotFound",
    "GroupNotOnline",
    "MQBrokerError",
    "MQClientError",
    "NoPermission",
    "NotFoundError",
    "RemotingConnectError",
    "RemotingError",
    "RemotingTimeoutError",
    "RequestNotSupported",
    "TopicExists",
    "TopicNotFound",
    "broker_error",
]


class NotFoundError(MQBrokerError):
    """The topic or group the request names does not exist (where it was asked)."""


class TopicNotFound(NotFoundError):
    """TOPIC_NOT_EXIST: the name servers have no route for the topic, or the broker has no such topic."""


class GroupNotFound(NotFoundError):
    """SUBSCRIPTION_GROUP_NOT_EXIST: the broker has no subscription group of that name."""


class GroupNotOnline(GroupNotFound):
    """CONSUMER_NOT_ONLINE: no broker has a live connection of the consumer group."""


class TopicExists(MQBrokerError):
    """TOPIC_EXIST_ALREADY: the topic to be created is there already."""


class NoPermission(MQBrokerError):
    """NO_PERMISSION: the broker's or topic's perm (or the ACL) forbids the operation."""


class BrokerUnavailable(MQBrokerError):
    """SYSTEM_BUSY, SERVICE_NOT_AVAILABLE or FLOW_CONTROL: the server cannot serve it now; try later."""


class RequestNotSupported(MQBrokerError):
    """REQUEST_CODE_NOT_SUPPORTED: the server does not know the request (an older or other broker)."""


class BrokerSystemError(MQBrokerError):
    """SYSTEM_ERROR: the server failed to process the request; the remark says why."""


class AclChangeRefused(MQBrokerError):
    """An ACL update, delete or global white-list update the broker refused; the remark names the field."""


_BY_CODE: dict[int, type[MQBrokerError]] = {
    ResponseCode.TOPIC_NOT_EXIST: TopicNotFound,
    ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST: GroupNotFound,
    ResponseCode.CONSUMER_NOT_ONLINE: GroupNotOnline,
    ResponseCode.TOPIC_EXIST_ALREADY: TopicExists,
    ResponseCode.NO_PERMISSION: NoPermission,
    ResponseCode.SYSTEM_BUSY: BrokerUnavailable,
    ResponseCode.SERVICE_NOT_AVAILABLE: BrokerUnavailable,
    ResponseCode.FLOW_CONTROL: BrokerUnavailable,
    ResponseCode.REQUEST_CODE_NOT_SUPPORTED: RequestNotSupported,
    ResponseCode.SYSTEM_ERROR: BrokerSystemError,
    ResponseCode.UPDATE_AND_CREATE_ACL_CONFIG_FAILED: AclChangeRefused,
    ResponseCode.DELETE_ACL_CONFIG_FAILED: AclChangeRefused,
    ResponseCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED: AclChangeRefused,
}


def broker_error(
    code: int, remark: str | None, *, request_code: int | None = None, addr: str | None = None
) -> MQBrokerError:
    """The error of a non-success ``code``: its typed subclass from the table above, else MQBrokerError."""
    cls = _BY_CODE.get(int(code), MQBrokerError)
    return cls(code, remark, request_code=request_code, addr=addr)
