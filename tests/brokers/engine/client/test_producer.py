"""Producer against a real name server and two brokers: send modes, ordering, retries, fault tolerance."""

from __future__ import annotations

import concurrent.futures
import threading
import time

import pytest

from brokers.engine.client import (
    AllocateMessageQueueAveragely,
    ClientConfig,
    Message,
    MessageQueue,
    Producer,
    ProducerConfig,
    SendStatus,
    select_message_queue_by_hash,
)
from brokers.engine.client.latency_fault_tolerance import MQFaultStrategy, compute_not_available_duration
from brokers.engine.client.simple import PullClient, PullStatus
from brokers.engine.common.clock import ManualClock
from brokers.engine.client.allocation import get_strategy
from tests.brokers.engine.client._cluster import EmbeddedCluster, create_topic


def _pull_all(cluster, topic: str) -> list:
    out = []
    with PullClient(cluster.namesrv_addr, heartbeat_interval_s=None) as puller:
        for mq in puller.fetch_subscribe_message_queues(topic):
            offset = 0
            while True:
                result = puller.pull(mq, offset, 32)
                out.extend((mq, m) for m in result.messages)
                if result.status is not PullStatus.FOUND:
                    break
                offset = result.next_begin_offset
    return out


def test_sync_send_returns_id_queue_and_offset(module_cluster, module_admin, producer, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=2)
    results = [producer.send(Message(topic_name, f"m{i}".encode(), tags="T", keys="k")) for i in range(8)]
    assert all(r.status is SendStatus.SEND_OK for r in results)
    assert {r.message_queue for r in results} == {
        MessageQueue(topic_name, b, q) for b in ("broker-a", "broker-b") for q in range(2)
    }
    assert sorted(r.queue_offset for r in results) == [0, 0, 0, 0, 1, 1, 1, 1]
    stored = {m.uniq_key: (mq, m.queue_offset) for mq, m in _pull_all(module_cluster, topic_name)}
    assert stored == {r.msg_id: (r.message_queue, r.queue_offset) for r in results}


def test_async_oneway_and_batch_sends(module_cluster, module_admin, producer, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=2)
    called: list = []
    done = threading.Event()

    def callback(result, error):
        called.append((result, error))
        if len(called) == 10:
            done.set()

    futures = [producer.send_async(Message(topic_name, f"a{i}".encode()), callback) for i in range(10)]
    results = [f.result(10) for f in concurrent.futures.as_completed(futures)]
    assert done.wait(10) and all(e is None for _, e in called)
    assert {r.msg_id for r, _ in called} == {r.msg_id for r in results}
    for i in range(5):
        producer.send_oneway(Message(topic_name, f"o{i}".encode()))
    batch = producer.send_batch([Message(topic_name, f"b{i}".encode()) for i in range(4)])
    assert len(batch.msg_id.split(",")) == 4

    deadline = time.monotonic() + 10
    while True:
        bodies = sorted(m.body.decode() for _, m in _pull_all(module_cluster, topic_name))
        if len(bodies) >= 19 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert bodies == sorted([f"a{i}" for i in range(10)] + [f"o{i}" for i in range(5)] + [f"b{i}" for i in range(4)])
    offsets = sorted(
        m.queue_offset
        for mq, m in _pull_all(module_cluster, topic_name)
        if mq == batch.message_queue and m.body.startswith(b"b")
    )
    assert offsets == list(range(batch.queue_offset, batch.queue_offset + 4))  # one queue, consecutive


def test_ordered_send_keeps_each_key_on_one_queue_in_order(module_cluster, module_admin, producer, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=4)
    queue_of: dict[str, set[MessageQueue]] = {}
    for seq in range(10):
        for key in ("order-1", "order-2", "order-3", "order-42"):
            r = producer.send(Message(topic_name, f"{key}:{seq}".encode(), keys=key), select_message_queue_by_hash, key)
            queue_of.setdefault(key, set()).add(r.message_queue)
    assert all(len(qs) == 1 for qs in queue_of.values())
    by_key: dict[str, list[int]] = {}
    for _, m in sorted(_pull_all(module_cluster, topic_name), key=lambda x: (x[0], x[1].queue_offset)):
        key, seq = m.body.decode().split(":")
        by_key.setdefault(key, []).append(int(seq))
    assert by_key == {k: list(range(10)) for k in queue_of}


def test_sends_go_on_when_a_broker_stops(tmp_path):
    cluster = EmbeddedCluster(tmp_path).start()
    try:
        from brokers.engine.client.admin import BlockingMQAdminClient

        with BlockingMQAdminClient(cluster.namesrv_addr) as admin:
            create_topic(admin, cluster, "StopTopic", queues=2)
        producers = [
            Producer(
                f"stop_producer_{fault}",
                cluster.namesrv_addr,
                client_config=ClientConfig(poll_name_server_interval_s=60),
                config=ProducerConfig(send_latency_fault_enable=fault, send_timeout_s=2.0),
            ).start()
            for fault in (False, True)
        ]
        try:
            for producer in producers:  # both brokers in use (and connected) before the stop
                assert {producer.send(Message("StopTopic", b"before")).message_queue.broker_name for _ in range(4)} == {
                    "broker-a",
                    "broker-b",
                }
            cluster.run(cluster.brokers["broker-b"].stop())
            for producer in producers:
                results = [producer.send(Message("StopTopic", f"after{i}".encode())) for i in range(20)]
                assert all(
                    r.status is SendStatus.SEND_OK and r.message_queue.broker_name == "broker-a" for r in results
                )
            # with fault tolerance, broker-b failed once and is avoided for 30 s
            assert producers[0].fault_strategy.fault_tolerance.is_available("broker-b")
            assert not producers[1].fault_strategy.fault_tolerance.is_available("broker-b")
        finally:
            for producer in producers:
                producer.shutdown()
    finally:
        cluster.stop()


def test_latency_fault_tolerance_avoids_slow_brokers():
    clock = ManualClock()
    strategy = MQFaultStrategy(enabled=True, clock=clock)
    queues = [MessageQueue("T", b, q) for b in ("a", "b") for q in range(2)]
    assert [compute_not_available_duration(ms) for ms in (10, 60, 100, 600, 2000, 3000, 5000, 15000)] == [
        0,
        0,
        0,
        2000,
        5000,
        6000,
        10000,
        30000,
    ]
    strategy.update_fault_item("a", 700, isolation=False)  # avoided 2 s
    assert {strategy.select_one_message_queue(queues, None).broker_name for _ in range(10)} == {"b"}
    clock.advance(2.0)
    assert {strategy.select_one_message_queue(queues, None).broker_name for _ in range(10)} == {"a", "b"}
    strategy.update_fault_item("a", 0, isolation=True)
    strategy.update_fault_item("b", 0, isolation=True)  # every broker avoided: still returns a queue
    assert strategy.select_one_message_queue(queues, None) in queues
    plain = MQFaultStrategy(enabled=False)
    assert {plain.select_one_message_queue(queues, "a").broker_name for _ in range(10)} == {"b"}


@pytest.mark.parametrize("n_queues", [1, 2, 3, 7, 8, 9, 16])
@pytest.mark.parametrize("n_cids", [1, 2, 3, 4, 10])
def test_builtin_avg_equals_the_allocation_package(n_queues, n_cids):
    mqs = sorted(MessageQueue("T", f"broker-{b}", q) for b in "ab" for q in range((n_queues + 1) // 2))[:n_queues]
    cids = sorted(f"10.0.0.{i}@{i}" for i in range(n_cids))
    ours, theirs = AllocateMessageQueueAveragely(), get_strategy("AVG")
    assert ours.name == theirs.name == "AVG"
    for cid in cids:
        assert ours.allocate("g", cid, mqs, cids) == theirs.allocate("g", cid, mqs, cids)
