"""Every group at once: GET_BROKER_CONSUME_STATS (RocketMQ's brokerConsumeStats) and the Gantry
extension GANTRY_GET_ALL_CONSUMER_CONNECTIONS, on a real broker over real frames."""

from __future__ import annotations

import asyncio
import json

from brokers.engine.client.admin_group_bodies import parse_connections_by_group, parse_consume_stats_list
from brokers.engine.common import json_compat
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode


def run(coro, timeout: float = 30.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


async def _group(c, name: str) -> None:
    body = json.dumps({"groupName": name}).encode()
    assert (await c.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, None, body)).code == 0


async def _commit(c, group: str, topic: str, queue_id: int, offset: int) -> None:
    ext = {"consumerGroup": group, "topic": topic, "queueId": queue_id, "commitOffset": offset}
    assert (await c.call(RequestCode.UPDATE_CONSUMER_OFFSET, ext)).code == 0


def test_broker_consume_stats_lists_every_group_with_its_topics(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("T1", read=2, write=2)
            await c.create_topic("T2", read=1, write=1)
            for _ in range(3):
                await c.send("T1", b"x", queue_id=0)
            await c.send("T1", b"y", queue_id=1)
            for _ in range(2):
                await c.send("T2", b"z", queue_id=0)
            for name in ("GA", "GB", "Idle"):
                await _group(c, name)
            await _commit(c, "GA", "T1", 0, 2)
            await _commit(c, "GA", "T2", 0, 2)
            await _commit(c, "GB", "T1", 0, 3)
            await _commit(c, "GB", "T1", 1, 1)
            await _commit(c, "NoConfig", "T1", 0, 1)  # offsets without a subscription group: not listed

            response = await c.call(RequestCode.GET_BROKER_CONSUME_STATS, {"isOrder": False, "timeoutMillis": 3000})
            assert response.code == ResponseCode.SUCCESS, response
            assert b'{{"brokerName":"broker-a","queueId":0,"topic":"T1"}:{' in response.body  # fastjson inline keys
            body = json_compat.loads(response.body)
            assert body["brokerAddr"] == c.broker.addr
            listed = {}
            for entry in body["consumeStatsList"]:
                assert len(entry) == 1
                listed.update(entry)
            assert {"GA", "GB", "Idle", "TOOLS_CONSUMER"} <= set(listed) and "NoConfig" not in listed
            assert listed["Idle"] == [] and listed["TOOLS_CONSUMER"] == []

            ga_t1, ga_t2 = listed["GA"]  # one ConsumeStats per topic, in topic order
            assert ga_t1["consumeTps"] == 0.0
            q0 = ga_t1["offsetTable"][MessageQueue("T1", "broker-a", 0)]
            assert q0["brokerOffset"] == 3 and q0["consumerOffset"] == 2 and q0["lastTimestamp"] > 0
            assert ga_t1["offsetTable"][MessageQueue("T1", "broker-a", 1)] == {
                "brokerOffset": 1,
                "consumerOffset": 0,
                "lastTimestamp": 0,
            }
            assert set(ga_t2["offsetTable"]) == {MessageQueue("T2", "broker-a", 0)}
            t2 = ga_t2["offsetTable"][MessageQueue("T2", "broker-a", 0)]
            assert t2["brokerOffset"] == 2 and t2["consumerOffset"] == 2 and t2["lastTimestamp"] > 0
            [gb_t1] = listed["GB"]
            assert {
                mq.queue_id: (w["brokerOffset"], w["consumerOffset"]) for mq, w in gb_t1["offsetTable"].items()
            } == {0: (3, 3), 1: (1, 1)}
            assert body["totalDiff"] == (3 - 2) + (1 - 0) + (2 - 2)

            # the body is what the console's parser reads
            survey = parse_consume_stats_list(c.broker.addr, response.body)
            assert survey.lag["GA"] == 2 and survey.lag["GB"] == 0 and survey.lag["Idle"] == 0
            assert survey.offsets[("T2", "GA")] == {0: 2} and survey.offsets[("T1", "GB")] == {0: 3, 1: 1}

            ordered = json_compat.loads((await c.call(RequestCode.GET_BROKER_CONSUME_STATS, {"isOrder": True})).body)
            assert ordered["totalDiff"] == 0 and all(v == [] for e in ordered["consumeStatsList"] for v in e.values())

            # an online group's topics it no longer subscribes are left out, as GET_CONSUME_STATS does
            client = RemotingClient()
            await c.heartbeat(client, "cid-1", "GA", {"T2": "*"})
            body = json_compat.loads((await c.call(RequestCode.GET_BROKER_CONSUME_STATS, {"isOrder": False})).body)
            [ga] = [e["GA"] for e in body["consumeStatsList"] if "GA" in e]
            assert [sorted({mq.topic for mq in s["offsetTable"]}) for s in ga] == [["T2"]]
            assert body["totalDiff"] == 0
            await client.close()

    run(scenario())


def test_all_consumer_connections_extension(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            empty = await c.call(RequestCode.GANTRY_GET_ALL_CONSUMER_CONNECTIONS)
            assert empty.code == ResponseCode.SUCCESS and json_compat.loads(empty.body) == {
                "brokerAddr": c.broker.addr,
                "groups": [],
            }
            one, two, three = RemotingClient(), RemotingClient(), RemotingClient()
            await c.heartbeat(one, "cid-1", "RG", {"T": "*"})
            await c.heartbeat(two, "cid-2", "RG", {"T": "*"})
            await c.heartbeat(three, "cid-3", "BG", {"T": "a || b"}, model="BROADCASTING")
            response = await c.call(RequestCode.GANTRY_GET_ALL_CONSUMER_CONNECTIONS)
            assert response.code == ResponseCode.SUCCESS, response
            body = json_compat.loads(response.body)
            assert [g["group"] for g in body["groups"]] == ["BG", "RG"]
            bg, rg = body["groups"]
            assert bg["messageModel"] == "BROADCASTING" and rg["messageModel"] == "CLUSTERING"
            assert rg["consumeType"] == "CONSUME_PASSIVELY" and rg["consumeFromWhere"] == "CONSUME_FROM_LAST_OFFSET"
            assert sorted(conn["clientId"] for conn in rg["connectionSet"]) == ["cid-1", "cid-2"]
            assert set(rg["connectionSet"][0]) == {"clientAddr", "clientId", "language", "version"}
            assert bg["subscriptionTable"]["T"]["subString"] == "a || b"
            # each group's entry is the GET_CONSUMER_CONNECTION_LIST body of that group, plus its name
            single = json_compat.loads(
                (await c.call(RequestCode.GET_CONSUMER_CONNECTION_LIST, {"consumerGroup": "RG"})).body
            )
            assert {k: v for k, v in rg.items() if k != "group"} == single
            # the console reads it per group
            parsed = parse_connections_by_group(response.body)
            assert set(parsed) == {"BG", "RG"} and len(parsed["RG"]["connectionSet"]) == 2

            await three.close()  # a group whose last member left is not listed

            async def only_rg() -> bool:
                answer = await c.call(RequestCode.GANTRY_GET_ALL_CONSUMER_CONNECTIONS)
                return [g["group"] for g in json_compat.loads(answer.body)["groups"]] == ["RG"]

            await c.eventually(only_rg)
            await one.close()
            await two.close()

    run(scenario())
