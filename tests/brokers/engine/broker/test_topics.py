"""Topic administration over real frames: create/update/delete, persistence, registration, bad input."""

from __future__ import annotations

import asyncio

import pytest

from brokers.engine.common.constants import SCHEDULE_TOPIC
from brokers.engine.remoting.codes import RequestCode, ResponseCode


def run(coro, timeout: float = 30.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


def test_system_topics_created_at_start_without_auto_create(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            topics = await c.topics()
            assert topics["SELF_TEST_TOPIC"]["perm"] == 6
            assert topics["DefaultCluster"]["readQueueNums"] == 16 and topics["DefaultCluster"]["perm"] == 7
            assert topics["broker-a"]["writeQueueNums"] == 1
            assert topics["OFFSET_MOVED_EVENT"]["readQueueNums"] == 1
            assert topics[SCHEDULE_TOPIC]["readQueueNums"] == 18
            assert "RMQ_SYS_TRANS_HALF_TOPIC" in topics
            assert "TBW102" not in topics  # auto-create is off
            route = await c.route("SELF_TEST_TOPIC")
            assert route["brokerDatas"][0]["brokerAddrs"] in ({0: c.addr()}, {"0": c.addr()})

    run(scenario())


def test_create_update_delete_topic_persist_and_register(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            response = await c.create_topic("orders", read=4, write=4, perm=4)
            assert response.code == ResponseCode.SUCCESS, response
            route = await c.route("orders")  # registered before the reply
            assert route["queueDatas"][0]["writeQueueNums"] == 4
            assert (await c.topics())["orders"] == {
                "order": False,
                "perm": 4,
                "readQueueNums": 4,
                "topicFilterType": "SINGLE_TAG",
                "topicName": "orders",
                "topicSysFlag": 0,
                "writeQueueNums": 4,
                "attributes": {},
            }
            assert (await c.send("orders", b"x")).code == ResponseCode.NO_PERMISSION  # read-only
            assert (await c.create_topic("orders", read=8, write=6, perm=6)).code == 0
            route = await c.route("orders")
            assert route["queueDatas"][0]["writeQueueNums"] == 6 and route["queueDatas"][0]["perm"] == 6

            await c.restart_broker()
            assert (await c.topics())["orders"]["readQueueNums"] == 8
            topics_file = c.broker.topic_config_manager.path
            text = topics_file.read_text()
            assert '"topicConfigTable"' in text and '"dataVersion"' in text and "\t" in text

            assert (await c.send("orders", b"x", queue_id=1)).code == 0
            queue_dir = c.tmp_path / "broker-a" / "consumequeue" / "orders"
            assert queue_dir.exists()
            await c.call(
                RequestCode.UPDATE_CONSUMER_OFFSET,
                {"consumerGroup": "g", "topic": "orders", "queueId": 1, "commitOffset": 1},
            )
            response = await c.call(RequestCode.DELETE_TOPIC_IN_BROKER, {"topic": "orders"})
            assert response.code == 0, response
            assert "orders" not in await c.topics()
            assert not queue_dir.exists()
            assert c.broker.consumer_offset_manager.query_offset("g", "orders", 1) == -1
            await c.restart_broker()
            assert "orders" not in await c.topics()

    run(scenario())


@pytest.mark.parametrize(
    "topic, fragment",
    [
        ("", "missing"),
        ("t" * 128, "longer than 127"),
        ("bad/topic", "characters"),
        ("../../etc", "characters"),
        ("SCHEDULE_TOPIC_XXXX", "system topic"),
        ("TBW102", "system topic"),
        ("DefaultCluster", "system topic"),
    ],
)
def test_create_topic_illegal_names_store_nothing(engine_cluster, topic, fragment):
    async def scenario():
        async with engine_cluster() as c:
            before = await c.topics()
            version = c.broker.topic_config_manager.data_version.counter
            response = await c.create_topic(topic)
            assert response.code == ResponseCode.SYSTEM_ERROR
            assert fragment in response.remark
            assert await c.topics() == before
            assert c.broker.topic_config_manager.data_version.counter == version
            assert not (c.tmp_path / "etc").exists()
            assert (await c.create_topic("fine")).code == 0  # still serving

    run(scenario())


@pytest.mark.parametrize(
    "field, value, fragment",
    [
        ("readQueueNums", -1, "readQueueNums -1 is out of range, it must be within 0..1024"),
        ("writeQueueNums", 1025, "writeQueueNums 1025 is out of range"),
        ("writeQueueNums", -5, "out of range"),
        ("perm", 8, "perm 8 is out of range"),
        ("perm", -1, "perm -1 is out of range"),
        ("perm", "rw", "not an integer"),
        ("topicFilterType", "SQL", "topicFilterType"),
    ],
)
def test_create_topic_bad_numbers_store_nothing(engine_cluster, field, value, fragment):
    async def scenario():
        async with engine_cluster() as c:
            response = await c.create_topic("numbers", **{field: value})
            assert response.code == ResponseCode.SYSTEM_ERROR
            assert fragment in response.remark, response.remark
            assert "numbers" not in await c.topics()
            assert await c.route("numbers") is None

    run(scenario())


def test_delete_system_topic_refused(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            response = await c.call(RequestCode.DELETE_TOPIC_IN_BROKER, {"topic": "SELF_TEST_TOPIC"})
            assert response.code == ResponseCode.SYSTEM_ERROR and "system topic" in response.remark
            assert "SELF_TEST_TOPIC" in await c.topics()
            response = await c.call(RequestCode.DELETE_TOPIC_IN_BROKER, {"topic": "a/b"})
            assert response.code == ResponseCode.SYSTEM_ERROR and "characters" in response.remark

    run(scenario())


def test_unknown_request_code_answered(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            response = await c.call(9999)
            assert response.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED
            assert "9999" in response.remark

    run(scenario())
