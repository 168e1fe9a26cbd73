"""GANTRY_GET_POP_STATE (10010) on a real broker: a group's cursors and deliveries in flight as POP,
ACK and CHANGE leave them; bad headers refused naming the field; admin-only with the ACL on. And a
POP group's consume TPS (GET_CONSUME_STATS consumeTps) moves as a pulling group's does."""

from __future__ import annotations

import asyncio
import json
import os

from brokers.engine.acl import AclClientHook
from brokers.engine.common import json_compat
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from tests.brokers.engine.pop.conftest import ack, change, handles, pop, run

B = "broker-a"


async def _state(c, group: str = "cg", **ext) -> dict:
    response = await c.call(RequestCode.GANTRY_GET_POP_STATE, {"consumerGroup": group, **ext})
    assert response.code == ResponseCode.SUCCESS, response
    return json.loads(response.body)


def test_code_number():
    assert RequestCode.GANTRY_GET_POP_STATE == 10_010


def test_pop_state_follows_pop_ack_change_and_redelivery(pop_cluster):
    async def scenario():
        async with pop_cluster(pop_min_invisible_ms=200) as c:
            await c.create_topic("PS", read=2, write=2)
            await c.create_topic("PS2", read=1, write=1)
            never = await _state(c, "nobody")
            assert never["group"] == "nobody" and never["queues"] == [] and never["truncated"] is False
            for i in range(3):
                assert (await c.send("PS", f"m{i}".encode(), queue_id=0)).code == 0
            assert (await c.send("PS", b"q1", queue_id=1)).code == 0
            assert (await c.send("PS2", b"other")).code == 0
            popped = handles(await pop(c, "PS", queue_id=0, invisible_ms=60_000), B)
            assert [p.msg.queue_offset for p in popped] == [0, 1, 2]
            state = await _state(c)
            assert state["brokerName"] == B and state["truncated"] is False
            [q0] = state["queues"]
            assert (q0["topic"], q0["queueId"], q0["cursor"], q0["inFlight"]) == ("PS", 0, 3, 3)
            assert [d["offset"] for d in q0["deliveries"]] == [0, 1, 2]
            first = q0["deliveries"][0]
            assert first["invisibleUntil"] - first["popTime"] == 60_000
            assert first["attempt"] == 1 and first["msgId"] == popped[0].msg.msg_id
            assert 0 < first["popTime"] <= state["now"]

            assert (await ack(c, "PS", popped[0])).code == 0
            changed = await change(c, "PS", popped[1], 300)
            assert changed.code == 0
            [q0] = (await _state(c))["queues"]
            assert q0["inFlight"] == 2 and [d["offset"] for d in q0["deliveries"]] == [1, 2]
            assert q0["deliveries"][0]["popTime"] == int(changed.ext("popTime"))
            assert q0["deliveries"][0]["invisibleUntil"] == int(changed.ext("popTime")) + 300

            await asyncio.sleep(0.4)  # offset 1 expired: the next pop delivers it again, attempt 2
            again = handles(await pop(c, "PS", queue_id=0, invisible_ms=60_000), B)
            assert [(p.msg.queue_offset, p.msg.reconsume_times) for p in again] == [(1, 1)]
            [q0] = (await _state(c))["queues"]
            assert [(d["offset"], d["attempt"]) for d in q0["deliveries"]] == [(1, 2), (2, 1)]

            handles(await pop(c, "PS", queue_id=1), B)
            handles(await pop(c, "PS2"), B)
            state = await _state(c)
            assert [(q["topic"], q["queueId"], q["inFlight"]) for q in state["queues"]] == [
                ("PS", 0, 2),
                ("PS", 1, 1),
                ("PS2", 0, 1),
            ]
            only = await _state(c, topic="PS2")
            assert [(q["topic"], q["cursor"]) for q in only["queues"]] == [("PS2", 1)]
            assert (await _state(c, topic="never-popped"))["queues"] == []

            cut = await _state(c, maxEntries="2")
            assert cut["truncated"] is True
            assert [(q["inFlight"], len(q["deliveries"])) for q in cut["queues"]] == [(2, 2), (1, 0), (1, 0)]

            for q in again:
                assert (await ack(c, "PS", q)).code == 0
            assert (await ack(c, "PS", popped[2])).code == 0
            [q0, *_] = (await _state(c))["queues"]
            assert (q0["cursor"], q0["inFlight"], q0["deliveries"]) == (
                3,
                0,
                [],
            )  # done: the queue stays, with its cursor

    run(scenario())


def test_bad_headers_are_refused_naming_the_field(pop_cluster):
    async def scenario():
        async with pop_cluster() as c:
            for ext, field in (
                ({}, "consumerGroup"),
                ({"consumerGroup": "cg", "maxEntries": "0"}, "maxEntries"),
                ({"consumerGroup": "cg", "maxEntries": "many"}, "maxEntries"),
                ({"consumerGroup": "cg", "topic": "bad topic!"}, "topic"),
                ({"consumerGroup": "bad group!"}, "group"),
            ):
                response = await c.call(RequestCode.GANTRY_GET_POP_STATE, ext)
                assert response.code == ResponseCode.SYSTEM_ERROR, (ext, response)
                assert field in response.remark, (ext, response.remark)
            big = await _state(c, maxEntries="1000000")  # capped, not refused
            assert big["queues"] == []

    run(scenario())


ACL = """\
accounts:
  - accessKey: state-admin
    secretKey: admin-secret-1
    admin: true
  - accessKey: state-user
    secretKey: user-secret-1
    defaultTopicPerm: SUB
    defaultGroupPerm: SUB
"""


def test_admin_only_with_the_acl_on(pop_cluster, tmp_path):
    acl_file = tmp_path / "plain_acl.yml"
    acl_file.write_text(ACL)
    os.chmod(acl_file, 0o600)

    async def scenario():
        async with pop_cluster(acl_file=str(acl_file)) as c:
            admin = RemotingClient(signer=AclClientHook("state-admin", "admin-secret-1"))
            user = RemotingClient(signer=AclClientHook("state-user", "user-secret-1"))
            try:
                request = lambda: RemotingCommand.request(RequestCode.GANTRY_GET_POP_STATE, {"consumerGroup": "cg"})  # noqa: E731
                denied = await user.invoke(c.addr(), request(), 5)
                assert denied.code == ResponseCode.NO_PERMISSION, denied
                allowed = await admin.invoke(c.addr(), request(), 5)
                assert allowed.code == ResponseCode.SUCCESS and json.loads(allowed.body)["queues"] == []
            finally:
                await admin.close()
                await user.close()

    run(scenario())


def test_pops_count_in_the_groups_consume_tps(pop_cluster):
    async def scenario():
        async with pop_cluster() as c:
            await c.create_topic("PT", read=1, write=1)
            c.broker.broker_stats.group_get.interval_s = (
                0.2  # snapshots every 0.2 s instead of 10 s: the test's minute is short
            )
            for i in range(5):
                assert (await c.send("PT", f"t{i}".encode())).code == 0
            popped = handles(await pop(c, "PT"), B)
            assert len(popped) == 5

            async def tps():
                stats = json_compat.loads((await c.call(RequestCode.GET_CONSUME_STATS, {"consumerGroup": "cg"})).body)
                return stats["consumeTps"] if stats["consumeTps"] > 0 else None

            assert await c.eventually(tps, timeout=10) > 0
            stats = json_compat.loads((await c.call(RequestCode.GET_CONSUME_STATS, {"consumerGroup": "cg"})).body)
            q0 = stats["offsetTable"][MessageQueue("PT", B, 0)]
            assert (q0["brokerOffset"], q0["consumerOffset"]) == (5, 0)  # popped, not acked: still lag

    run(scenario())


def test_committed_is_the_lowest_offset_in_flight_through_acks_resets_and_replays() -> None:
    from brokers.engine.broker.pop.state import PopState

    state = PopState()
    key = {"g": "g", "t": "t", "q": 0}
    state.apply({"op": "cur", **key, "cur": 0})
    state.apply({"op": "pop", **key, "cur": 300, "pt": 1, "it": 1000, "ck": 0, "m": [[o, 0, o] for o in range(300)]})
    qs = state.get(("g", "t", 0))
    assert qs.committed() == 0
    for o in range(1, 300):  # everything but the first acked: the heap is rebuilt, not left to grow
        state.apply({"op": "ack", **key, "o": o, "pt": 1})
    assert qs.committed() == 0 and len(qs.offsets) <= 2 * len(qs.inflight) + 64 + 1
    state.apply({"op": "ack", **key, "o": 0, "pt": 1})
    assert qs.committed() == 300  # nothing in flight: the cursor
    state.apply(
        {"op": "pop", **key, "cur": 310, "pt": 2, "it": 1000, "ck": 300, "m": [[o, 0, o] for o in range(300, 310)]}
    )
    state.apply({"op": "ack", **key, "o": 300, "pt": 2})
    assert qs.committed() == 301
    state.apply({"op": "reset", **key, "cur": 500})
    assert qs.committed() == 500 and qs.offsets == []
    replayed = PopState()
    for record in state.snapshot():
        replayed.apply(record)
    assert replayed.get(("g", "t", 0)).committed() == 500
