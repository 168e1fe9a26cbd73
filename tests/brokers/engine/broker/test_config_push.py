"""A master's topic and group changes reach its slaves before the admin request answers (config_push.py),
and a slave serves a topic whose config never arrived from the queues it holds (slave_synchronize.py)."""

from __future__ import annotations

import json

from brokers.engine.broker.config_push import push_body
from brokers.engine.broker.data_version import DataVersion
from brokers.engine.common.message_codec import decode_records
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand

from .conftest import run
from .test_broker_group import SLAVE_KEY, produce, pull_from, start_slave, wait_caught_up, wait_connected


async def _subscribed(c) -> None:
    master = c.brokers["broker-a"]
    await c.eventually(lambda: c.brokers[SLAVE_KEY].addr in master.config_push.slaves, timeout=10)


def _group_body(group: str, **settings) -> bytes:
    return json.dumps(
        {
            "groupName": group,
            "consumeEnable": True,
            "consumeBroadcastEnable": True,
            "retryQueueNums": 1,
            "retryMaxTimes": 16,
            "brokerId": 0,
            "whichBrokerWhenConsumeSlowly": 1,
            **settings,
        }
    ).encode()


def test_topic_and_group_changes_are_on_the_slave_when_the_admin_call_answers(engine_cluster):
    async def scenario():
        async with engine_cluster(broker_role="SYNC_MASTER") as c:
            slave = await start_slave(c)
            await wait_connected(c)
            await _subscribed(c)
            master = c.brokers["broker-a"]

            assert (await c.create_topic("Pushed", read=3, write=3)).code == ResponseCode.SUCCESS
            on_slave = slave.topic_config_manager.select_topic_config("Pushed")  # no waiting: it is there already
            assert on_slave is not None and on_slave.read_queue_nums == 3
            assert slave.topic_config_manager.data_version == master.topic_config_manager.data_version
            assert (
                "Pushed" in json.loads(slave.topic_config_manager.path.read_text())["topicConfigTable"]
            )  # on its disk

            reply = await c.call(
                RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, body=_group_body("pushed_group", retryMaxTimes=3)
            )
            assert reply.code == ResponseCode.SUCCESS, reply
            group = slave.subscription_group_manager.subscription_group_table.get("pushed_group")
            assert group is not None and group.retry_max_times == 3

            await produce(c, "Pushed", 6, queues=3)
            await wait_caught_up(c)
            assert slave.store.queue_counts().get("Pushed") == 3
            assert (await c.call(RequestCode.DELETE_TOPIC_IN_BROKER, {"topic": "Pushed"})).code == ResponseCode.SUCCESS
            assert slave.topic_config_manager.select_topic_config("Pushed") is None
            assert "Pushed" not in slave.store.queue_counts()  # its queues go too: nothing to derive it back from
            assert slave.subscription_group_manager.subscription_group_table.get("pushed_group") is not None
            reply = await c.call(RequestCode.DELETE_SUBSCRIPTIONGROUP, {"groupName": "pushed_group"})
            assert (
                reply.code == ResponseCode.SUCCESS
                and "pushed_group" not in slave.subscription_group_manager.subscription_group_table
            )

    run(scenario())


def test_a_subscribed_slave_that_does_not_confirm_is_named_in_the_answer(engine_cluster):
    async def scenario():
        async with engine_cluster(broker_role="SYNC_MASTER") as c:
            silent = RemotingClient(name="silent-slave")  # subscribes, then cannot take a push
            try:
                request = RemotingCommand.request(RequestCode.GANTRY_SUBSCRIBE_CONFIG, {"slaveAddr": "127.0.0.1:1"})
                assert (await silent.invoke(c.addr("broker-a"), request)).code == ResponseCode.SUCCESS
                reply = await c.create_topic("NotConfirmed")
                assert reply.code == ResponseCode.SLAVE_NOT_AVAILABLE, reply
                assert (
                    "topic NotConfirmed created on the master" in reply.remark and "slave 127.0.0.1:1" in reply.remark
                )
                assert c.brokers["broker-a"].topic_config_manager.select_topic_config("NotConfirmed") is not None
            finally:
                await silent.close()
            # the connection is gone: nothing left to wait for
            await c.eventually(lambda: not c.brokers["broker-a"].config_push.slaves)
            assert (await c.create_topic("Confirmed")).code == ResponseCode.SUCCESS

    run(scenario())


def test_a_slave_takes_pushes_only_from_its_master_and_a_slave_takes_no_subscription(engine_cluster):
    async def scenario():
        async with engine_cluster(broker_role="SYNC_MASTER") as c:
            slave = await start_slave(c)
            await wait_connected(c)
            await _subscribed(c)
            body = push_body(
                "topics",
                slave.topic_config_manager.data_version.copy(),
                DataVersion(1, 999),
                {"Forged": {"topicName": "Forged", "readQueueNums": 1, "writeQueueNums": 1, "perm": 6}},
                [],
            )
            stranger = RemotingClient(name="stranger")
            try:
                # a server-to-client request sent to the slave's own port is no push: it is not served there
                reply = await stranger.invoke(
                    c.addr(SLAVE_KEY), RemotingCommand.request(RequestCode.GANTRY_PUSH_CONFIG, None, body)
                )
                assert reply.code != ResponseCode.SUCCESS
                reply = await stranger.invoke(
                    c.addr(SLAVE_KEY),
                    RemotingCommand.request(RequestCode.GANTRY_SUBSCRIBE_CONFIG, {"slaveAddr": "127.0.0.1:2"}),
                )
                assert reply.code == ResponseCode.SYSTEM_ERROR and "is a slave" in reply.remark
            finally:
                await stranger.close()
            assert slave.topic_config_manager.select_topic_config("Forged") is None

    run(scenario())


def test_a_slave_serves_a_topic_whose_config_never_arrived_from_its_queues(engine_cluster):
    async def scenario():
        async with engine_cluster(broker_role="SYNC_MASTER") as c:
            assert (await c.create_topic("Orphan", read=2, write=2)).code == 0
            slave = await start_slave(c)
            await wait_connected(c)
            await produce(c, "Orphan", 10, queues=2)
            await wait_caught_up(c)
            await c.eventually(lambda: slave.topic_config_manager.select_topic_config("Orphan") is not None, timeout=15)
            await c.brokers.pop("broker-a").stop()
            del slave.topic_config_manager.topic_config_table["Orphan"]  # as if its master had died before the copy
            reply = await pull_from(c, SLAVE_KEY, "Orphan", 1)
            assert reply.code == ResponseCode.TOPIC_NOT_EXIST
            await c.eventually(lambda: slave.topic_config_manager.select_topic_config("Orphan") is not None, timeout=5)
            derived = slave.topic_config_manager.select_topic_config("Orphan")
            assert (derived.read_queue_nums, derived.write_queue_nums, derived.perm) == (2, 2, 6)
            records = decode_records((await pull_from(c, SLAVE_KEY, "Orphan", 1)).body)
            assert sorted(m.body for m in records) == sorted(f"m{i}".encode() * (1 + i % 7) for i in range(1, 10, 2))

    run(scenario())
