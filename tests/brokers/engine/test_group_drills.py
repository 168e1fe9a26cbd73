"""Broker-group drills 4 and 6 with real processes (``python -m brokers.engine namesrv|broker``).

4. A slave stopped while its master takes messages catches up after its restart; a fresh slave
   added to a group that holds data catches up from nothing (bench/ha_catchup_bench.py times
   a 1 GiB catch-up; here a few MiB).
6. A SYNC_MASTER whose slave is stopped answers sends SLAVE_NOT_AVAILABLE; with its slave stalled
   by SIGSTOP, FLUSH_SLAVE_TIMEOUT (after ``--sync-flush-timeout-ms``); every such message is
   readable on the master.
"""

from __future__ import annotations

from functools import partial

import pytest

from brokers.engine.client import ClientConfig, Message, Producer, SendStatus
from brokers.engine.client.simple import PullClient, PullStatus
from brokers.engine.common.message_queue import MessageQueue
from tests.brokers.engine._group_procs import BrokerProc, NamesrvProc, create_topic, runtime_info
from tests.fixtures import waiting

wait_until = partial(waiting.wait_until, every_s=0.1, ignoring=(Exception,))  # a server starting or gone: not yet

TOPIC = "GroupDrill"
QUEUES = 4


def _max_phy(addr: str) -> int:
    return int(runtime_info(addr).get("commitLogMaxOffset", "-1"))


def _caught_up(master: BrokerProc, slave: BrokerProc) -> bool:
    return _max_phy(slave.addr) == _max_phy(master.addr) > 0


def _send(producer: Producer, start: int, count: int, size: int = 512) -> list:
    pad = b"x" * size
    return [producer.send(Message(TOPIC, b"%d|" % i + pad)) for i in range(start, start + count)]


@pytest.mark.slow
def test_a_stopped_slave_and_a_fresh_slave_catch_up(tmp_path):
    ns = NamesrvProc(tmp_path).start()
    master = BrokerProc(
        tmp_path, ns.addr, "broker-a", 0, "ASYNC_MASTER", store={"commitlog_file_size": 4 << 20}
    ).start()
    slave = BrokerProc(tmp_path, ns.addr, "broker-a", 1, "SLAVE", store={"commitlog_file_size": 4 << 20}).start()
    producer = None
    fresh = None
    try:
        create_topic(master.addr, TOPIC, QUEUES)
        producer = Producer("group_drill_pg", ns.addr, client_config=ClientConfig()).start()
        _send(producer, 0, 500)
        wait_until(lambda: _caught_up(master, slave), 20, "the slave follows")
        slave.stop()
        sent_while_down = 5000  # crosses several 4 MiB segments
        results = _send(producer, 500, sent_while_down)
        assert {r.status for r in results} == {SendStatus.SEND_OK}  # ASYNC_MASTER: no wait for a slave
        slave.start()
        wait_until(lambda: _caught_up(master, slave), 30, f"the restarted slave catches up {sent_while_down} messages")
        fresh = BrokerProc(tmp_path, ns.addr, "broker-a", 2, "SLAVE", store={"commitlog_file_size": 4 << 20}).start()
        wait_until(lambda: _caught_up(master, fresh), 30, "a fresh slave catches up from nothing")
        slave_info, master_info = runtime_info(fresh.addr), runtime_info(master.addr)
        assert slave_info["brokerRole"] == "SLAVE" and master_info["haSlaveCount"] == "2"
    finally:
        if producer is not None:
            producer.shutdown()
        for p in (fresh, slave, master, ns):
            if p is not None:
                p.stop()
    # the logs of all three replicas are identical byte for byte
    for name in ("commitlog",):
        mine = sorted((p.name, p.read_bytes()) for p in (master.store_dir / name).iterdir())
        for replica in (slave, fresh):
            assert sorted((p.name, p.read_bytes()) for p in (replica.store_dir / name).iterdir()) == mine


@pytest.mark.slow
def test_sync_master_answers_slave_not_available_and_flush_slave_timeout_and_keeps_every_message(tmp_path):
    ns = NamesrvProc(tmp_path).start()
    master = BrokerProc(tmp_path, ns.addr, "broker-a", 0, "SYNC_MASTER", store={"sync_flush_timeout_ms": 300}).start()
    slave = BrokerProc(tmp_path, ns.addr, "broker-a", 1, "SLAVE").start()
    producer = None
    try:
        create_topic(master.addr, TOPIC, QUEUES)
        wait_until(lambda: runtime_info(master.addr).get("haSlaveCount") == "1", 15, "the slave connected")
        producer = Producer("group_drill_pg", ns.addr, client_config=ClientConfig()).start()
        ok = _send(producer, 0, 20)
        assert {r.status for r in ok} == {SendStatus.SEND_OK}

        slave.pause()  # SIGSTOP: connected but silent
        stalled = _send(producer, 20, 5)
        assert {r.status for r in stalled} == {SendStatus.FLUSH_SLAVE_TIMEOUT}
        slave.resume()
        wait_until(lambda: _caught_up(master, slave), 20, "the slave resumes")

        slave.stop()
        wait_until(lambda: runtime_info(master.addr).get("haSlaveCount") == "0", 15, "the master sees no slave")
        alone = _send(producer, 25, 10)
        assert {r.status for r in alone} == {SendStatus.SLAVE_NOT_AVAILABLE}

        with PullClient(ns.addr, heartbeat_interval_s=None) as puller:  # each of them is on the master
            for r in stalled + alone:
                result = puller.pull(
                    MessageQueue(TOPIC, "broker-a", r.message_queue.queue_id), r.queue_offset, max_nums=1
                )
                assert result.status is PullStatus.FOUND and result.messages[0].msg_id == r.offset_msg_id, r
    finally:
        if producer is not None:
            producer.shutdown()
        for p in (slave, master, ns):
            p.stop()
