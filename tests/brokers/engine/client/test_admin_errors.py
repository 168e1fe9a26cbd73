"""Typed admin errors: each refusal code raises its class, still an MQBrokerError carrying the code.

The table is checked code by code, and the cheap refusals are asked of a real name server and broker:
a topic without a route, a group without a connection, an ACL request to a broker without an ACL
file, a request code the broker does not know.
"""

from __future__ import annotations

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.client.admin_acl import get_acl_accounts
from brokers.engine.client.admin_errors import (
    AclChangeRefused,
    BrokerSystemError,
    BrokerUnavailable,
    GroupNotFound,
    GroupNotOnline,
    NoPermission,
    NotFoundError,
    RequestNotSupported,
    TopicExists,
    TopicNotFound,
    broker_error,
)
from brokers.engine.client.errors import MQBrokerError
from brokers.engine.client.plan import Call, Plan, check
from brokers.engine.remoting.codes import ResponseCode
from brokers.engine.remoting.errors import RemotingError

TABLE = [
    (ResponseCode.TOPIC_NOT_EXIST, TopicNotFound),
    (ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, GroupNotFound),
    (ResponseCode.CONSUMER_NOT_ONLINE, GroupNotOnline),
    (ResponseCode.TOPIC_EXIST_ALREADY, TopicExists),
    (ResponseCode.NO_PERMISSION, NoPermission),
    (ResponseCode.SYSTEM_BUSY, BrokerUnavailable),
    (ResponseCode.SERVICE_NOT_AVAILABLE, BrokerUnavailable),
    (ResponseCode.FLOW_CONTROL, BrokerUnavailable),
    (ResponseCode.REQUEST_CODE_NOT_SUPPORTED, RequestNotSupported),
    (ResponseCode.SYSTEM_ERROR, BrokerSystemError),
    (ResponseCode.UPDATE_AND_CREATE_ACL_CONFIG_FAILED, AclChangeRefused),
    (ResponseCode.DELETE_ACL_CONFIG_FAILED, AclChangeRefused),
    (ResponseCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED, AclChangeRefused),
]


@pytest.mark.parametrize(("code", "cls"), TABLE, ids=[code.name for code, _ in TABLE])
def test_each_code_maps_to_its_class(code: ResponseCode, cls: type[MQBrokerError]) -> None:
    exc = broker_error(code, "the remark", request_code=17, addr="127.0.0.1:10911")
    assert type(exc) is cls
    assert isinstance(exc, MQBrokerError) and isinstance(exc, RemotingError)
    assert (exc.code, exc.remark, exc.request_code, exc.addr) == (int(code), "the remark", 17, "127.0.0.1:10911")
    assert str(exc) == str(MQBrokerError(code, "the remark", request_code=17, addr="127.0.0.1:10911"))


def test_a_code_without_a_class_stays_a_plain_broker_error() -> None:
    exc = broker_error(ResponseCode.QUERY_NOT_FOUND, None)
    assert type(exc) is MQBrokerError and exc.code == ResponseCode.QUERY_NOT_FOUND


def test_not_found_is_the_base_of_topics_and_groups_not_found() -> None:
    assert issubclass(TopicNotFound, NotFoundError) and issubclass(GroupNotFound, NotFoundError)
    assert issubclass(GroupNotOnline, GroupNotFound)
    assert not issubclass(NoPermission, NotFoundError)


@pytest.fixture
def admin(session_cluster):
    with BlockingMQAdminClient(session_cluster.namesrv_addr, timeout_s=3.0) as client:
        yield client


def test_a_topic_without_a_route_is_topic_not_found(admin) -> None:
    with pytest.raises(TopicNotFound) as err:
        admin.examine_topic_route_info("TopicThatIsNowhere_admin_errors")
    assert err.value.code == ResponseCode.TOPIC_NOT_EXIST


def test_a_group_without_a_connection_is_group_not_online(admin) -> None:
    with pytest.raises(GroupNotOnline) as err:
        admin.examine_consumer_connection_info("group_that_is_nowhere_admin_errors")
    assert err.value.code == ResponseCode.CONSUMER_NOT_ONLINE
    assert isinstance(err.value, GroupNotFound)


def test_an_acl_request_to_a_broker_without_acl_is_no_permission(session_cluster, admin) -> None:
    with pytest.raises(NoPermission) as err:
        admin.driver.run(get_acl_accounts(session_cluster.broker_addr("broker-a")))
    assert err.value.code == ResponseCode.NO_PERMISSION


def test_an_unknown_request_code_is_request_not_supported(session_cluster, admin) -> None:
    addr = session_cluster.broker_addr("broker-a")

    def unknown() -> Plan[None]:
        check((yield Call(31999, addr=addr)), request_code=31999)

    with pytest.raises(RequestNotSupported) as err:
        admin.driver.run(unknown())
    assert (err.value.code, err.value.request_code, err.value.addr) == (
        ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
        31999,
        addr,
    )
