"""Consumer offsets and queue positions over real frames; persistence across restart."""

from __future__ import annotations

import asyncio

from brokers.engine.remoting.codes import RequestCode, ResponseCode


def run(coro, timeout: float = 30.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


def test_offsets_update_query_persist(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("O", read=2, write=2)
            for i in range(3):
                await c.send("O", f"m{i}".encode(), queue_id=0)
            # No offset yet, queue starts at 0 and its first message is hot: 0/SUCCESS.
            fresh = await c.call(RequestCode.QUERY_CONSUMER_OFFSET, {"consumerGroup": "g", "topic": "O", "queueId": 0})
            assert fresh.code == ResponseCode.SUCCESS and fresh.ext("offset") == "0"
            update = await c.call(
                RequestCode.UPDATE_CONSUMER_OFFSET,
                {"consumerGroup": "g", "topic": "O", "queueId": 0, "commitOffset": 2},
            )
            assert update.code == 0
            got = await c.call(RequestCode.QUERY_CONSUMER_OFFSET, {"consumerGroup": "g", "topic": "O", "queueId": 0})
            assert got.ext("offset") == "2"
            # A pull with the commit bit stores its commitOffset.
            await c.pull("O", 0, 2, group="g", sys_flag=0x1 | 0x4, commit_offset=3)
            assert c.broker.consumer_offset_manager.query_offset("g", "O", 0) == 3
            # Negative commits mean "no offset".
            await c.call(
                RequestCode.UPDATE_CONSUMER_OFFSET,
                {"consumerGroup": "g", "topic": "O", "queueId": 1, "commitOffset": 5},
            )
            await c.call(
                RequestCode.UPDATE_CONSUMER_OFFSET,
                {"consumerGroup": "g", "topic": "O", "queueId": 1, "commitOffset": -1},
            )
            assert c.broker.consumer_offset_manager.query_offset("g", "O", 1) == -1

            await c.restart_broker()
            got = await c.call(RequestCode.QUERY_CONSUMER_OFFSET, {"consumerGroup": "g", "topic": "O", "queueId": 0})
            assert got.code == 0 and got.ext("offset") == "3"
            text = c.broker.consumer_offset_manager.path.read_text()
            assert "O@g" in text and "0:3" in text  # fastjson's bare integer keys

            everything = await c.call(RequestCode.GET_ALL_CONSUMER_OFFSET)
            assert b'"O@g":{0:3}' in everything.body

    run(scenario())


def test_queue_positions(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("Q", read=1, write=1)
            ext = {"topic": "Q", "queueId": 0}
            empty = await c.call(RequestCode.GET_EARLIEST_MSG_STORETIME, ext)
            assert empty.code == 0 and empty.ext("timestamp") == "-1"
            stamps = []
            for i in range(3):
                await c.send("Q", b"x")
                [msg] = await c.pull_messages("Q", 0, i)
                stamps.append(msg.store_timestamp)
                await asyncio.sleep(0.01)
            assert (await c.call(RequestCode.GET_MAX_OFFSET, ext)).ext("offset") == "3"
            assert (await c.call(RequestCode.GET_MIN_OFFSET, ext)).ext("offset") == "0"
            assert (await c.call(RequestCode.GET_EARLIEST_MSG_STORETIME, ext)).ext("timestamp") == str(stamps[0])
            found = await c.call(RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, dict(ext, timestamp=stamps[2]))
            assert found.code == 0 and found.ext("offset") == "2"
            unknown = await c.call(RequestCode.GET_MAX_OFFSET, {"topic": "nothing", "queueId": 0})
            assert unknown.code == 0 and unknown.ext("offset") == "0"
            bad = await c.call(RequestCode.GET_MAX_OFFSET, {"topic": "../x", "queueId": 0})
            assert bad.code == ResponseCode.SYSTEM_ERROR and "illegal" in bad.remark
            missing = await c.call(RequestCode.GET_MAX_OFFSET, {"topic": "Q"})
            assert missing.code == ResponseCode.SYSTEM_ERROR and "queueId" in missing.remark

    run(scenario())
