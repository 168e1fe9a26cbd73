"""What RocketMQ 5.x brokers send a name server beyond 4.x's REGISTER_BROKER: the compressed body under a header
saying ``compressed=false``, REGISTER_TOPIC_IN_NAMESRV (217), GET_BROKER_MEMBER_GROUP (901) and BROKER_HEARTBEAT
(904). The bodies are built the way 5.5.0's ``RegisterBrokerBody.encode`` / ``BrokerOuterAPI`` build them."""

from __future__ import annotations

import json
import struct
import zlib

import pytest

from brokers.engine.common.json_compat import int_keys
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.remoting.codes import RequestCode

BROKER_HEARTBEAT, GET_BROKER_MEMBER_GROUP = RequestCode.BROKER_HEARTBEAT, RequestCode.GET_BROKER_MEMBER_GROUP
REGISTER_TOPIC_IN_NAMESRV = RequestCode.REGISTER_TOPIC_IN_NAMESRV
from brokers.engine.namesrv.register_body import body_crc32, decode_register_body, is_zlib_stream
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import ResponseCode
from tests.brokers.engine.namesrv.test_server import Namesrv, register_request, run


def rocketmq5_compressed_body(*topics: tuple[str, int, int, int], version: dict | None = None) -> bytes:
    """RegisterBrokerBody.encode(true) of 5.x: data version, topics as text with a sixth field (attributes JSON),
    filter servers, then the static-topic mapping count (0)."""
    out = bytearray()

    def put(data: bytes) -> None:
        out.extend(struct.pack(">i", len(data)) + data)

    put(json.dumps(version or {"counter": 3, "stateVersion": 0, "timestamp": 1700000000000}).encode())
    out += struct.pack(">i", len(topics))
    for name, read, write, perm in topics:
        put(f"{name} {read} {write} {perm} SINGLE_TAG {{}}".encode())
    put(b"[]")
    out += struct.pack(">i", 0)
    return zlib.compress(bytes(out), 9)


def test_a_5x_compressed_body_is_read_whatever_the_compressed_flag_says():
    body = rocketmq5_compressed_body(("T5", 3, 5, 6), ("%RETRY%g", 1, 1, 6))
    assert is_zlib_stream(body) and not is_zlib_stream(b'{"filterServerList":[]}') and not is_zlib_stream(b"x")
    decoded = decode_register_body(body, compressed=False)
    table = decoded.topic_config_wrapper["topicConfigTable"]
    assert (table["T5"]["readQueueNums"], table["T5"]["writeQueueNums"], table["T5"]["perm"]) == (3, 5, 6)
    assert set(table) == {"T5", "%RETRY%g"} and decoded.topic_config_wrapper["dataVersion"]["counter"] == 3


def test_a_5x_broker_registering_compressed_under_compressed_false_gets_its_routes():
    async def scenario():
        async with Namesrv() as ns:
            request = register_request("broker-5", "127.0.0.1:10911", cluster="C5")
            request.body = rocketmq5_compressed_body(("T5", 4, 4, 6))
            request.ext_fields.update(
                {"compressed": "false", "bodyCrc32": str(body_crc32(request.body)), "enableActingMaster": "false"}
            )
            assert (await ns.client.invoke(ns.addr, request, 3.0)).code == ResponseCode.SUCCESS
            route = await ns.route("T5")
            assert route["queueDatas"][0]["brokerName"] == "broker-5" and route["queueDatas"][0]["writeQueueNums"] == 4

    run(scenario())


def topic_route_body(topic_queue_datas: list[dict]) -> bytes:
    return json.dumps({"queueDatas": topic_queue_datas}).encode()


def queue_data(broker: str = "broker-5", queues: int = 4, perm: int = 6) -> dict:
    return {"brokerName": broker, "perm": perm, "readQueueNums": queues, "topicSysFlag": 0, "writeQueueNums": queues}


def test_register_topic_in_namesrv_adds_one_topic_of_a_registered_broker():
    async def scenario():
        async with Namesrv() as ns:
            assert (await ns.register("broker-5", "127.0.0.1:10911", TopicConfig("Old", 1, 1))).code == 0
            answer = await ns.call(
                REGISTER_TOPIC_IN_NAMESRV, {"topic": "New"}, topic_route_body([queue_data(queues=2)])
            )
            assert answer.code == ResponseCode.SUCCESS, answer.remark
            route = await ns.route("New")
            assert [(q["brokerName"], q["readQueueNums"], q["writeQueueNums"]) for q in route["queueDatas"]] == [
                ("broker-5", 2, 2)
            ]
            assert int_keys(route["brokerDatas"][0]["brokerAddrs"]) == {0: "127.0.0.1:10911"}

    run(scenario())


@pytest.mark.parametrize(
    "topic, entries, expected",
    [
        ("Fresh", [queue_data(broker="nobody")], "broker nobody is not registered"),
        ("Big", [queue_data(queues=10**6)], "readQueueNums 1000000 is not within 0..1024"),
        ("a/b", [queue_data()], "the topic name contains '/'"),
        ("P", [queue_data(perm=9)], "perm 9 is not within 0..7"),
        ("Empty", [], "queueDatas must be an array of 1..64 objects"),
        ("Half", [{"brokerName": "broker-5"}], "has no readQueueNums, writeQueueNums, perm"),
    ],
    ids=["unknown-broker", "queues-1e6", "topic-a/b", "perm-9", "no-queue-data", "fields-missing"],
)
def test_register_topic_in_namesrv_refuses_what_a_registration_may_not_hold(topic, entries, expected):
    async def scenario():
        async with Namesrv() as ns:
            assert (await ns.register("broker-5", "127.0.0.1:10911")).code == 0
            answer = await ns.call(REGISTER_TOPIC_IN_NAMESRV, {"topic": topic}, topic_route_body(entries))
            assert answer.code == ResponseCode.SYSTEM_ERROR and expected in answer.remark, answer.remark
            assert await ns.route(topic) is None

    run(scenario())


def test_register_topic_in_namesrv_from_another_remote_connection_is_refused():
    """A remote peer (not on the name server's machine) may not add routes to a broker it did not register."""

    async def scenario():
        async with Namesrv(loopback_route_writes=False) as ns:
            assert (await ns.register("broker-5", "127.0.0.1:10911")).code == 0
            other = RemotingClient()
            try:
                answer = await ns.call(
                    REGISTER_TOPIC_IN_NAMESRV, {"topic": "Hijack"}, topic_route_body([queue_data()]), client=other
                )
            finally:
                await other.close()
            assert answer.code == ResponseCode.SYSTEM_ERROR and "registered over another connection" in answer.remark
            assert await ns.route("Hijack") is None

    run(scenario())


def test_get_broker_member_group_lists_the_group_and_an_unknown_group_is_empty():
    async def scenario():
        async with Namesrv() as ns:
            assert (await ns.register("broker-5", "127.0.0.1:10911", cluster="C5")).code == 0
            assert (await ns.register("broker-5", "127.0.0.1:10921", cluster="C5", broker_id=1)).code == 0
            answer = await ns.call(GET_BROKER_MEMBER_GROUP, {"clusterName": "C5", "brokerName": "broker-5"})
            group = json.loads(answer.body)["brokerMemberGroup"]
            assert int_keys(group["brokerAddrs"]) == {0: "127.0.0.1:10911", 1: "127.0.0.1:10921"}
            assert (group["brokerName"], group["cluster"]) == ("broker-5", "C5")
            none = json.loads(
                (await ns.call(GET_BROKER_MEMBER_GROUP, {"clusterName": "C5", "brokerName": "gone"})).body
            )
            assert none["brokerMemberGroup"]["brokerAddrs"] == {}

    run(scenario())


def test_broker_heartbeat_keeps_a_registration_alive_and_the_5x_heartbeat_timeout_is_not_honoured():
    async def scenario():
        async with Namesrv(broker_channel_expired_s=120.0, scan_not_active_broker_interval_s=3600) as ns:
            request = register_request("broker-5", "127.0.0.1:10911", TopicConfig("Beat", 1, 1))
            request.ext_fields.update({"enableActingMaster": "true", "heartbeatTimeoutMillis": "10000"})
            assert (await ns.client.invoke(ns.addr, request, 3.0)).code == 0
            ns.clock.advance(100.0)  # ten times the broker's heartbeatTimeoutMillis: still within Gantry's 120 s
            assert ns.controller.route_info.scan_not_active_broker(ns.clock.monotonic()) == []
            heartbeat = {"clusterName": "DefaultCluster", "brokerAddr": "127.0.0.1:10911", "brokerName": "broker-5"}
            assert (await ns.call(BROKER_HEARTBEAT, heartbeat)).code == ResponseCode.SUCCESS
            ns.clock.advance(100.0)  # 200 s after the registration, 100 s after the heartbeat
            assert ns.controller.route_info.scan_not_active_broker(ns.clock.monotonic()) == []
            assert await ns.route("Beat") is not None
            ns.clock.advance(30.0)
            assert [
                gone.broker_addr for gone in ns.controller.route_info.scan_not_active_broker(ns.clock.monotonic())
            ] == ["127.0.0.1:10911"]

    run(scenario())


def test_a_heartbeat_over_another_remote_connection_is_refused():
    async def scenario():
        async with Namesrv(loopback_route_writes=False) as ns:
            assert (await ns.register("broker-5", "127.0.0.1:10911")).code == 0
            other = RemotingClient()
            try:
                answer = await ns.call(
                    BROKER_HEARTBEAT,
                    {"clusterName": "DefaultCluster", "brokerAddr": "127.0.0.1:10911", "brokerName": "broker-5"},
                    client=other,
                )
            finally:
                await other.close()
            assert answer.code == ResponseCode.SYSTEM_ERROR and "registered over another connection" in answer.remark

    run(scenario())
