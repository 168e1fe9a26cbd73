"""Long polling: a parked pull is answered by the next message, or by its hold timeout."""

from __future__ import annotations

import asyncio

from brokers.engine.common.message_codec import decode_records
from brokers.engine.remoting.codes import ResponseCode


def run(coro, timeout: float = 30.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


def test_parked_pull_answered_when_message_arrives(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("LP", read=1, write=1)
            pull = asyncio.ensure_future(c.pull("LP", 0, 0, suspend_ms=15000, timeout=20))
            await c.eventually(lambda: c.broker.pull_request_hold_service.parked_count == 1)
            assert not pull.done()
            assert (await c.send("LP", b"wake up", tags="T")).code == 0
            response = await asyncio.wait_for(pull, 5)  # held for 15 s unless the message wakes it
            assert response.code == ResponseCode.SUCCESS, response
            assert [m.body for m in decode_records(response.body)] == [b"wake up"]
            assert response.ext("nextBeginOffset") == "1"
            assert c.broker.pull_request_hold_service.parked_count == 0

    run(scenario())


def test_parked_pull_with_tag_filter_ignores_other_tags(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("LPT", read=1, write=1)
            pull = asyncio.ensure_future(c.pull("LPT", 0, 0, sub="Wanted", suspend_ms=15000, timeout=20))
            await c.eventually(lambda: c.broker.pull_request_hold_service.parked_count == 1)
            await c.send("LPT", b"other", tags="Other")
            await asyncio.sleep(0.2)
            assert not pull.done()
            await c.send("LPT", b"wanted", tags="Wanted")
            response = await asyncio.wait_for(pull, 5)
            assert response.code == ResponseCode.SUCCESS
            assert [m.body for m in decode_records(response.body)] == [b"wanted"]

    run(scenario())


def test_parked_pull_times_out_with_pull_not_found(engine_cluster):
    async def scenario():
        async with engine_cluster() as c:
            await c.create_topic("LPN", read=1, write=1)
            pull = asyncio.ensure_future(c.pull("LPN", 0, 0, suspend_ms=1000, timeout=10))
            await c.eventually(lambda: c.broker.pull_request_hold_service.parked_count == 1)
            assert not pull.done()  # held, not answered at once (how long: bench/latency_bench.py)
            response = await asyncio.wait_for(pull, 10)
            assert response.code == ResponseCode.PULL_NOT_FOUND
            assert c.broker.pull_request_hold_service.parked_count == 0
            assert {"nextBeginOffset", "minOffset", "maxOffset", "suggestWhichBrokerId"} <= set(response.ext_fields)

    run(scenario())


def test_hold_is_capped_and_answered_at_stop(engine_cluster):
    async def scenario():
        async with engine_cluster(max_suspend_ms=800) as c:
            await c.create_topic("CAP", read=1, write=1)
            # asks for 60 s, answered within the request's 10 s timeout: the broker's cap applies
            response = await c.pull("CAP", 0, 0, suspend_ms=60_000, timeout=10)
            assert response.code == ResponseCode.PULL_NOT_FOUND
            pull = asyncio.ensure_future(c.pull("CAP", 0, 0, suspend_ms=600_000, timeout=10))
            await c.eventually(lambda: c.broker.pull_request_hold_service.parked_count == 1)
            await c.broker.pull_request_hold_service.stop()  # as at broker stop: answer parked pulls
            assert (await asyncio.wait_for(pull, 5)).code == ResponseCode.PULL_NOT_FOUND

    run(scenario())
