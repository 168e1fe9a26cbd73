"""POP_MESSAGE / ACK_MESSAGE / CHANGE_MESSAGE_INVISIBLETIME against a real broker on loopback."""

from __future__ import annotations

import asyncio
import base64

from brokers.engine.common import json_compat
from brokers.engine.common.message_codec import decode_records
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from tests.brokers.engine.pop.conftest import ack, change, changed_handle, handles, pop, run

B = "broker-a"


async def _send_n(c, topic: str, n: int, queue_id: int = 0, tags: str | None = None) -> None:
    for i in range(n):
        assert (await c.send(topic, f"m{i}".encode(), queue_id=queue_id, tags=tags)).code == 0


def test_pop_then_ack_and_nothing_comes_again(pop_cluster):
    async def scenario():
        async with pop_cluster(pop_min_invisible_ms=200) as c:
            await c.create_topic("PA", read=2, write=2)
            await _send_n(c, "PA", 3, 0)
            await _send_n(c, "PA", 2, 1)
            response = await pop(c, "PA", invisible_ms=1000)
            assert response.code == ResponseCode.SUCCESS, response
            got = handles(response, B)
            assert sorted((p.msg.queue_id, p.msg.queue_offset) for p in got) == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)]
            assert all(p.msg.reconsume_times == 0 for p in got)
            assert response.ext("reviveQid") == "0" and response.ext("invisibleTime") == "1000"
            for p in got:
                assert (await ack(c, "PA", p)).code == ResponseCode.SUCCESS
            again = await ack(c, "PA", got[0])  # acked already
            assert again.code == ResponseCode.NO_MESSAGE and "no message in flight" in again.remark
            await asyncio.sleep(1.2)  # past the invisible time: nothing comes back
            empty = await pop(c, "PA")
            assert empty.code == ResponseCode.PULL_NOT_FOUND
            assert empty.ext("restNum") == "0"
            # lag: the committed offset is past everything acked
            offsets = c.broker.consumer_offset_manager.query_offsets("cg", "PA")
            assert offsets == {0: 3, 1: 2}

    run(scenario())


def test_no_ack_redelivered_with_reconsume_one_and_offset_waits(pop_cluster):
    async def scenario():
        async with pop_cluster(pop_min_invisible_ms=200) as c:
            await c.create_topic("PR", read=1, write=1)
            await _send_n(c, "PR", 3)
            first = handles(await pop(c, "PR", invisible_ms=1000), B)
            assert [p.msg.queue_offset for p in first] == [0, 1, 2]
            assert (await ack(c, "PR", first[0])).code == 0
            assert (await ack(c, "PR", first[2])).code == 0
            assert c.broker.consumer_offset_manager.query_offset("cg", "PR", 0) == 1  # offset 1 is not acked
            stats = json_compat.loads((await c.call(RequestCode.GET_CONSUME_STATS, {"consumerGroup": "cg"})).body)
            q0 = stats["offsetTable"][MessageQueue("PR", B, 0)]
            assert (q0["brokerOffset"], q0["consumerOffset"]) == (3, 1)  # a lag of 2, as the console shows it
            assert (await pop(c, "PR")).code == ResponseCode.PULL_NOT_FOUND  # still invisible

            async def redelivered():
                r = await pop(c, "PR", invisible_ms=1000)
                return r if r.code == 0 else None

            response = await c.eventually(redelivered, timeout=10)
            again = handles(response, B)
            assert [(p.msg.queue_offset, p.msg.reconsume_times, p.msg.body) for p in again] == [(1, 1, b"m1")]
            stale = await ack(c, "PR", first[1])  # the first delivery's handle no longer works
            assert stale.code == ResponseCode.NO_MESSAGE and "popTime" in stale.remark
            assert (await ack(c, "PR", again[0])).code == 0
            assert c.broker.consumer_offset_manager.query_offset("cg", "PR", 0) == 3

    run(scenario())


def test_change_invisible_time_renews_and_old_handle_stops(pop_cluster):
    async def scenario():
        async with pop_cluster(pop_min_invisible_ms=200) as c:
            await c.create_topic("PC", read=1, write=1)
            await _send_n(c, "PC", 1)
            (p,) = handles(await pop(c, "PC", invisible_ms=1000), B)
            response = await change(c, "PC", p, 60_000)
            assert response.code == 0, response
            assert (
                response.ext("invisibleTime") == "60000" and int(response.ext("popTime")) > int(p.handle.split()[1]) - 1
            )
            await asyncio.sleep(1.2)  # the first invisible time has passed: not redelivered
            assert (await pop(c, "PC")).code == ResponseCode.PULL_NOT_FOUND
            old = await ack(c, "PC", p)
            assert old.code == ResponseCode.NO_MESSAGE
            renewed = changed_handle(response, p, "PC", B)
            assert (await ack(c, "PC", p, handle=renewed)).code == 0

    run(scenario())


def test_forged_other_group_and_expired_handles_are_refused(pop_cluster):
    async def scenario():
        async with pop_cluster(pop_min_invisible_ms=200) as c:
            await c.create_topic("PF", read=1, write=1)
            await _send_n(c, "PF", 2)
            p0, p1 = handles(await pop(c, "PF", invisible_ms=1000), B)
            other = await ack(c, "PF", p0, group="other-group")
            assert other.code == ResponseCode.NO_MESSAGE and "other-group" in other.remark
            parts = p0.handle.split()
            forged = " ".join([parts[0], str(int(parts[1]) + 1)] + parts[2:])
            assert (await ack(c, "PF", p0, handle=forged)).code == ResponseCode.NO_MESSAGE
            wrong_broker = " ".join(parts[:5] + ["broker-z"] + parts[6:])
            refused = await ack(c, "PF", p0, handle=wrong_broker)
            assert refused.code == ResponseCode.NO_MESSAGE and "brokerName" in refused.remark
            bad = await ack(c, "PF", p0, handle="not a handle")
            assert bad.code == ResponseCode.MESSAGE_ILLEGAL and "extraInfo" in bad.remark
            await asyncio.sleep(1.2)
            expired = await ack(c, "PF", p1)
            assert expired.code == ResponseCode.NO_MESSAGE and "expired" in expired.remark
            expired_change = await change(c, "PF", p1, 10_000)
            assert expired_change.code == ResponseCode.NO_MESSAGE
            # nothing changed: both come again
            got = handles(await pop(c, "PF"), B)
            assert [(p.msg.queue_offset, p.msg.reconsume_times) for p in got] == [(0, 1), (1, 1)]

    run(scenario())


def test_bad_requests_name_the_field(pop_cluster):
    async def scenario():
        async with pop_cluster() as c:
            await c.create_topic("PB", read=1, write=1)
            too_many = await pop(c, "PB", max_nums=33)
            assert too_many.code == ResponseCode.SYSTEM_ERROR and "maxMsgNums" in too_many.remark
            short = await pop(c, "PB", invisible_ms=10)
            assert short.code == ResponseCode.SYSTEM_ERROR and "invisibleTime" in short.remark
            queue = await pop(c, "PB", queue_id=5)
            assert "queueId" in queue.remark
            missing = await c.call(RequestCode.POP_MESSAGE, {"consumerGroup": "cg", "topic": "PB"})
            assert missing.code == ResponseCode.SYSTEM_ERROR and "queueId" in missing.remark
            no_topic = await pop(c, "Nope")
            assert no_topic.code == ResponseCode.TOPIC_NOT_EXIST

    run(scenario())


def test_tag_filter_and_a_single_queue(pop_cluster):
    async def scenario():
        async with pop_cluster() as c:
            await c.create_topic("PT", read=2, write=2)
            await _send_n(c, "PT", 2, 0, tags="A")
            await _send_n(c, "PT", 2, 0, tags="B")
            await _send_n(c, "PT", 2, 1, tags="A")
            response = await pop(c, "PT", queue_id=0, exp="A")
            got = handles(response, B)
            assert [(p.msg.queue_id, p.msg.queue_offset) for p in got] == [(0, 0), (0, 1)]
            for p in got:
                assert (await ack(c, "PT", p)).code == 0
            assert c.broker.consumer_offset_manager.query_offset("cg", "PT", 0) == 4  # B's were skipped by the filter

    run(scenario())


def test_long_polling_wakes_on_arrival(pop_cluster):
    async def scenario():
        async with pop_cluster() as c:
            await c.create_topic("PL", read=2, write=2)
            parked = asyncio.ensure_future(pop(c, "PL", poll_ms=15_000, timeout=20))
            await c.eventually(lambda: c.broker.pop_service.parked_count == 1)
            assert not parked.done()
            assert (await c.send("PL", b"wake", queue_id=1)).code == 0
            response = await asyncio.wait_for(parked, 5)  # parked for 15 s unless the message wakes it
            assert response.code == 0 and [m.body for m in decode_records(response.body)] == [b"wake"]
            timed_out = await pop(c, "PL", poll_ms=300)
            assert timed_out.code == 210  # POLLING_TIMEOUT

    run(scenario())


def test_inflight_limit_answers_polling_full(pop_cluster):
    async def scenario():
        async with pop_cluster(pop_max_inflight_per_group=3) as c:
            await c.create_topic("PI", read=1, write=1)
            await _send_n(c, "PI", 5)
            first = handles(await pop(c, "PI"), B)
            assert len(first) == 3
            full = await pop(c, "PI")
            assert full.code == 209 and "pop_max_inflight_per_group" in full.remark
            assert (await ack(c, "PI", first[0])).code == 0
            assert [p.msg.queue_offset for p in handles(await pop(c, "PI"), B)] == [3]

    run(scenario())


def test_batch_ack_acks_the_offsets_of_its_bitset(pop_cluster):
    async def scenario():
        async with pop_cluster() as c:
            await c.create_topic("PBA", read=1, write=1)
            await _send_n(c, "PBA", 4)
            response = await pop(c, "PBA")
            got = handles(response, B)
            entry = {
                "c": "cg",
                "t": "PBA",
                "r": "0",
                "so": 0,
                "q": 0,
                "rq": 0,
                "pt": int(response.ext("popTime")),
                "it": int(response.ext("invisibleTime")),
                "b": base64.b64encode(bytes([0b1011])).decode(),
            }
            body = json_compat.dumps({"acks": [entry], "brokerName": B}).encode()
            assert (await c.call(RequestCode.BATCH_ACK_MESSAGE, None, body)).code == 0
            assert c.broker.consumer_offset_manager.query_offset("cg", "PBA", 0) == 2  # offsets 0, 1, 3 acked
            again = await c.call(RequestCode.BATCH_ACK_MESSAGE, None, body)
            assert again.code == ResponseCode.NO_MESSAGE and again.remark.startswith("3 of the offsets")
            assert (await ack(c, "PBA", got[2])).code == 0
            bad = await c.call(
                RequestCode.BATCH_ACK_MESSAGE, None, json_compat.dumps({"acks": [{**entry, "b": "%%"}]}).encode()
            )
            assert bad.code == ResponseCode.MESSAGE_ILLEGAL and "bitSet" in bad.remark

    run(scenario())


def test_any_queue_pops_take_turns_across_the_queues(pop_cluster):
    async def scenario():
        async with pop_cluster() as c:
            await c.create_topic("PQ", read=4, write=4)
            for q in range(4):
                await _send_n(c, "PQ", 5, q)
            firsts = []
            for _ in range(4):
                got = handles(await pop(c, "PQ", max_nums=3), B)
                assert len(got) == 3 and len({p.msg.queue_id for p in got}) == 1
                firsts.append(got[0].msg.queue_id)
            assert sorted(firsts) == [0, 1, 2, 3]  # each queue had its turn
            rest = handles(await pop(c, "PQ", max_nums=32), B)
            assert len(rest) == 8 and all(p.msg.queue_offset in (3, 4) for p in rest)

    run(scenario())


def test_expired_messages_reach_every_parked_pop_of_the_group(pop_cluster):
    async def scenario():
        async with pop_cluster() as c:
            await c.create_topic("PW", read=1, write=1)
            await _send_n(c, "PW", 6)
            assert len(handles(await pop(c, "PW", invisible_ms=1000), B)) == 6  # not acked: all six expire at once
            parked = [asyncio.ensure_future(pop(c, "PW", max_nums=2, poll_ms=15_000, timeout=20)) for _ in range(3)]
            await c.eventually(lambda: c.broker.pop_service.parked_count == 3)
            # the expiry wakes one parked pop; each that takes a full batch wakes the next (15 s otherwise)
            answers = await asyncio.wait_for(asyncio.gather(*parked), 10)
            got = sorted(p.msg.queue_offset for a in answers for p in handles(a, B))
            assert got == [0, 1, 2, 3, 4, 5]

    run(scenario())


def test_a_journal_that_cannot_be_written_is_named_in_the_answer(pop_cluster):
    async def scenario():
        async with pop_cluster() as c:
            await c.create_topic("PE", read=1, write=1)
            await _send_n(c, "PE", 1)
            c.broker.pop_service.journal.close()  # as a disk that refuses writes would
            refused = await pop(c, "PE")
            assert refused.code == ResponseCode.SYSTEM_ERROR and "POP journal" in refused.remark

    run(scenario())
