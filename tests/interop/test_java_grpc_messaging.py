"""Apache's official 5.x gRPC Java client (rocketmq-client-java, unmodified) against Gantry's 5.x endpoint
(``apache.rocketmq.v2.MessagingService`` on a broker's ``grpc_port``): its Producer sends normal and FIFO
messages, and its SimpleConsumer receives them with what was sent (tag, keys, properties, message group),
in order for a FIFO group, one consumer at a time, redelivered when not acked (delivery attempt 2), never
again once acked, and hidden for as long as ChangeInvisibleDuration says."""

from __future__ import annotations

import time

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from tests.fixtures.interop import JavaDriverError
from tests.fixtures.waiting import wait_until
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

MIN_INVISIBLE_MS = 10_000  # the smallest invisible duration Apache's proxy takes in a ReceiveMessage


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    cluster = start_grpc_cluster(tmp_path_factory.mktemp("grpc-cluster"))
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


def test_the_driver_runs_apaches_grpc_client(module_java_drivers):
    assert module_java_drivers[GRPC].call("version").startswith("5.")


def test_an_unknown_client_is_refused_by_name(grpc):
    with pytest.raises(JavaDriverError, match="no client named nobody"):
        grpc.driver.call("simple_receive", name="nobody")


def test_normal_messages_arrive_with_their_tag_keys_and_properties(grpc, cluster, admin, topic_name):
    create_topic(admin, cluster, topic_name, queues=2)
    group = create_group(admin, cluster, unique("g_plain"))
    tag_a = create_group(admin, cluster, unique("g_tag"))
    everything = grpc.simple(group, topic_name)
    only_a = grpc.simple(tag_a, topic_name, filter="TagA || TagC")
    producer = grpc.producer(topic_name)
    sent = [
        {
            "topic": topic_name,
            "body": f"n{i}",
            "tag": "TagA" if i % 2 == 0 else "TagB",
            "keys": [f"k{i}", "shared"],
            "properties": {"color": "red", "index": str(i)},
        }
        for i in range(4)
    ]
    receipts = grpc.send(producer, *sent)
    ids = [r["messageId"] for r in receipts]
    assert len(set(ids)) == 4 and all(ids), receipts

    got = {m["body"]: m for m in grpc.receive_until(everything, 4)}
    assert sorted(got) == ["n0", "n1", "n2", "n3"]
    for i, spec in enumerate(sent):
        message = got[spec["body"]]
        assert message["messageId"] == ids[i]
        assert message["topic"] == topic_name
        assert message["tag"] == spec["tag"]
        assert sorted(message["keys"]) == sorted(spec["keys"])
        assert {k: message["properties"].get(k) for k in ("color", "index")} == spec["properties"]
        assert message["deliveryAttempt"] == 1
        assert message["messageGroup"] is None
    for message in got.values():
        grpc.ack(everything, message)

    filtered = grpc.receive_until(only_a, 2)
    assert sorted(m["body"] for m in filtered) == ["n0", "n2"]
    assert not grpc.receive(only_a), "TagB messages reached a TagA || TagC subscription"

    stored = {m.body.decode(): m for _mq, m in read_topic(cluster.namesrv_addr, topic_name, expect=4)}
    assert stored["n1"].tags == "TagB" and set(stored["n1"].keys.split()) == {"k1", "shared"}
    assert stored["n1"].properties["color"] == "red"
    assert stored["n1"].uniq_key == ids[1]  # the client's message id is the stored UNIQ_KEY


def test_fifo_messages_keep_their_group_and_queue(grpc, cluster, admin, topic_name):
    create_fifo_topic(admin, cluster, topic_name, queues=4)
    producer = grpc.producer(topic_name)
    receipts = grpc.send(
        producer, *[{"topic": topic_name, "body": f"f{i}", "messageGroup": "order-7"} for i in range(5)]
    )
    assert len({(r["brokerName"], r["queueId"]) for r in receipts}) == 1, (
        f"one message group, several queues: {receipts}"
    )
    offsets = [r["offset"] for r in receipts]
    assert offsets == sorted(offsets)
    stored = [m for _mq, m in read_topic(cluster.namesrv_addr, topic_name, expect=5)]
    assert [m.body.decode() for m in stored] == [f"f{i}" for i in range(5)]
    assert {m.properties.get("__SHARDINGKEY") for m in stored} == {"order-7"}  # Apache's property for the group


def test_a_fifo_group_is_consumed_in_order_by_one_consumer_at_a_time(grpc, cluster, admin, topic_name):
    create_fifo_topic(admin, cluster, topic_name, queues=2)
    group = create_group(admin, cluster, unique("g_fifo"), consume_message_orderly=True)
    first, second = grpc.simple(group, topic_name), grpc.simple(group, topic_name)
    producer = grpc.producer(topic_name)
    grpc.send(
        producer,
        *[{"topic": topic_name, "body": f"{g}-{i}", "messageGroup": g} for i in range(3) for g in ("alpha", "beta")],
    )

    held = grpc.receive_until(first, 1, invisible_ms=30_000)
    held_groups = {m["messageGroup"] for m in held}
    for g in held_groups:  # each group's first delivery is its first message
        assert [m["body"] for m in held if m["messageGroup"] == g][0] == f"{g}-0", held
    meanwhile = grpc.receive(second, invisible_ms=30_000)
    overlap = [m["body"] for m in meanwhile if m["messageGroup"] in held_groups]
    assert not overlap, f"{overlap} went to a second consumer while the first held {[m['body'] for m in held]} unacked"

    order: dict[str, list[str]] = {"alpha": [], "beta": []}
    for message in held + meanwhile:
        order[message["messageGroup"]].append(message["body"])
        grpc.ack(first if message in held else second, message)

    def everything_acked():
        for consumer in (first, second):
            for message in grpc.receive(consumer, invisible_ms=30_000):
                order[message["messageGroup"]].append(message["body"])
                grpc.ack(consumer, message)
        return sum(map(len, order.values())) >= 6

    wait_until(everything_acked, 40, "all six FIFO messages")
    assert order == {g: [f"{g}-{i}" for i in range(3)] for g in ("alpha", "beta")}


def test_a_message_not_acked_comes_back_with_attempt_2_and_once_acked_never_again(grpc, cluster, admin, topic_name):
    create_topic(admin, cluster, topic_name, queues=1)
    group = create_group(admin, cluster, unique("g_redeliver"))
    consumer = grpc.simple(group, topic_name)
    grpc.send(grpc.producer(topic_name), {"topic": topic_name, "body": "again"})
    (first,) = grpc.receive_until(consumer, 1, invisible_ms=MIN_INVISIBLE_MS)
    assert first["deliveryAttempt"] == 1

    (second,) = grpc.receive_until(consumer, 1, timeout_s=60, invisible_ms=MIN_INVISIBLE_MS)
    assert (second["body"], second["messageId"], second["deliveryAttempt"]) == ("again", first["messageId"], 2)
    assert second["receiptHandle"] != first["receiptHandle"]
    grpc.ack(consumer, second)

    deadline = time.monotonic() + MIN_INVISIBLE_MS / 1000 + 4  # past the invisible time the ack ended
    while time.monotonic() < deadline:
        assert grpc.receive(consumer, invisible_ms=MIN_INVISIBLE_MS) == [], "an acked message was delivered again"


def test_change_invisible_duration_brings_a_message_back_sooner(grpc, cluster, admin, topic_name):
    create_topic(admin, cluster, topic_name, queues=1)
    group = create_group(admin, cluster, unique("g_sooner"))
    consumer = grpc.simple(group, topic_name)
    grpc.send(grpc.producer(topic_name), {"topic": topic_name, "body": "soon"})
    (message,) = grpc.receive_until(consumer, 1, invisible_ms=120_000)
    old_handle = message["receiptHandle"]
    assert grpc.change_invisible(consumer, message, 1_000) != old_handle

    (back,) = grpc.receive_until(consumer, 1, timeout_s=30, invisible_ms=MIN_INVISIBLE_MS)  # well before 120 s
    assert (back["body"], back["messageId"], back["deliveryAttempt"]) == ("soon", message["messageId"], 2)
    grpc.ack(consumer, back)


def test_change_invisible_duration_keeps_a_message_hidden_longer_and_its_new_handle_acks(
    grpc, cluster, admin, topic_name
):
    create_topic(admin, cluster, topic_name, queues=1)
    group = create_group(admin, cluster, unique("g_longer"))
    consumer = grpc.simple(group, topic_name)
    grpc.send(grpc.producer(topic_name), {"topic": topic_name, "body": "later"})
    (message,) = grpc.receive_until(consumer, 1, invisible_ms=MIN_INVISIBLE_MS)
    grpc.change_invisible(consumer, message, 120_000)

    deadline = time.monotonic() + MIN_INVISIBLE_MS / 1000 + 4  # past the first invisible duration
    while time.monotonic() < deadline:
        assert grpc.receive(consumer, invisible_ms=MIN_INVISIBLE_MS) == [], (
            "came back after the first invisible duration"
        )
    grpc.ack(consumer, message)  # with the handle ChangeInvisibleDuration answered


def test_an_sql92_subscription_gets_only_the_matching_messages(grpc, cluster, admin, topic_name):
    create_topic(admin, cluster, topic_name, queues=2)
    group = create_group(admin, cluster, unique("g_sql"))
    consumer = grpc.simple(group, topic_name, sql="amount > 10 AND region = 'north'")
    grpc.send(
        grpc.producer(topic_name),
        *[
            {
                "topic": topic_name,
                "body": f"q{amount}-{region}",
                "properties": {"amount": str(amount), "region": region},
            }
            for amount in (5, 20, 30)
            for region in ("north", "south")
        ],
    )
    got = grpc.receive_until(consumer, 2)
    assert sorted(m["body"] for m in got) == ["q20-north", "q30-north"]
    for message in got:
        grpc.ack(consumer, message)
    assert grpc.receive(consumer) == [], "a message the expression does not match was delivered"


def test_a_producer_on_a_topic_that_does_not_exist_is_refused_by_name(grpc):
    missing = unique("T_missing")
    with pytest.raises(JavaDriverError) as refused:
        grpc.producer(missing, maxAttempts=1)
    assert "NotFoundException" in refused.value.message and missing in refused.value.message, refused.value


def test_the_route_tells_the_client_a_fifo_topic_takes_only_fifo_messages(grpc, cluster, admin, topic_name):
    """The client checks a message's type against the accept types the route gave for its queues."""
    create_fifo_topic(admin, cluster, topic_name, queues=1)
    producer = grpc.producer(topic_name, maxAttempts=1)
    with pytest.raises(JavaDriverError) as refused:
        grpc.send(producer, {"topic": topic_name, "body": "no group"})
    assert "Current message type not match with topic accept message types" in refused.value.message, refused.value
    assert "actualMessageType=NORMAL" in refused.value.message and "FIFO" in refused.value.message, refused.value
    assert len(grpc.send(producer, {"topic": topic_name, "body": "grouped", "messageGroup": "g"})) == 1
