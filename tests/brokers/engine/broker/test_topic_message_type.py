"""UPDATE_AND_CREATE_TOPIC's ``attributes`` header on a real broker: stored, persisted, answered by
GET_TOPIC_CONFIG and GET_ALL_TOPIC_CONFIG, refused with a remark naming the attribute."""

from __future__ import annotations

import json

from brokers.engine.common import json_compat
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.common.topic_message_type import topic_message_type
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from tests.brokers.engine.broker.conftest import run


async def topic_config(c, topic: str) -> dict:
    response = await c.call(RequestCode.GET_TOPIC_CONFIG, {"topic": topic})
    assert response.code == ResponseCode.SUCCESS, response
    return json_compat.loads(response.body)


def test_message_type_is_set_kept_changed_and_persisted(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            assert (await c.create_topic("plain")).code == ResponseCode.SUCCESS
            assert (await topic_config(c, "plain"))["attributes"] == {}
            assert topic_message_type(c.broker.topic_config_manager.select_topic_config("plain")) == "NORMAL"

            response = await c.create_topic("orders", attributes="+message.type=FIFO")
            assert response.code == ResponseCode.SUCCESS, response
            assert (await topic_config(c, "orders"))["attributes"] == {"message.type": "FIFO"}
            assert (await c.topics())["orders"]["attributes"] == {"message.type": "FIFO"}

            # an update without the header (mqadmin without -a, queue changes) keeps the attributes
            assert (await c.create_topic("orders", read=8, write=8)).code == ResponseCode.SUCCESS
            assert (await topic_config(c, "orders"))["attributes"] == {"message.type": "FIFO"}

            # message.type may change on an existing topic; queue.type may not
            assert (await c.create_topic("orders", attributes="+message.type=TRANSACTION")).code == ResponseCode.SUCCESS
            refused = await c.create_topic("orders", attributes="+queue.type=SimpleCQ")
            assert refused.code == ResponseCode.SYSTEM_ERROR and "queue.type" in refused.remark

            await c.restart_broker()
            assert (await topic_config(c, "orders"))["attributes"] == {"message.type": "TRANSACTION"}
            on_disk = json.loads((c.tmp_path / "broker-a" / "config" / "topics.json").read_text())
            assert on_disk["topicConfigTable"]["orders"]["attributes"] == {"message.type": "TRANSACTION"}
            assert topic_message_type(TopicConfig.from_json(on_disk["topicConfigTable"]["orders"])) == "TRANSACTION"

            assert (await c.create_topic("orders", attributes="-message.type")).code == ResponseCode.SUCCESS
            assert (await topic_config(c, "orders"))["attributes"] == {}

    run(scenario())


def test_bad_attributes_are_refused_naming_the_attribute_and_change_nothing(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            assert (await c.create_topic("orders", attributes="+message.type=DELAY")).code == ResponseCode.SUCCESS
            for text, named in [
                ("+message.type=SOMETIMES", "message.type"),
                ("+color=red", "color"),
                ("message.type=FIFO", "message.type"),
                ("+reserve.time=60", "reserve.time"),
                ("-cleanup.policy", "cleanup.policy"),
            ]:
                response = await c.create_topic("orders", read=2, write=2, attributes=text)
                assert response.code == ResponseCode.SYSTEM_ERROR, (text, response)
                assert named in response.remark, (text, response.remark)
            mixed = await c.create_topic("orders", attributes="+message.type=MIXED")
            assert mixed.code == ResponseCode.INVALID_PARAMETER and "message.type" in mixed.remark
            created = await c.create_topic("fresh", attributes="-message.type")
            assert created.code == ResponseCode.SYSTEM_ERROR and "message.type" in created.remark
            config = await topic_config(c, "orders")
            assert (config["readQueueNums"], config["attributes"]) == (4, {"message.type": "DELAY"})
            assert "fresh" not in await c.topics()

    run(scenario())


def test_mixed_with_enable_mixed_message_type(engine_cluster):
    async def scenario():
        async with engine_cluster(enable_mixed_message_type=True) as c:
            assert (await c.create_topic("any", attributes="+message.type=MIXED")).code == ResponseCode.SUCCESS
            assert topic_message_type(c.broker.topic_config_manager.select_topic_config("any")) == "MIXED"

    run(scenario())


def test_the_message_type_reaches_the_slave_with_the_config(engine_cluster):
    from tests.brokers.engine.broker.test_broker_group import SLAVE_KEY, start_slave, wait_connected

    async def scenario():
        async with engine_cluster(broker_role="SYNC_MASTER") as c:
            slave = await start_slave(c)
            await wait_connected(c)
            master = c.brokers["broker-a"]
            await c.eventually(lambda: c.brokers[SLAVE_KEY].addr in master.config_push.slaves, timeout=10)
            assert (await c.create_topic("Replicated", attributes="+message.type=FIFO")).code == ResponseCode.SUCCESS
            assert topic_message_type(slave.topic_config_manager.select_topic_config("Replicated")) == "FIFO"
            assert (await c.create_topic("Replicated", attributes="+message.type=DELAY")).code == ResponseCode.SUCCESS
            assert topic_message_type(slave.topic_config_manager.select_topic_config("Replicated")) == "DELAY"

    run(scenario())
