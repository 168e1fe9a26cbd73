"""Heartbeats, consumer membership and its notifications, expiry, locks, sendback."""

from __future__ import annotations

import asyncio
import json

from brokers.engine.common import json_compat
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode


def run(coro, timeout: float = 30.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


class Member:
    """A client connection of its own that records what the broker sends it."""

    def __init__(self, client_id: str) -> None:
        self.client_id = client_id
        self.received = []
        self.client = RemotingClient()
        self.client.register_processor(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, self._on_request)

    async def _on_request(self, ctx, request):
        self.received.append(request)
        return None

    def notified(self, group: str) -> int:
        return sum(1 for r in self.received if r.ext("consumerGroup") == group)


async def consumer_ids(c, group: str):
    response = await c.call(RequestCode.GET_CONSUMER_LIST_BY_GROUP, {"consumerGroup": group})
    if response.code != 0:
        return response
    return sorted(json_compat.loads(response.body)["consumerIdList"])


def test_membership_and_notifications(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("T")
            none = await consumer_ids(c, "G")
            assert none.code == ResponseCode.SYSTEM_ERROR and "no consumer for this group, G" in none.remark

            a, b = Member("10.0.0.1@a"), Member("10.0.0.2@b")
            assert (await c.heartbeat(a.client, a.client_id, "G", {"T": "*"})).code == 0
            assert await consumer_ids(c, "G") == ["10.0.0.1@a"]
            assert "%RETRY%G" in await c.topics()  # retry topic made on the first heartbeat
            await c.eventually(lambda: a.notified("G") == 1)  # the join, announced to the group

            await c.heartbeat(a.client, a.client_id, "G", {"T": "*"})  # a refresh changes nothing
            await c.heartbeat(b.client, b.client_id, "G", {"T": "*"})
            assert await consumer_ids(c, "G") == ["10.0.0.1@a", "10.0.0.2@b"]
            await c.eventually(lambda: a.notified("G") == 2 and b.notified("G") == 1)

            # b leaves politely: a is told.
            response = await c.call(
                RequestCode.UNREGISTER_CLIENT, {"clientID": b.client_id, "consumerGroup": "G"}, client=b.client
            )
            assert response.code == 0
            assert await consumer_ids(c, "G") == ["10.0.0.1@a"]
            await c.eventually(lambda: a.notified("G") == 3)
            assert b.notified("G") == 1

            # b joins again and then its connection drops: a is told both times.
            await c.heartbeat(b.client, b.client_id, "G", {"T": "*"})
            await c.eventually(lambda: a.notified("G") == 4)
            await b.client.close()
            await c.eventually(lambda: a.notified("G") == 5)
            assert await consumer_ids(c, "G") == ["10.0.0.1@a"]

            connections = await c.call(RequestCode.GET_CONSUMER_CONNECTION_LIST, {"consumerGroup": "G"})
            body = json.loads(connections.body)
            assert [x["clientId"] for x in body["connectionSet"]] == ["10.0.0.1@a"]
            assert body["subscriptionTable"]["T"]["subString"] == "*"
            assert body["messageModel"] == "CLUSTERING"
            offline = await c.call(RequestCode.GET_CONSUMER_CONNECTION_LIST, {"consumerGroup": "other"})
            assert offline.code == ResponseCode.CONSUMER_NOT_ONLINE and "other" in offline.remark
            await a.client.close()
            await c.eventually(lambda: c.broker.client_manager.get_consumer_group_info("G") is None)

    run(scenario())


def test_producers_registry(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            p = Member("10.0.0.9@p")
            assert (await c.heartbeat(p.client, p.client_id, None, producer_groups=["PG"])).code == 0
            response = await c.call(RequestCode.GET_PRODUCER_CONNECTION_LIST, {"producerGroup": "PG"})
            assert response.code == 0
            assert json.loads(response.body)["connectionSet"][0]["clientId"] == "10.0.0.9@p"
            missing = await c.call(RequestCode.GET_PRODUCER_CONNECTION_LIST, {"producerGroup": "nope"})
            assert missing.code == ResponseCode.SYSTEM_ERROR and "nope" in missing.remark
            await c.call(
                RequestCode.UNREGISTER_CLIENT, {"clientID": p.client_id, "producerGroup": "PG"}, client=p.client
            )
            assert not c.broker.client_manager.producer_connections("PG")
            await p.client.close()

    run(scenario())


def test_bad_heartbeats_refused(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            for body, fragment in (
                (b"", "empty"),
                (b"{not json", "not JSON"),
                (b'{"consumerDataSet":[]}', "clientID"),
                (
                    json.dumps({"clientID": "x", "consumerDataSet": [{"groupName": "bad group"}]}).encode(),
                    "group name is illegal",
                ),
            ):
                response = await c.call(RequestCode.HEART_BEAT, None, body)
                assert response.code == ResponseCode.SYSTEM_ERROR and fragment in response.remark, (body, response)
            assert not c.broker.client_manager.consumer_table

    run(scenario())


def test_silent_client_expires_and_group_is_told(engine_cluster):
    async def scenario():
        async with engine_cluster(client_channel_expired_s=1.0, scan_client_interval_s=0.1) as c:
            a, b = Member("a"), Member("b")
            await c.heartbeat(a.client, "a", "E", {"T": "*"})
            await c.heartbeat(b.client, "b", "E", {"T": "*"})
            await c.eventually(lambda: a.notified("E") == 2)
            for _ in range(8):  # a keeps beating, b stays silent
                await asyncio.sleep(0.2)
                await c.heartbeat(a.client, "a", "E", {"T": "*"})
            assert await consumer_ids(c, "E") == ["a"]
            await c.eventually(lambda: a.notified("E") == 3)
            await c.eventually(lambda: not b.client.addresses)  # the broker closed b's connection
            await a.client.close()
            await b.client.close()

    run(scenario())


def test_pull_uses_heartbeat_subscription(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("H", read=1, write=1)
            await c.send("H", b"a", tags="A")
            await c.send("H", b"b", tags="B")
            m = Member("h")
            await c.heartbeat(m.client, "h", "HG", {"H": "B"})
            response = await c.pull("H", 0, 0, group="HG", sub=None, client=m.client)
            assert response.code == 0, response
            assert response.body.count(b"\xda\xa3\x20\xa7") == 1  # one record: tag B only
            stale = await c.pull("H", 0, 0, group="HG", sub=None, client=m.client, subVersion=99)
            assert stale.code == ResponseCode.SUBSCRIPTION_NOT_LATEST
            other = await c.pull("H", 0, 0, group="nobody", sub=None)
            assert other.code == ResponseCode.SUBSCRIPTION_NOT_EXIST
            await m.client.close()

    run(scenario())


def test_lock_and_unlock_batch(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            mqs = [MessageQueue("T", "broker-a", i).to_json() for i in range(3)]

            async def lock(client_id, queues):
                body = json.dumps({"consumerGroup": "OG", "clientId": client_id, "mqSet": queues}).encode()
                response = await c.call(RequestCode.LOCK_BATCH_MQ, None, body)
                assert response.code == 0, response
                return sorted(
                    MessageQueue.from_json(m).queue_id for m in json_compat.loads(response.body)["lockOKMQSet"]
                )

            assert await lock("c1", mqs[:2]) == [0, 1]
            assert await lock("c2", mqs) == [2]
            body = json.dumps({"consumerGroup": "OG", "clientId": "c2", "mqSet": mqs[:1]}).encode()
            assert (await c.call(RequestCode.UNLOCK_BATCH_MQ, None, body)).code == 0  # not c2's: ignored
            assert await lock("c2", mqs[:1]) == []
            body = json.dumps({"consumerGroup": "OG", "clientId": "c1", "mqSet": mqs[:1]}).encode()
            await c.call(RequestCode.UNLOCK_BATCH_MQ, None, body)
            assert await lock("c2", mqs[:1]) == [0]
            bad = await c.call(RequestCode.LOCK_BATCH_MQ, None, b"[]")
            assert bad.code == ResponseCode.SYSTEM_ERROR

    run(scenario())


def test_send_back_retry_with_delay_then_dlq(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("W", read=1, write=1)
            await c.send("W", b"work", tags="job", keys="order-1")
            [msg] = await c.pull_messages("W")
            ext = {
                "offset": msg.commit_log_offset,
                "group": "RG",
                "delayLevel": 1,
                "originMsgId": msg.msg_id,
                "originTopic": "W",
                "maxReconsumeTimes": 2,
            }
            response = await c.call(RequestCode.CONSUMER_SEND_MSG_BACK, ext)
            assert response.code == 0, response
            assert await c.max_offset("%RETRY%RG") == 0  # parked in SCHEDULE_TOPIC_XXXX for level 1 (1 s)
            await c.eventually(lambda: c.max_offset("%RETRY%RG"), timeout=6)
            [retry] = await c.pull_messages("%RETRY%RG")
            assert retry.body == b"work" and retry.reconsume_times == 1
            assert retry.properties["RETRY_TOPIC"] == "W"
            assert retry.properties["ORIGIN_MESSAGE_ID"] == msg.msg_id
            assert retry.tags == "job" and "DELAY" not in retry.properties
            assert "GANTRY_LAST_ERROR" not in retry.properties  # a RocketMQ client sends no lastError

            retry_back = dict(ext, offset=retry.commit_log_offset)
            why = (
                "ValueError: bad\x01row\x02" + "x" * 1000
            )  # Gantry's consumer says why; separators must not break the properties
            second = await c.call(RequestCode.CONSUMER_SEND_MSG_BACK, dict(retry_back, delayLevel=-1, lastError=why))
            assert second.code == 0
            [dead] = await c.pull_messages("%DLQ%RG")
            assert dead.body == b"work" and dead.reconsume_times == 2
            assert dead.properties["ORIGIN_MESSAGE_ID"] == msg.msg_id and dead.tags == "job"
            assert dead.properties["GANTRY_LAST_ERROR"] == ("ValueError: bad row " + "x" * 1000)[:512]

            lost = await c.call(RequestCode.CONSUMER_SEND_MSG_BACK, dict(ext, offset=10**9))
            assert lost.code == ResponseCode.SYSTEM_ERROR and "look message by offset failed" in lost.remark

    run(scenario())


def test_reset_offset_pushed_to_members(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("RS", read=1, write=1)
            for _ in range(3):
                await c.send("RS", b"x")
            m = Member("r1")
            m.client.register_processor(RequestCode.RESET_CONSUMER_CLIENT_OFFSET, m._on_request)
            ext = {"topic": "RS", "group": "RSG", "timestamp": -1, "isForce": True}
            no_offset = await c.call(RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, ext)
            assert no_offset.code == ResponseCode.SYSTEM_ERROR and "no committed offset" in no_offset.remark
            await c.call(
                RequestCode.UPDATE_CONSUMER_OFFSET,
                {"consumerGroup": "RSG", "topic": "RS", "queueId": 0, "commitOffset": 1},
            )
            offline = await c.call(RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, ext)
            assert offline.code == ResponseCode.CONSUMER_NOT_ONLINE
            await c.heartbeat(m.client, "r1", "RSG", {"RS": "*"})
            response = await c.call(RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, ext)
            assert response.code == 0, response
            assert json_compat.loads(response.body)["offsetTable"] == {MessageQueue("RS", "broker-a", 0): 3}
            push = await c.eventually(
                lambda: [r for r in m.received if r.code == RequestCode.RESET_CONSUMER_CLIENT_OFFSET]
            )
            assert push[0].ext("group") == "RSG" and push[0].is_oneway
            await m.client.close()

    run(scenario())
