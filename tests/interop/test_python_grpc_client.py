"""Apache's official 5.x Python client (rocketmq-python-client from PyPI, unmodified) against Gantry's gRPC
endpoint: normal and FIFO sends, SimpleConsumer (no ack -> attempt 2, ack -> never again, change
invisible duration), PushConsumer (FAILURE -> the group's dead-letter topic after its max attempts), a
FIFO group consumed in order, and what the messages carry (tag, keys, properties, message group)."""

from __future__ import annotations

import time

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from tests.interop._grpc_clients import (
    create_fifo_topic,
    create_group,
    create_topic,
    read_topic,
    start_grpc_cluster,
    unique,
)
from tests.interop._python_grpc import (
    PythonClients,
    Recorder,
    message,
    poison_goes_to_the_dead_letter_topic,
    receive_until,
)
from tests.fixtures.waiting import wait_until


@pytest.fixture(scope="module")
def grpc_cluster(tmp_path_factory):
    cluster = start_grpc_cluster(tmp_path_factory.mktemp("python-grpc"))
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def admin(grpc_cluster):
    with BlockingMQAdminClient(grpc_cluster.namesrv_addr) as client:
        yield client


@pytest.fixture
def clients(grpc_cluster):
    made = PythonClients(grpc_cluster.brokers["broker-a"].grpc_addr)
    yield made
    made.close()


def test_send_then_simple_consumer_sees_every_field(grpc_cluster, admin, clients):
    topic, group = unique("py_topic"), unique("py_group")
    create_topic(admin, grpc_cluster, topic)
    producer = clients.producer(topic)
    receipts = [
        producer.send(message(topic, f"body-{i}", tag="TagA", keys=[f"key-{i}"], properties={"color": "red"}))
        for i in range(4)
    ]
    assert all(r.message_id for r in receipts)
    stored = read_topic(grpc_cluster.namesrv_addr, topic, expect=4)  # Gantry's 4.x reader sees what 5.x sent
    assert sorted(m.body for _, m in stored) == [f"body-{i}".encode() for i in range(4)]
    assert {m.properties["UNIQ_KEY"] for _, m in stored} == {r.message_id for r in receipts}

    consumer = clients.simple(group, topic)
    got = receive_until(consumer, 4)
    assert sorted(m.body.decode() for m in got) == [f"body-{i}" for i in range(4)]
    first = next(m for m in got if m.body == b"body-0")
    assert first.tag == "TagA" and first.keys == {"key-0"} and first.properties == {"color": "red"}
    assert first.delivery_attempt == 1 and first.receipt_handle and not first.corrupted
    for m in got:
        consumer.ack(m)


def test_no_ack_comes_again_with_attempt_2_and_ack_never_again(grpc_cluster, admin, clients):
    topic, group = unique("py_topic"), unique("py_group")
    create_topic(admin, grpc_cluster, topic)
    producer = clients.producer(topic)
    producer.send(message(topic, "keep"))
    producer.send(message(topic, "acked"))
    consumer = clients.simple(group, topic)
    first = receive_until(consumer, 2, invisible_s=2)
    consumer.ack(next(m for m in first if m.body == b"acked"))
    again = receive_until(consumer, 1, timeout_s=20, invisible_s=30)
    assert [(m.body, m.delivery_attempt) for m in again] == [(b"keep", 2)]
    consumer.ack(again[0])
    assert consumer.receive(16, 30) == []  # acked twice over: nothing more comes


def test_change_invisible_duration_keeps_it_away_then_brings_it_back(grpc_cluster, admin, clients):
    topic, group = unique("py_topic"), unique("py_group")
    create_topic(admin, grpc_cluster, topic)
    clients.producer(topic).send(message(topic, "later"))
    consumer = clients.simple(group, topic)
    [msg] = receive_until(consumer, 1, invisible_s=2)
    consumer.change_invisible_duration(msg, 6)  # renewed before the 2 s ran out: away for 6 s more
    started = time.monotonic()
    again = receive_until(consumer, 1, timeout_s=20)
    assert time.monotonic() - started > 3
    assert again[0].body == b"later" and again[0].delivery_attempt == 2
    consumer.ack(again[0])


def test_push_consumer_failure_goes_to_the_dead_letter_topic(grpc_cluster, admin, clients):
    topic, group = unique("py_topic"), unique("py_group")
    create_topic(admin, grpc_cluster, topic)
    poison_goes_to_the_dead_letter_topic(admin, grpc_cluster, clients, topic, group)


def test_fifo_group_is_consumed_in_order(grpc_cluster, admin, clients):
    topic, group = unique("py_fifo"), unique("py_fifo_group")
    create_fifo_topic(admin, grpc_cluster, topic)
    create_group(admin, grpc_cluster, group, consume_message_orderly=True)
    producer = clients.producer(topic)
    for i in range(10):
        for key in ("order-a", "order-b"):
            producer.send(message(topic, f"{key}-{i}", group=key))
    listener = Recorder()
    clients.push(group, topic, listener)
    wait_until(lambda: len(listener.deliveries) >= 20, 40, "20 FIFO deliveries")
    for key in ("order-a", "order-b"):
        seen = [body for body, _, g in listener.deliveries if g == key]
        assert seen == [f"{key}-{i}" for i in range(10)]


def test_fifo_topic_refuses_a_normal_message(grpc_cluster, admin, clients):
    topic = unique("py_fifo")
    create_fifo_topic(admin, grpc_cluster, topic)
    producer = clients.producer(topic)
    with pytest.raises(Exception, match="message type"):
        producer.send(message(topic, "no group"))
