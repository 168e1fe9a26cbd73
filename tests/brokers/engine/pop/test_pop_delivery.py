"""POP's redelivery rules on a real broker: max attempts to the DLQ, orderly queues, a restart."""

from __future__ import annotations

import asyncio
import json

from brokers.engine.common.message_codec import decode_records
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from tests.brokers.engine.pop.conftest import ack, handles, pop, run

B = "broker-a"


async def _group(c, group: str, **fields) -> None:
    body = {"groupName": group, **fields}
    response = await c.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, None, json.dumps(body).encode())
    assert response.code == 0, response


async def _pop_until(c, topic: str, **kw):
    async def found():
        r = await pop(c, topic, **kw)
        return r if r.code == 0 else None

    return await c.eventually(found, timeout=10)


def test_max_attempts_then_dlq_counts_as_acked(pop_cluster):
    async def scenario():
        async with pop_cluster(pop_min_invisible_ms=200) as c:
            await c.create_topic("PD", read=1, write=1)
            await _group(c, "cg", retryMaxTimes=1)  # 2 deliveries
            assert (await c.send("PD", b"poison")).code == 0
            first = handles(await pop(c, "PD", invisible_ms=200), B)
            assert [p.msg.reconsume_times for p in first] == [0]
            second = handles(await _pop_until(c, "PD", invisible_ms=200), B)
            assert [p.msg.reconsume_times for p in second] == [1]
            dlq = "%DLQ%cg"
            await c.eventually(lambda: dlq in c.broker.topic_config_manager.topic_config_table, timeout=10)
            await c.eventually(lambda: c.broker.store.get_max_offset_in_queue(dlq, 0) == 1, timeout=10)
            msgs = decode_records((await c.pull(dlq, 0, 0, group="dlq-reader")).body)
            assert [m.body for m in msgs] == [b"poison"]
            await c.eventually(lambda: c.broker.consumer_offset_manager.query_offset("cg", "PD", 0) == 1, timeout=10)
            await asyncio.sleep(0.3)
            assert (await pop(c, "PD")).code == ResponseCode.PULL_NOT_FOUND  # acked by the DLQ: not delivered again

    run(scenario())


def test_order_holds_the_queue_until_acked_and_redelivers_in_order(pop_cluster):
    async def scenario():
        async with pop_cluster(pop_min_invisible_ms=200) as c:
            await c.create_topic("PO", read=1, write=1)
            await _group(c, "cg", consumeMessageOrderly=True)
            for i in range(4):
                assert (await c.send("PO", f"o{i}".encode())).code == 0
            response = await pop(c, "PO", max_nums=2, order=True, invisible_ms=1000)
            assert response.ext("reviveQid") == "999"
            first = handles(response, B)
            assert [p.msg.body for p in first] == [b"o0", b"o1"]
            assert (await pop(c, "PO", order=True)).code == ResponseCode.PULL_NOT_FOUND  # o0, o1 not acked yet
            assert (await ack(c, "PO", first[0])).code == 0
            assert (await pop(c, "PO", order=True)).code == ResponseCode.PULL_NOT_FOUND  # o1 still holds the queue
            again_response = await _pop_until(c, "PO", order=True, invisible_ms=1000)
            again = handles(again_response, B)
            assert [(p.msg.body, p.msg.reconsume_times) for p in again] == [(b"o1", 1)]
            assert again_response.ext("orderCountInfo") == f"0 qo0%{again[0].msg.queue_offset} 1"
            assert (await ack(c, "PO", again[0])).code == 0
            rest = handles(await pop(c, "PO", order=True), B)
            assert [p.msg.body for p in rest] == [b"o2", b"o3"]
            groups = json.loads((await c.call(RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG)).body)[
                "subscriptionGroupTable"
            ]
            assert groups["cg"]["consumeMessageOrderly"] is True

    run(scenario())


def test_restart_keeps_deliveries_in_flight(pop_cluster):
    async def scenario():
        async with pop_cluster(pop_min_invisible_ms=200) as c:
            await c.create_topic("PK", read=1, write=1)
            for i in range(3):
                assert (await c.send("PK", f"k{i}".encode())).code == 0
            first = handles(await pop(c, "PK", invisible_ms=60_000), B)
            assert (await ack(c, "PK", first[0])).code == 0
            await c.restart_broker()
            # still invisible after the restart, the old handles still work
            assert (await pop(c, "PK")).code == ResponseCode.PULL_NOT_FOUND
            assert (await ack(c, "PK", first[1])).code == 0
            assert (await ack(c, "PK", first[0])).code == ResponseCode.NO_MESSAGE
            assert c.broker.consumer_offset_manager.query_offset("cg", "PK", 0) == 2
            assert (await c.send("PK", b"k3")).code == 0
            assert [p.msg.body for p in handles(await pop(c, "PK"), B)] == [b"k3"]

    run(scenario())


def test_journal_compaction_keeps_the_state(pop_cluster):
    async def scenario():
        async with pop_cluster(pop_min_invisible_ms=200, pop_journal_compact_bytes=2048) as c:
            await c.create_topic("PJ", read=1, write=1)
            for i in range(40):
                assert (await c.send("PJ", f"j{i}".encode())).code == 0
            kept = []
            for _ in range(4):
                batch = handles(await pop(c, "PJ", max_nums=10), B)
                for p in batch[:-1]:
                    assert (await ack(c, "PJ", p)).code == 0
                kept.append(batch[-1])
            journal = c.broker.pop_service.journal
            await c.eventually(lambda: journal.compactions >= 1, timeout=5)
            await c.restart_broker()
            for p in kept:
                assert (await ack(c, "PJ", p)).code == 0, p.msg.queue_offset
            assert c.broker.consumer_offset_manager.query_offset("cg", "PJ", 0) == 40

    run(scenario())


def test_slave_refuses_pop(pop_cluster):
    async def scenario():
        async with pop_cluster() as c:
            await c.create_topic("PS", read=1, write=1)
            slave = await c.start_broker("broker-a-slave", broker_name="broker-a", broker_id=1, broker_role="SLAVE")
            request_ext = {
                "consumerGroup": "cg",
                "topic": "PS",
                "queueId": 0,
                "maxMsgNums": 1,
                "invisibleTime": 60000,
                "pollTime": 0,
                "bornTime": 0,
                "initMode": 0,
            }
            response = await c.client.invoke(
                slave.addr, RemotingCommand.request(RequestCode.POP_MESSAGE, request_ext), 5
            )
            assert response.code == ResponseCode.NO_PERMISSION and "slave" in response.remark

    run(scenario())


def test_an_operators_offset_reset_moves_the_pops(pop_cluster):
    async def scenario():
        async with pop_cluster() as c:
            await c.create_topic("PZ", read=1, write=1)
            for i in range(5):
                assert (await c.send("PZ", f"z{i}".encode())).code == 0
            first = handles(await pop(c, "PZ"), B)
            assert [p.msg.queue_offset for p in first] == [0, 1, 2, 3, 4]
            assert (await ack(c, "PZ", first[4])).code == 0
            reset = await c.call(
                RequestCode.UPDATE_CONSUMER_OFFSET,
                {"consumerGroup": "cg", "topic": "PZ", "queueId": 0, "commitOffset": 2},
            )
            assert reset.code == 0
            again = handles(await pop(c, "PZ"), B)
            assert [(p.msg.queue_offset, p.msg.reconsume_times) for p in again] == [(2, 0), (3, 0), (4, 0)]
            assert (await ack(c, "PZ", first[2])).code == ResponseCode.NO_MESSAGE  # the old deliveries are forgotten
            assert c.broker.consumer_offset_manager.query_offset("cg", "PZ", 0) == 2

    run(scenario())
