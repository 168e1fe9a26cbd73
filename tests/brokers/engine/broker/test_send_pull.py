"""Sending (V1, V2, batch) and pulling back over real frames; tag filtering; auto-create; bad sends."""

from __future__ import annotations

import asyncio

import pytest

from brokers.engine.common.message import Message
from brokers.engine.common.message_codec import decode_records, encode_batch_body
from brokers.engine.remoting.codes import RequestCode, ResponseCode


def run(coro, timeout: float = 30.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


def test_send_v1_v2_batch_and_pull_back(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            assert (await c.create_topic("T", read=2, write=2)).code == 0
            v1 = await c.send(
                "T",
                b"one",
                tags="TagA",
                keys="k1 k2",
                props={"color": "red", "WAIT": "true"},
                code=RequestCode.SEND_MESSAGE,
            )
            assert v1.code == ResponseCode.SUCCESS, v1
            assert v1.ext("queueId") == "0" and v1.ext("queueOffset") == "0"
            assert v1.ext("MSG_REGION") == "DefaultRegion" and v1.ext("TRACE_ON") == "true"
            assert len(v1.ext("msgId")) == 32
            v2 = await c.send("T", b"two", tags="TagB", keys="k3")
            assert v2.code == 0 and v2.ext("queueOffset") == "1"
            batch_body = encode_batch_body(
                [Message("T", b"b1", tags="TagA", keys="bk1"), Message("T", b"b2", tags="TagC")]
            )
            batch = await c.send("T", batch_body, code=RequestCode.SEND_BATCH_MESSAGE, extra={"m": True})
            assert batch.code == 0, batch
            assert batch.ext("queueOffset") == "2" and len(batch.ext("msgId").split(",")) == 2

            msgs = await c.pull_messages("T", 0, 0)
            assert [m.body for m in msgs] == [b"one", b"two", b"b1", b"b2"]
            assert [m.queue_offset for m in msgs] == [0, 1, 2, 3]
            first = msgs[0]
            assert first.tags == "TagA" and first.keys == "k1 k2"
            assert first.properties["color"] == "red"
            assert first.properties["CLUSTER"] == "DefaultCluster"
            assert "WAIT" not in first.properties
            assert first.msg_id == v1.ext("msgId")
            assert first.store_host == c.addr()
            assert first.born_host.startswith("127.0.0.1:")
            assert msgs[2].keys == "bk1" and msgs[3].tags == "TagC"
            assert msgs[2].properties["CLUSTER"] == "DefaultCluster"
            # as RocketMQ 5's broker stamps them: a 5.x consumer's trace leaves out messages without a region
            assert all(
                (m.properties["MSG_REGION"], m.properties["TRACE_ON"]) == ("DefaultRegion", "true") for m in msgs
            )

            response = await c.pull("T", 0, 4)
            assert response.code == ResponseCode.PULL_NOT_FOUND
            assert response.ext("nextBeginOffset") == "4"
            assert {"minOffset", "maxOffset", "suggestWhichBrokerId"} <= set(response.ext_fields)

    run(scenario())


def test_a_batch_with_an_id_of_its_own_keeps_each_message_id(engine_cluster):
    """RocketMQ 5.x clients put a UNIQ_KEY on the batch as well as on each message: every message keeps its own."""

    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("U", read=1, write=1)
            inner = [Message("U", f"u{i}".encode(), properties={"UNIQ_KEY": f"INNER{i}"}) for i in range(3)]
            batch = await c.send(
                "U",
                encode_batch_body(inner),
                code=RequestCode.SEND_BATCH_MESSAGE,
                props={"UNIQ_KEY": "THEBATCH", "WAIT": "true"},
                extra={"m": True},
            )
            assert batch.code == 0, batch
            msgs = await c.pull_messages("U", 0, 0)
            assert [m.uniq_key for m in msgs] == ["INNER0", "INNER1", "INNER2"]
            assert all(m.properties["CLUSTER"] == "DefaultCluster" and "WAIT" not in m.properties for m in msgs)

    run(scenario())


def test_tag_filtering(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("F", read=1, write=1)
            for tag in ("TagA", "TagB", "TagC", "TagA", None):
                assert (await c.send("F", f"{tag}".encode(), tags=tag)).code == 0
            assert [m.body for m in await c.pull_messages("F", sub="TagA")] == [b"TagA", b"TagA"]
            assert [m.tags for m in await c.pull_messages("F", sub="TagA || TagB")] == ["TagA", "TagB", "TagA"]
            assert len(await c.pull_messages("F", sub="*")) == 5
            response = await c.pull("F", sub="TagZ")
            assert response.code == ResponseCode.PULL_RETRY_IMMEDIATELY
            assert response.ext("nextBeginOffset") == "5"

    run(scenario())


def test_pull_statuses_carry_all_offsets(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("P", read=2, write=2)
            empty = await c.pull("P", 0, 0)
            assert empty.code == ResponseCode.PULL_NOT_FOUND
            await c.send("P", b"x", queue_id=0)
            moved = await c.pull("P", 0, 5)
            assert moved.code == ResponseCode.PULL_OFFSET_MOVED
            assert moved.ext("nextBeginOffset") == "1"
            for response in (empty, moved):
                assert {"nextBeginOffset", "minOffset", "maxOffset", "suggestWhichBrokerId"} <= set(response.ext_fields)
            bad = await c.pull("P", 2, 0)
            assert bad.code == ResponseCode.SYSTEM_ERROR and "queueId[2] is illegal" in bad.remark
            missing = await c.pull("nope", 0, 0)
            assert missing.code == ResponseCode.TOPIC_NOT_EXIST and "nope" in missing.remark
            no_sub = await c.pull("P", 0, 0, sub=None, group="nobody")
            assert no_sub.code == ResponseCode.SUBSCRIPTION_NOT_EXIST

    run(scenario())


@pytest.mark.parametrize(
    "topic, code, fragment",
    [
        ("", ResponseCode.SYSTEM_ERROR, "topic name is illegal"),
        ("x" * 128, ResponseCode.SYSTEM_ERROR, "longer than 127"),
        ("bad topic", ResponseCode.SYSTEM_ERROR, "characters"),
        ("SCHEDULE_TOPIC_XXXX", ResponseCode.NO_PERMISSION, "forbidden"),
        ("SELF_TEST_TOPIC", ResponseCode.NO_PERMISSION, "forbidden"),
        ("TBW102", ResponseCode.NO_PERMISSION, "forbidden"),
        ("unknown-topic", ResponseCode.TOPIC_NOT_EXIST, "not exist"),
    ],
)
def test_send_refused_topics_store_nothing(engine_cluster, topic, code, fragment):
    async def scenario():
        async with engine_cluster() as c:
            before = c.broker.store.max_phy_offset
            response = await c.send(topic, b"data")
            assert response.code == code, response
            assert fragment in response.remark
            assert response.ext("MSG_REGION") == "DefaultRegion"  # present on errors too
            assert c.broker.store.max_phy_offset == before
            assert topic not in await c.topics() or topic in ("SCHEDULE_TOPIC_XXXX", "SELF_TEST_TOPIC")
            await c.create_topic("ok")
            assert (await c.send("ok", b"fine")).code == 0  # keeps serving

    run(scenario())


def test_send_bad_sizes_and_queues_store_nothing(engine_cluster):
    async def scenario():
        async with engine_cluster(max_message_size=1024) as c:
            await c.create_topic("S", read=2, write=2)
            big = await c.send("S", b"x" * 1025)
            assert big.code == ResponseCode.MESSAGE_ILLEGAL and "1025" in big.remark
            props = await c.send("S", b"x", props={"big": "p" * 33000})
            assert props.code == ResponseCode.MESSAGE_ILLEGAL and "properties" in props.remark
            queue = await c.send("S", b"x", queue_id=2)
            assert queue.code == ResponseCode.SYSTEM_ERROR and "queueId[2] is illegal" in queue.remark
            batch = await c.send(
                "S",
                encode_batch_body([Message("S", b"y" * 2000)]),
                code=RequestCode.SEND_BATCH_MESSAGE,
                extra={"m": True},
            )
            assert batch.code == ResponseCode.MESSAGE_ILLEGAL
            garbage = await c.send("S", b"\x00\x00\x00\x05junk", code=RequestCode.SEND_BATCH_MESSAGE, extra={"m": True})
            assert garbage.code == ResponseCode.MESSAGE_ILLEGAL and "batch" in garbage.remark
            header = await c.send("S", b"x", extra={"e": "zero"})
            assert header.code == ResponseCode.SYSTEM_ERROR and "queueId" in header.remark
            assert await c.max_offset("S", 0) == 0 and await c.max_offset("S", 1) == 0
            assert (await c.send("S", b"x" * 1024)).code == 0
            random_queue = await c.send("S", b"r", queue_id=-1)
            assert random_queue.code == 0 and random_queue.ext("queueId") in ("0", "1")

    run(scenario())


def test_send_to_read_only_topic_and_transaction_refused(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("RO", perm=4)
            response = await c.send("RO", b"x")
            assert response.code == ResponseCode.NO_PERMISSION and "RO" in response.remark
            await c.create_topic("TX")
            response = await c.send("TX", b"x", props={"TRAN_MSG": "true"})
            assert response.code == ResponseCode.NO_PERMISSION and "transaction" in response.remark
            assert await c.max_offset("TX") == 0

    run(scenario())


def test_auto_create_off_then_on(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            response = await c.send("fresh", b"x")
            assert response.code == ResponseCode.TOPIC_NOT_EXIST
            assert "fresh" not in await c.topics()
        async with engine_cluster(auto_create_topic_enable=True, max_message_size=1000) as c:
            # Bad sends create nothing, not even with auto-create on.
            assert (await c.send("fresh", b"x" * 1001)).code == ResponseCode.MESSAGE_ILLEGAL
            assert (await c.send("fresh", b"x", queue_id=4)).code == ResponseCode.SYSTEM_ERROR  # 4 queues at most
            assert (await c.send("fresh", b"x", props={"TRAN_MSG": "true"})).code == ResponseCode.NO_PERMISSION
            assert "fresh" not in await c.topics()
            template = (await c.topics())["TBW102"]
            assert template["perm"] == 7 and template["writeQueueNums"] == 8
            assert (await c.route("TBW102"))["queueDatas"][0]["perm"] == 7
            response = await c.send("fresh", b"x", queue_id=3)
            assert response.code == 0, response
            created = (await c.topics())["fresh"]
            assert created["readQueueNums"] == 4 and created["writeQueueNums"] == 4 and created["perm"] == 6
            route = await c.eventually(lambda: c.route("fresh"))
            assert route["queueDatas"][0]["writeQueueNums"] == 4
            assert [m.body for m in await c.pull_messages("fresh", 3)] == [b"x"]

    run(scenario())


def test_retry_topic_send_moves_to_dlq_after_max(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            ok = await c.send("%RETRY%g1", b"again", extra={"j": 1, "l": 3})
            assert ok.code == 0, ok
            assert "%RETRY%g1" in await c.topics()
            dead = await c.send("%RETRY%g1", b"dead", extra={"j": 3, "l": 3})
            assert dead.code == 0, dead
            assert "%DLQ%g1" in await c.topics()
            [msg] = await c.pull_messages("%DLQ%g1", 0, 0)
            assert msg.body == b"dead" and msg.reconsume_times == 3
            records = decode_records((await c.pull("%RETRY%g1", 0, 0)).body)
            assert [m.body for m in records] == [b"again"]

    run(scenario())


def test_a_pull_missing_or_garbling_a_header_field_is_refused_by_name(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("PH", read=1, write=1)
            await c.send("PH", b"x", queue_id=0)
            ext = {"consumerGroup": "g", "topic": "PH", "queueId": "0", "queueOffset": "0", "maxMsgNums": "1"}
            ok = await c.call(RequestCode.PULL_MESSAGE, {**ext, "sysFlag": "4", "subscription": "*"})
            assert ok.code == ResponseCode.SUCCESS, ok
            for ext_fields, remark in (
                ({k: v for k, v in ext.items() if k != "queueOffset"}, "the custom field <queueOffset> is missing"),
                ({**ext, "maxMsgNums": "lots"}, "the custom field <maxMsgNums> is not an integer: 'lots'"),
            ):
                refused = await c.call(RequestCode.PULL_MESSAGE, ext_fields)
                assert (refused.code, refused.remark) == (ResponseCode.SYSTEM_ERROR, remark)

    run(scenario())
