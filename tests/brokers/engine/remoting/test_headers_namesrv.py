"""The name server's headers: each through real frames of both serialize types, the wire names Apache's
brokers and mqadmin send, and a live name server's refusals. The checks every header gets (a round trip
through both frame types, the defaults, each missing field named) are test_headers.py's, over every
module of the package."""

from __future__ import annotations

import pytest

from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.errors import RemotingCommandError
from brokers.engine.remoting.headers import RequestHeader
from brokers.engine.remoting.headers import namesrv
from brokers.engine.remoting.headers.namesrv import (
    GetKVConfigRequestHeader,
    GetKVConfigResponseHeader,
    PutKVConfigRequestHeader,
    QueryDataVersionResponseHeader,
    RegisterBrokerRequestHeader,
    RegisterBrokerResponseHeader,
    WipeWritePermOfBrokerResponseHeader,
)
from tests.brokers.engine.namesrv.test_server import Namesrv, run

HEADER_CLASSES = [
    c for c in (getattr(namesrv, n) for n in namesrv.__all__) if isinstance(c, type) and issubclass(c, RequestHeader)
]


def test_every_class_is_named_for_its_side_and_has_a_code() -> None:
    assert len(HEADER_CLASSES) == len(namesrv.__all__) == 18
    for cls in HEADER_CLASSES:
        assert cls.__name__.endswith(("RequestHeader", "ResponseHeader")) and cls.CODES, cls


def test_registration_is_written_as_a_rocketmq_broker_writes_it() -> None:
    header = RegisterBrokerRequestHeader(
        broker_name="broker-a",
        broker_addr="10.0.0.1:10911",
        cluster_name="DefaultCluster",
        ha_server_addr="10.0.0.1:10912",
        broker_id=0,
        body_crc32=-12345,
    )
    assert header.encode() == {
        "brokerName": "broker-a",
        "brokerAddr": "10.0.0.1:10911",
        "clusterName": "DefaultCluster",
        "haServerAddr": "10.0.0.1:10912",
        "brokerId": "0",
        "compressed": "false",
        "bodyCrc32": "-12345",
        "gantryEpoch": "0",
    }


def test_a_rocketmq_5_registration_is_read_and_its_extra_fields_kept() -> None:
    ext = {
        "brokerName": "b",
        "brokerAddr": "h:1",
        "clusterName": "C",
        "haServerAddr": "h:2",
        "brokerId": "1",
        "heartbeatTimeoutMillis": "30000",
        "enableActingMaster": "false",
        "compressed": "true",
        "bodyCrc32": "7",
    }
    header = RegisterBrokerRequestHeader.decode(ext)
    assert (header.broker_id, header.compressed, header.body_crc32, header.gantry_epoch) == (1, True, 7, 0)
    assert (header.heartbeat_timeout_millis, header.enable_acting_master) == (30000, False)


def test_a_registration_without_ha_address_reads_it_empty_and_a_bad_broker_id_is_named() -> None:
    ext = {"brokerName": "b", "brokerAddr": "h:1", "clusterName": "C", "brokerId": "0"}
    assert RegisterBrokerRequestHeader.decode(ext).ha_server_addr == ""
    with pytest.raises(RemotingCommandError, match=r"^the custom field <brokerId> is not an integer: 'zero'$"):
        RegisterBrokerRequestHeader.decode({**ext, "brokerId": "zero"})
    with pytest.raises(RemotingCommandError, match=r"^the custom field <gantryEpoch> is not an integer: 'x'$"):
        RegisterBrokerRequestHeader.decode({**ext, "gantryEpoch": "x"})


def test_answers_drop_what_is_absent_and_read_a_missing_count_as_zero() -> None:
    assert RegisterBrokerResponseHeader(master_addr="m:1", gantry_epoch=3).encode() == {
        "masterAddr": "m:1",
        "gantryEpoch": "3",
    }
    assert RegisterBrokerResponseHeader.decode({}) == RegisterBrokerResponseHeader()
    assert QueryDataVersionResponseHeader(changed=True).encode() == {"changed": "true"}
    assert WipeWritePermOfBrokerResponseHeader.decode({}).wipe_topic_count == 0
    assert GetKVConfigResponseHeader.decode({"value": "broker-a:4"}).value == "broker-a:4"
    assert GetKVConfigResponseHeader.decode({}).value is None


def test_codes_are_the_name_servers() -> None:
    codes = {code for cls in HEADER_CLASSES for code in cls.CODES}
    assert codes == {
        RequestCode.REGISTER_BROKER,
        RequestCode.UNREGISTER_BROKER,
        RequestCode.QUERY_DATA_VERSION,
        RequestCode.BROKER_HEARTBEAT,
        RequestCode.GET_BROKER_MEMBER_GROUP,
        RequestCode.REGISTER_TOPIC_IN_NAMESRV,
        RequestCode.GET_TOPICS_BY_CLUSTER,
        RequestCode.WIPE_WRITE_PERM_OF_BROKER,
        RequestCode.ADD_WRITE_PERM_OF_BROKER,
        RequestCode.PUT_KV_CONFIG,
        RequestCode.GET_KV_CONFIG,
        RequestCode.DELETE_KV_CONFIG,
        RequestCode.GET_KVLIST_BY_NAMESPACE,
    }


def test_the_name_server_reads_the_typed_header_and_names_a_missing_field_changing_nothing() -> None:
    async def scenario() -> None:
        async with Namesrv() as ns:
            put = PutKVConfigRequestHeader(namespace="NS", key="k", value="v1").encode()
            assert (await ns.call(RequestCode.PUT_KV_CONFIG, put)).code == ResponseCode.SUCCESS
            refused = await ns.call(RequestCode.PUT_KV_CONFIG, {"namespace": "NS", "key": "k"})
            assert (refused.code, refused.remark) == (ResponseCode.SYSTEM_ERROR, "the custom field <value> is missing")
            got = await ns.call(RequestCode.GET_KV_CONFIG, GetKVConfigRequestHeader(namespace="NS", key="k").encode())
            assert GetKVConfigResponseHeader.decode(got).value == "v1"
            short = await ns.call(
                RequestCode.QUERY_DATA_VERSION, {"brokerName": "b", "brokerAddr": "127.0.0.1:1", "brokerId": "0"}
            )
            assert short.remark == "the custom field <clusterName> is missing"

    run(scenario())
