"""The one mapping of errors to HTTP (console.http_errors), used by the API and the pages.

A broker's refusal arrives as the engine's typed error (``broker_error``: what the admin client raises
for a response code); a plain MQBrokerError of a code with no class of its own is a 502.
"""

from __future__ import annotations

import pytest

from brokers.engine.client.admin_errors import broker_error
from brokers.engine.client.errors import CLIENT_ERROR, MQBrokerError, MQClientError
from brokers.engine.common.topic_config import InvalidTopicConfigError
from brokers.engine.common.topic_validator import InvalidNameError
from brokers.engine.remoting.codes import ResponseCode
from brokers.engine.remoting.errors import RemotingConnectError, RemotingProtocolError, RemotingTimeoutError
from console.errors import Conflict, Forbidden, InvalidInput, NotFound, Unavailable
from console.http_errors import flatten_errors, problem_for


@pytest.mark.parametrize(
    ("exc", "status", "code"),
    [
        (InvalidInput("cluster", "unknown"), 400, "invalid"),
        (InvalidNameError("bad"), 400, "invalid"),
        (InvalidTopicConfigError("perm"), 400, "invalid"),
        (MQClientError(CLIENT_ERROR, "cluster 'x' is not known"), 400, "rejected"),
        (Forbidden("no"), 403, "permission_denied"),
        (NotFound("gone"), 404, "not_found"),
        (broker_error(ResponseCode.TOPIC_NOT_EXIST, "no route"), 404, "not_found"),
        (broker_error(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, "no group"), 404, "not_found"),
        (broker_error(ResponseCode.CONSUMER_NOT_ONLINE, "not online"), 404, "not_found"),
        (Conflict("exists"), 409, "conflict"),
        (broker_error(ResponseCode.TOPIC_EXIST_ALREADY, "exists"), 409, "conflict"),
        (broker_error(ResponseCode.NO_PERMISSION, "forbidden"), 409, "conflict"),
        (broker_error(ResponseCode.SYSTEM_BUSY, "busy"), 503, "unavailable"),
        (broker_error(ResponseCode.FLOW_CONTROL, "flow control"), 503, "unavailable"),
        (broker_error(ResponseCode.SERVICE_NOT_AVAILABLE, "not writable"), 503, "unavailable"),
        (Unavailable("down"), 503, "unavailable"),
        (
            RemotingConnectError("no name server answered (127.0.0.1:1: refused)", "127.0.0.1:1"),
            503,
            "namesrv_unreachable",
        ),
        (RemotingConnectError("connect refused", "10.9.9.9:10911"), 503, "broker_unreachable"),
        (RemotingTimeoutError("timed out", "10.9.9.9:10911", 3.0), 503, "broker_unreachable"),
        (broker_error(ResponseCode.SYSTEM_ERROR, "disk full", addr="10.9.9.9:10911"), 502, "broker_error"),
        (MQBrokerError(ResponseCode.QUERY_NOT_FOUND, "nothing"), 502, "broker_error"),
        (RemotingProtocolError("bad frame"), 502, "broker_error"),
    ],
)
def test_mapping(exc, status, code) -> None:
    problem = problem_for(exc)
    assert (problem.status, problem.code) == (status, code)
    assert problem.detail


def test_other_errors_are_not_mapped() -> None:
    assert problem_for(KeyError("x")) is None


def test_validation_details_flatten_to_dotted_fields() -> None:
    detail = {"name": ["bad"], "brokers": {"broker-a": {"perm": ["too big"]}}, "non_field_errors": ["x"]}
    assert flatten_errors(detail) == {"name": ["bad"], "brokers.broker-a.perm": ["too big"], "non_field_errors": ["x"]}
