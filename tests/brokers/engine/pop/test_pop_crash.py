"""SIGKILL a broker holding 1,000 popped messages: after the restart every one not acked is
delivered again (attempt 2), and under SYNC_FLUSH no acked one is.

The broker runs as a real subprocess (the cluster harness's ``ProcessCluster``, no name server); the
test speaks POP_MESSAGE / ACK_MESSAGE to it through RemotingClient.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from brokers.engine.cluster import ClusterSpec, GroupSpec
from brokers.engine.cluster.processes import ProcessCluster
from brokers.engine.common.message_codec import decode_records
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand

BROKER = "pop-crash"
TOPIC = "PopCrash"
QUEUES = 4
MESSAGES = 1_000
INVISIBLE_MS = 4_000  # room for 334 acks (each fsynced under SYNC_FLUSH) on a loaded machine before the first expires


async def _call(client: RemotingClient, addr: str, code: int, ext: dict, body: bytes = b"") -> RemotingCommand:
    return await client.invoke(addr, RemotingCommand.request(code, ext, body), 10.0)


async def _pop(client: RemotingClient, addr: str) -> RemotingCommand:
    return await _call(
        client,
        addr,
        RequestCode.POP_MESSAGE,
        {
            "consumerGroup": "cg",
            "topic": TOPIC,
            "queueId": -1,
            "maxMsgNums": 32,
            "invisibleTime": INVISIBLE_MS,
            "pollTime": 0,
            "bornTime": 0,
            "initMode": 0,
            "expType": "TAG",
            "exp": "*",
        },
    )


def _decode(response: RemotingCommand) -> list[tuple[int, int, int, str]]:
    """(queue id, queue offset, reconsume times, handle) of each popped message."""
    starts = {int(q): int(s) for _, q, s in (one.split(" ") for one in response.ext("startOffsetInfo").split(";"))}
    return [
        (
            m.queue_id,
            m.queue_offset,
            m.reconsume_times,
            f"{starts[m.queue_id]} {response.ext('popTime')} {response.ext('invisibleTime')} 0 0 {BROKER} {m.queue_id} {m.queue_offset}",
        )
        for m in decode_records(response.body)
    ]


async def _ack(client: RemotingClient, addr: str, queue_id: int, offset: int, handle: str) -> RemotingCommand:
    return await _call(
        client,
        addr,
        RequestCode.ACK_MESSAGE,
        {"consumerGroup": "cg", "topic": TOPIC, "queueId": queue_id, "offset": offset, "extraInfo": handle},
    )


async def _before_kill(addr: str) -> tuple[set, set]:
    client = RemotingClient()
    try:
        created = await _call(
            client,
            addr,
            RequestCode.UPDATE_AND_CREATE_TOPIC,
            {
                "topic": TOPIC,
                "defaultTopic": "TBW102",
                "readQueueNums": QUEUES,
                "writeQueueNums": QUEUES,
                "perm": 6,
                "topicFilterType": "SINGLE_TAG",
                "topicSysFlag": 0,
                "order": False,
            },
        )
        assert created.code == 0, created

        async def send(i: int) -> None:
            response = await _call(
                client,
                addr,
                RequestCode.SEND_MESSAGE,
                {
                    "producerGroup": "pg",
                    "topic": TOPIC,
                    "defaultTopic": "TBW102",
                    "defaultTopicQueueNums": QUEUES,
                    "queueId": i % QUEUES,
                    "sysFlag": 0,
                    "bornTimestamp": 0,
                    "flag": 0,
                    "properties": "",
                    "reconsumeTimes": 0,
                    "unitMode": False,
                },
                f"m{i}".encode(),
            )
            assert response.code == 0, response

        for start in range(0, MESSAGES, 100):
            await asyncio.gather(*(send(i) for i in range(start, start + 100)))
        popped: list[tuple[int, int, int, str]] = []
        while len(popped) < MESSAGES:
            response = await _pop(client, addr)
            assert response.code == 0, response
            popped.extend(_decode(response))
        assert len({(q, o) for q, o, _, _ in popped}) == MESSAGES
        chosen = popped[::3]  # every third one acked, the kill right after the last answer
        for start in range(0, len(chosen), 50):
            answers = await asyncio.gather(
                *(_ack(client, addr, q, o, handle) for q, o, _, handle in chosen[start : start + 50])
            )
            assert [a.code for a in answers] == [0] * len(answers), [a.remark for a in answers if a.code]
        acked = {(q, o) for q, o, _, _ in chosen}
        return {(q, o) for q, o, _, _ in popped} - acked, acked
    finally:
        await client.close()


async def _after_restart(addr: str, expected: int) -> list[tuple[int, int, int, str]]:
    client = RemotingClient()
    again: list[tuple[int, int, int, str]] = []
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            response = await _pop(client, addr)
            if response.code == ResponseCode.SUCCESS:
                again.extend(_decode(response))
            elif len(again) >= expected:
                break  # INVISIBLE_MS has passed for all of them: nothing more comes
            else:
                await asyncio.sleep(0.1)
        return again
    finally:
        await client.close()


@pytest.mark.parametrize("flush", ["sync", "async"])
def test_sigkill_keeps_popped_messages_and_acks(tmp_path, flush):
    spec = ClusterSpec(
        str(tmp_path),
        groups=(GroupSpec(BROKER),),
        namesrvs=0,
        store_overrides={"flush_disk_type": "SYNC_FLUSH" if flush == "sync" else "ASYNC_FLUSH"},
    )
    with ProcessCluster(spec) as cluster:
        not_acked, acked = asyncio.run(_before_kill(cluster.addr(BROKER)))
        cluster.kill_broker(BROKER)
        cluster.restart_broker(BROKER)
        again = asyncio.run(_after_restart(cluster.addr(BROKER), len(not_acked)))
        cluster.kill_broker(BROKER)
    delivered = {(q, o) for q, o, _, _ in again}
    assert not_acked <= delivered, f"{len(not_acked - delivered)} popped, not acked messages were not delivered again"
    assert all(reconsume == 1 for _, _, reconsume, _ in again)
    acked_again = delivered & acked
    if flush == "sync":
        assert not acked_again  # each ack was answered after its journal record's fsync
    else:
        print(f"ASYNC_FLUSH: {len(acked_again)} of {len(acked)} acked messages delivered again after the SIGKILL")
