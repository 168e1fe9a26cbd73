"""Apache's 5.x gRPC Java client's PushConsumer against Gantry's 5.x endpoint: it gets every message once
when its listener answers SUCCESS; a message its listener answers FAILURE is delivered again with a
growing delivery attempt, up to the group's max attempts (retryMaxTimes + 1, the settings the endpoint
sends), and then lands in the group's dead-letter topic ``%DLQ%<group>``, read back with Gantry's PullClient.
On a FIFO group each message group arrives in order; a failing message is retried by the client itself and,
after the last attempt, forwarded to the dead-letter topic (ForwardMessageToDeadLetterQueue) before the
group goes on."""

from __future__ import annotations

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from tests.brokers.engine.client._cluster import wait_for_route
from tests.interop._grpc_clients import (
    GRPC,
    GrpcClients,
    create_fifo_topic,
    create_group,
    create_topic,
    endpoints,
    read_topic,
    start_grpc_cluster,
    unique,
)

DLQ_PREFIX = "%DLQ%"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    cluster = start_grpc_cluster(tmp_path_factory.mktemp("grpc-push-cluster"))
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def admin(cluster):
    with BlockingMQAdminClient(cluster.namesrv_addr, timeout_s=5.0) as client:
        yield client


@pytest.fixture
def grpc(module_java_drivers, cluster):
    clients = GrpcClients(module_java_drivers[GRPC], endpoints=endpoints(cluster))
    yield clients
    clients.close()


def test_a_push_consumer_gets_every_message_once(grpc, cluster, admin, topic_name):
    create_topic(admin, cluster, topic_name, queues=2)
    group = create_group(admin, cluster, unique("g_push"))
    consumer = grpc.push(group, topic_name)
    grpc.send(
        grpc.producer(topic_name),
        *[{"topic": topic_name, "body": f"p{i}", "tag": "T", "keys": [f"k{i}"]} for i in range(6)],
    )
    got = grpc.received(consumer, count=6, timeout_s=30)
    assert sorted(m["body"] for m in got) == [f"p{i}" for i in range(6)]
    assert {m["deliveryAttempt"] for m in got} == {1}
    assert {m["tag"] for m in got} == {"T"} and sorted(k for m in got for k in m["keys"]) == [f"k{i}" for i in range(6)]


def test_a_push_consumer_filters_by_tag(grpc, cluster, admin, topic_name):
    create_topic(admin, cluster, topic_name, queues=2)
    group = create_group(admin, cluster, unique("g_push_tag"))
    consumer = grpc.push(group, topic_name, filter="Wanted")
    grpc.send(
        grpc.producer(topic_name),
        *[{"topic": topic_name, "body": f"b{i}", "tag": "Wanted" if i < 2 else "Other"} for i in range(4)],
    )
    got = grpc.received(consumer, count=2, timeout_s=30)
    assert sorted(m["body"] for m in got) == ["b0", "b1"]
    assert len(grpc.received(consumer, count=3, timeout_s=3)) == 2, "an Other message reached a Wanted subscription"


def test_failure_until_max_attempts_dead_letters_the_message(grpc, cluster, admin, topic_name):
    create_topic(admin, cluster, topic_name, queues=1)
    group = create_group(admin, cluster, unique("g_doomed"), retry_max_times=2)  # at most 3 delivery attempts
    consumer = grpc.push(group, topic_name, failBodies=["doomed"])
    grpc.send(
        grpc.producer(topic_name),
        {"topic": topic_name, "body": "doomed", "keys": ["doom-key"]},
        {"topic": topic_name, "body": "fine"},
    )

    def attempts() -> list[int]:
        return [m["deliveryAttempt"] for m in grpc.received(consumer) if m["body"] == "doomed"]

    grpc.received(consumer, count=4, timeout_s=120)  # "fine" once, "doomed" three times
    wait_for_route(admin, DLQ_PREFIX + group, 1, timeout_s=30)  # the broker registers the new DLQ topic
    (dead,) = [m for _mq, m in read_topic(cluster.namesrv_addr, DLQ_PREFIX + group, expect=1, timeout_s=60)]
    assert dead.body == b"doomed" and dead.keys == "doom-key"
    assert attempts() == [1, 2, 3]
    assert [m["result"] for m in grpc.received(consumer) if m["body"] == "fine"] == ["SUCCESS"]
    assert grpc.received(consumer, count=5, timeout_s=5) and attempts() == [1, 2, 3], "delivered again after the DLQ"


def test_a_fifo_push_consumer_gets_each_message_group_in_order(grpc, cluster, admin, topic_name):
    create_fifo_topic(admin, cluster, topic_name, queues=2)
    group = create_group(admin, cluster, unique("g_push_fifo"), consume_message_orderly=True)
    consumer = grpc.push(group, topic_name)
    grpc.send(
        grpc.producer(topic_name),
        *[{"topic": topic_name, "body": f"{g}-{i}", "messageGroup": g} for i in range(5) for g in ("alpha", "beta")],
    )
    got = grpc.received(consumer, count=10, timeout_s=40)
    for g in ("alpha", "beta"):
        assert [m["body"] for m in got if m["messageGroup"] == g] == [f"{g}-{i}" for i in range(5)]
    assert {m["deliveryAttempt"] for m in got} == {1}


def test_a_fifo_push_consumer_dead_letters_a_failing_message_and_goes_on_in_order(grpc, cluster, admin, topic_name):
    create_fifo_topic(admin, cluster, topic_name, queues=1)
    group = create_group(admin, cluster, unique("g_fifo_doomed"), consume_message_orderly=True, retry_max_times=2)
    consumer = grpc.push(group, topic_name, failBodies=["f-1"])
    grpc.send(
        grpc.producer(topic_name), *[{"topic": topic_name, "body": f"f-{i}", "messageGroup": "one"} for i in range(3)]
    )
    got = grpc.received(consumer, count=5, timeout_s=120)
    assert [(m["body"], m["deliveryAttempt"]) for m in got] == [
        ("f-0", 1),
        ("f-1", 1),
        ("f-1", 2),
        ("f-1", 3),
        ("f-2", 1),
    ]
    wait_for_route(admin, DLQ_PREFIX + group, 1, timeout_s=30)
    (dead,) = [m for _mq, m in read_topic(cluster.namesrv_addr, DLQ_PREFIX + group, expect=1, timeout_s=60)]
    assert dead.body == b"f-1"
