"""Admin and query requests: QUERY_MESSAGE, VIEW_MESSAGE_BY_ID, stats, runtime info, groups."""

from __future__ import annotations

import asyncio
import json

from brokers.engine.common import json_compat
from brokers.engine.common.message_codec import decode_records
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.remoting.codes import RequestCode, ResponseCode


def run(coro, timeout: float = 30.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


def test_query_message_by_key_and_view_by_offset(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("K", read=1, write=1)
            await c.send("K", b"first", keys="order-7 customer-1")
            await c.send("K", b"second", keys="order-8")
            ext = {"topic": "K", "key": "order-7", "maxNum": 32, "beginTimestamp": 0, "endTimestamp": 2**62}
            response = await c.call(RequestCode.QUERY_MESSAGE, ext)
            assert response.code == 0, response
            [msg] = decode_records(response.body)
            assert msg.body == b"first"
            assert int(response.ext("indexLastUpdateTimestamp")) > 0
            assert "indexLastUpdatePhyoffset" in response.ext_fields
            missing = await c.call(RequestCode.QUERY_MESSAGE, dict(ext, key="order-9"))
            assert missing.code == ResponseCode.QUERY_NOT_FOUND and missing.remark
            bad = await c.call(RequestCode.QUERY_MESSAGE, dict(ext, topic="a b"))
            assert bad.code == ResponseCode.SYSTEM_ERROR and "illegal" in bad.remark

            view = await c.call(RequestCode.VIEW_MESSAGE_BY_ID, {"offset": msg.commit_log_offset})
            assert view.code == 0 and decode_records(view.body)[0].keys == "order-7 customer-1"
            nothing = await c.call(RequestCode.VIEW_MESSAGE_BY_ID, {"offset": 10**9})
            assert nothing.code == ResponseCode.SYSTEM_ERROR and str(10**9) in nothing.remark
            negative = await c.call(RequestCode.VIEW_MESSAGE_BY_ID, {"offset": -5})
            assert negative.code == ResponseCode.SYSTEM_ERROR

    run(scenario())


def test_topic_stats_and_consume_stats(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("ST", read=2, write=2)
            for i in range(3):
                await c.send("ST", b"x", queue_id=0)
            await c.send("ST", b"y", queue_id=1)
            response = await c.call(RequestCode.GET_TOPIC_STATS_INFO, {"topic": "ST"})
            assert response.code == 0
            assert b'{{"brokerName":"broker-a","queueId":0,"topic":"ST"}:' in response.body  # inline keys
            table = json_compat.loads(response.body)["offsetTable"]
            q0 = table[MessageQueue("ST", "broker-a", 0)]
            assert q0["maxOffset"] == 3 and q0["minOffset"] == 0 and q0["lastUpdateTimestamp"] > 0
            assert table[MessageQueue("ST", "broker-a", 1)]["maxOffset"] == 1
            unknown = await c.call(RequestCode.GET_TOPIC_STATS_INFO, {"topic": "none"})
            assert unknown.code == ResponseCode.TOPIC_NOT_EXIST and "none" in unknown.remark

            await c.call(
                RequestCode.UPDATE_CONSUMER_OFFSET,
                {"consumerGroup": "CG", "topic": "ST", "queueId": 0, "commitOffset": 2},
            )
            stats = await c.call(RequestCode.GET_CONSUME_STATS, {"consumerGroup": "CG"})
            assert stats.code == 0
            body = json_compat.loads(stats.body)
            assert body["consumeTps"] == 0.0
            q0 = body["offsetTable"][MessageQueue("ST", "broker-a", 0)]
            assert q0["brokerOffset"] == 3 and q0["consumerOffset"] == 2 and q0["lastTimestamp"] > 0
            q1 = body["offsetTable"][MessageQueue("ST", "broker-a", 1)]
            assert q1 == {"brokerOffset": 1, "consumerOffset": 0, "lastTimestamp": 0}
            one = await c.call(RequestCode.GET_CONSUME_STATS, {"consumerGroup": "CG", "topic": "ST"})
            assert json_compat.loads(one.body) == body
            missing = await c.call(RequestCode.GET_CONSUME_STATS, {"consumerGroup": "CG", "topic": "gone"})
            assert missing.code == ResponseCode.TOPIC_NOT_EXIST

    run(scenario())


def test_broker_runtime_info(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("R", read=1, write=1)
            await c.send("R", b"1")
            await c.send("R", b"2")
            await c.pull_messages("R")
            response = await c.call(RequestCode.GET_BROKER_RUNTIME_INFO)
            assert response.code == 0
            table = json.loads(response.body)["table"]
            assert table["msgPutTotalTodayNow"] == "2"
            assert table["msgGetTotalTodayNow"] == "2"
            assert table["brokerVersion"] == "409" and table["brokerVersionDesc"] == "V4_9_8"
            for key in (
                "putTps",
                "getTransferedTps",
                "commitLogDiskRatio",
                "bootTimestamp",
                "runtime",
                "msgPutTotalTodayMorning",
                "msgGetTotalYesterdayMorning",
                "commitLogMaxOffset",
                "earliestMessageTimeStamp",
                "pullThreadPoolQueueSize",
            ):
                assert key in table, key
            assert len(table["putTps"].split()) == 3
            assert 0.0 <= float(table["commitLogDiskRatio"]) <= 1.0
            config = await c.call(RequestCode.GET_BROKER_CONFIG)
            assert b"brokerName=broker-a" in config.body and config.ext("version")

    run(scenario())


def test_subscription_groups(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            body = json.dumps(
                {"groupName": "SG", "consumeEnable": False, "retryQueueNums": 2, "retryMaxTimes": 5}
            ).encode()
            assert (await c.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, None, body)).code == 0
            listing = json_compat.loads((await c.call(RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG)).body)
            sg = listing["subscriptionGroupTable"]["SG"]
            assert (
                sg["consumeEnable"] is False
                and sg["retryQueueNums"] == 2
                and sg["notifyConsumerIdsChangedEnable"] is True
            )
            await c.create_topic("SGT", read=1, write=1)
            refused = await c.pull("SGT", group="SG")
            assert refused.code == ResponseCode.NO_PERMISSION and "SG" in refused.remark
            for bad, fragment in (
                (b"", "empty"),
                (b"{", "illegal"),
                (b'{"groupName":"a b"}', "illegal"),
                (b'{"groupName":"ok","retryQueueNums":"many"}', "retryQueueNums"),
                (b'{"groupName":"ok","retryQueueNums":-1}', "retryQueueNums"),
            ):
                response = await c.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, None, bad)
                assert response.code == ResponseCode.SYSTEM_ERROR and fragment in response.remark, (bad, response)
            assert "ok" not in c.broker.subscription_group_manager.subscription_group_table
            await c.restart_broker()
            assert c.broker.subscription_group_manager.subscription_group_table["SG"].retry_max_times == 5
            await c.call(
                RequestCode.UPDATE_CONSUMER_OFFSET,
                {"consumerGroup": "SG", "topic": "SGT", "queueId": 0, "commitOffset": 1},
            )
            deleted = await c.call(RequestCode.DELETE_SUBSCRIPTIONGROUP, {"groupName": "SG", "removeOffset": True})
            assert deleted.code == 0
            assert "SG" not in c.broker.subscription_group_manager.subscription_group_table
            assert c.broker.consumer_offset_manager.query_offset("SG", "SGT", 0) == -1
            # RocketMQ 5's mqadmin names the flag cleanOffset (4.x: removeOffset); without it offsets stay.
            for group, ext, kept in (("SG5", {"cleanOffset": "true"}, -1), ("SGK", {}, 1)):
                await c.call(
                    RequestCode.UPDATE_CONSUMER_OFFSET,
                    {"consumerGroup": group, "topic": "SGT", "queueId": 0, "commitOffset": 1},
                )
                deleted = await c.call(RequestCode.DELETE_SUBSCRIPTIONGROUP, {"groupName": group, **ext})
                assert deleted.code == 0, deleted
                assert c.broker.consumer_offset_manager.query_offset(group, "SGT", 0) == kept, group
            missing = await c.call(RequestCode.DELETE_SUBSCRIPTIONGROUP, {"cleanOffset": "true"})
            assert (missing.code, missing.remark) == (
                ResponseCode.SYSTEM_ERROR,
                "the custom field <groupName> is missing",
            )

    run(scenario())


def test_consumer_running_info_forwarded(engine_cluster):
    async def scenario():
        from brokers.engine.remoting.client import RemotingClient

        async with engine_cluster() as c:
            client = RemotingClient()

            async def answer(ctx, request):
                return request.response(
                    0, None, None, json.dumps({"properties": {"group": request.ext("consumerGroup")}}).encode()
                )

            client.register_processor(RequestCode.GET_CONSUMER_RUNNING_INFO, answer)
            await c.heartbeat(client, "cid-1", "RG", {"T": "*"})
            response = await c.call(RequestCode.GET_CONSUMER_RUNNING_INFO, {"consumerGroup": "RG", "clientId": "cid-1"})
            assert response.code == 0, response
            assert json.loads(response.body)["properties"]["group"] == "RG"
            offline = await c.call(RequestCode.GET_CONSUMER_RUNNING_INFO, {"consumerGroup": "RG", "clientId": "cid-2"})
            assert offline.code == ResponseCode.SYSTEM_ERROR and "cid-2" in offline.remark
            await client.close()

    run(scenario())


def test_get_topic_config_answers_one_topics_config_or_topic_not_exist(engine_cluster):
    """GET_TOPIC_CONFIG (351), RocketMQ 5.x's mqadmin topicStatus and consumerProgress ask it of each broker first."""

    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("One", read=3, write=2, perm=4)
            answer = await c.call(RequestCode.GET_TOPIC_CONFIG, {"topic": "One", "lo": "true"})
            assert answer.code == ResponseCode.SUCCESS
            body = json.loads(answer.body)
            assert (
                body["topicName"],
                body["readQueueNums"],
                body["writeQueueNums"],
                body["perm"],
                body["attributes"],
            ) == ("One", 3, 2, 4, {})
            missing = await c.call(RequestCode.GET_TOPIC_CONFIG, {"topic": "Nope"})
            assert missing.code == ResponseCode.TOPIC_NOT_EXIST and "Nope" in missing.remark

    run(scenario())


def test_get_subscription_group_config_answers_one_groups_config_or_group_not_exist(engine_cluster):
    """GET_SUBSCRIPTIONGROUP_CONFIG (352, RocketMQ 5.x): the cluster-mode proxy reads a group's fifo and retries."""

    async def scenario():
        async with engine_cluster() as c:
            body = json.dumps({"groupName": "FG", "consumeMessageOrderly": True, "retryMaxTimes": 3}).encode()
            assert (await c.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, None, body)).code == 0
            answer = await c.call(RequestCode.GET_SUBSCRIPTIONGROUP_CONFIG, {"group": "FG"})
            assert answer.code == ResponseCode.SUCCESS
            config = json.loads(answer.body)
            assert (config["groupName"], config["consumeMessageOrderly"], config["retryMaxTimes"]) == ("FG", True, 3)
            missing = await c.call(RequestCode.GET_SUBSCRIPTIONGROUP_CONFIG, {"group": "Nope"})
            assert missing.code == ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST
            bad = await c.call(RequestCode.GET_SUBSCRIPTIONGROUP_CONFIG, {})
            assert bad.code == ResponseCode.SYSTEM_ERROR and "group" in bad.remark

    run(scenario())
