"""Every way a call through the gateway fails, for the apps to catch: the apps import errors from here.

The engine's typed admin errors (:mod:`brokers.engine.client.admin_errors`): a refusal is an
:class:`MQBrokerError` whose class says what it means (``except TopicNotFound``, never a comparison
of wire codes), a client-side refusal an :class:`MQClientError` with code :data:`CLIENT_ERROR`, no
answer a :class:`RemotingConnectError` or :class:`RemotingTimeoutError`; :class:`RemotingError` is the
base of them all. ``console.http_errors`` maps them to HTTP answers.
"""

from __future__ import annotations

from brokers.engine.client.admin_errors import (
    CLIENT_ERROR,
    AclChangeRefused,
    BrokerSystemError,
    BrokerUnavailable,
    GroupNotFound,
    GroupNotOnline,
    MQBrokerError,
    MQClientError,
    NoPermission,
    NotFoundError,
    RemotingConnectError,
    RemotingError,
    RemotingTimeoutError,
    RequestNotSupported,
    TopicExists,
    TopicNotFound,
)

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
]
