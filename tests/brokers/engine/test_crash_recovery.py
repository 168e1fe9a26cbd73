"""SIGKILL a SYNC_FLUSH broker during writes, 20 times: acknowledged messages survive; after a
kill the restarted broker has nothing left to flush.

The broker runs as a real subprocess (the cluster harness's ``ProcessCluster``) with small commitlog
segments so writes cross segment boundaries. Each round: restart, send from many concurrent
senders, SIGKILL mid-stream, restart, and check that

- every acknowledged message is readable at the queue offset its send result named;
- every message served is whole: its body is one a sender really sent, its CRC matches;
- queue offsets are dense from 0 (nothing half-written is served, nothing is skipped);
- a second restart (after another SIGKILL, with no writes) serves exactly the same state.
"""

from __future__ import annotations

import asyncio
import random
import zlib
from collections.abc import Callable

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.client.simple import AsyncPullClient, AsyncSimpleProducer, PullStatus, SimpleProducer
from brokers.engine.common.message import Message
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.cluster import ClusterSpec, GroupSpec
from brokers.engine.cluster.processes import ProcessCluster
from tests.brokers.engine._group_procs import BrokerProc, NamesrvProc
from tests.brokers.engine.client._cluster import wait_for_route

ROUNDS = 20
TOPIC = "CrashTopic"
QUEUES = 4
BROKER = "crash-broker"


def _body(round_no: int, n: int) -> bytes:
    rng = random.Random(round_no * 1_000_003 + n)
    return f"r{round_no}-n{n}|".encode() + rng.randbytes(rng.randint(50, 3000))


async def _write_until_killed(
    namesrv: str, kill: Callable[[], object], round_no: int, acked: dict, attempted: set
) -> None:
    """16 senders write until the broker is SIGKILLed at a random moment."""
    counter = iter(range(10**9))
    killed, first_ack = asyncio.Event(), asyncio.Event()
    async with AsyncSimpleProducer(namesrv, "crash-producer", timeout_s=3.0) as producer:
        queues = [MessageQueue(TOPIC, BROKER, q) for q in range(QUEUES)]

        async def sender() -> None:
            while not killed.is_set():
                n = next(counter)
                body = _body(round_no, n)
                attempted.add(body)
                try:
                    result = await producer.send(Message(TOPIC, body, keys=f"k{round_no}-{n}"), queues[n % QUEUES])
                except Exception:
                    continue  # not acknowledged: may or may not be stored, but never half
                acked[(result.message_queue.queue_id, result.queue_offset)] = body
                first_ack.set()

        async def killer() -> None:
            # The kill comes at a random moment of the writing, which starts with the first
            # acknowledgement (a loaded machine may take longer than the delay to get there).
            await asyncio.wait_for(first_ack.wait(), 30)
            await asyncio.sleep(random.uniform(0.15, 0.6))
            kill()
            killed.set()

        await asyncio.gather(killer(), *(sender() for _ in range(16)))


async def _read_all(namesrv: str) -> dict[int, list[tuple[int, bytes, int]]]:
    state: dict[int, list[tuple[int, bytes, int]]] = {}
    async with AsyncPullClient(namesrv, "crash-reader", timeout_s=5.0) as puller:
        for q in range(QUEUES):
            mq = MessageQueue(TOPIC, BROKER, q)
            offset, rows = 0, []
            while True:
                result = await puller.pull(mq, offset, max_nums=32)
                if result.status != PullStatus.FOUND:
                    assert result.status == PullStatus.NO_NEW_MSG, result
                    break
                rows.extend((m.queue_offset, m.body, m.body_crc) for m in result.messages)
                offset = result.next_begin_offset
            state[q] = rows
    return state


@pytest.mark.slow
def test_sigkill_during_sync_flush_writes_loses_no_acknowledged_message(tmp_path) -> None:
    spec = ClusterSpec(
        str(tmp_path),
        groups=(GroupSpec(BROKER),),
        store_overrides={"flush_disk_type": "SYNC_FLUSH", "commitlog_file_size": 64 * 1024},
    )
    with ProcessCluster(spec) as cluster:
        namesrv = cluster.namesrv_addr
        admin = BlockingMQAdminClient(namesrv, timeout_s=5.0)
        try:
            admin.create_or_update_topic(cluster.addr(BROKER), TopicConfig(TOPIC, QUEUES, QUEUES))
            wait_for_route(admin, TOPIC, 1)
        finally:
            admin.close()

        acked: dict[tuple[int, int], bytes] = {}
        attempted: set[bytes] = set()
        for round_no in range(ROUNDS):
            before = len(acked)
            asyncio.run(_write_until_killed(namesrv, lambda: cluster.kill_broker(BROKER), round_no, acked, attempted))
            assert len(acked) > before, f"round {round_no}: no send was acknowledged before the kill"

            cluster.restart_broker(BROKER)
            state = asyncio.run(_read_all(namesrv))
            for q, rows in state.items():
                assert [off for off, _, _ in rows] == list(range(len(rows))), f"queue {q} offsets not dense"
                for off, body, crc in rows:
                    assert body in attempted, f"queue {q} offset {off} serves a body nobody sent"
                    assert crc == zlib.crc32(body) & 0x7FFFFFFF
            served = {(q, off): body for q, rows in state.items() for off, body, _ in rows}
            missing = [k for k, body in acked.items() if served.get(k) != body]
            assert missing == [], f"round {round_no}: acknowledged messages lost or changed: {missing[:5]}"

            cluster.kill_broker(BROKER)
            cluster.restart_broker(BROKER)
            assert asyncio.run(_read_all(namesrv)) == state, f"round {round_no}: second restart differs"
        cluster.kill_broker(BROKER)
        cluster.restart_broker(BROKER)
        assert cluster.stop_broker(BROKER) == 0
        assert not (tmp_path / BROKER / "abort").exists(), "a clean stop leaves no abort file"


def test_a_sigkilled_sync_flush_broker_restarts_with_nothing_left_to_flush(tmp_path) -> None:
    """What recovery re-checked after the kill is synced before the broker serves: its runtime
    info (``mqadmin brokerStatus``) reads remainHowManyDataToFlush 0 from the first request on."""
    namesrv = NamesrvProc(tmp_path).start()
    broker = BrokerProc(
        tmp_path,
        namesrv.addr,
        "flush-broker",
        0,
        "ASYNC_MASTER",
        store={"flush_disk_type": "SYNC_FLUSH", "commitlog_file_size": 256 * 1024},
    )
    admin = BlockingMQAdminClient(namesrv.addr, timeout_s=5.0)
    try:
        broker.start()
        admin.create_or_update_topic(broker.addr, TopicConfig("FlushTopic", 1, 1))
        wait_for_route(admin, "FlushTopic", 1)
        with SimpleProducer(namesrv.addr, "flush-producer", heartbeat_interval_s=None) as producer:
            for i in range(600):  # ~1.2 MB over five segments
                producer.send(Message("FlushTopic", b"%05d" % i + bytes(2000)))
        before = admin.get_broker_runtime_info(broker.addr)
        assert before["remainHowManyDataToFlush"] == "0" and int(before["commitLogMaxOffset"]) > 1_000_000
        broker.kill()
        broker.start()
        after = admin.get_broker_runtime_info(broker.addr)
        assert after["flushDiskType"] == "SYNC_FLUSH"
        assert after["commitLogMaxOffset"] == before["commitLogMaxOffset"]
        assert after["remainHowManyDataToFlush"] == "0"
        assert "store recovery: RecoveryReport(abnormal=True" in broker.log_text()
    finally:
        admin.close()
        broker.stop()
        namesrv.stop()
