"""Apache's Java consumers (4.9.8 and 5.5.0), unmodified, reading from Gantry: DefaultMQPushConsumer in
clustering and broadcasting mode with tag filters, and DefaultLitePullConsumer subscribing or assigning
queues, polling and committing. Messages come from Gantry's own Producer."""

from __future__ import annotations

import pytest

from brokers.engine.client import Message, Producer
from brokers.engine.client.simple import PullClient
from tests.interop._java_clients import CLIENTS, JavaClients, create_topic, unique, wait_until


@pytest.fixture
def java(module_java_drivers, module_cluster):
    clients = JavaClients(module_java_drivers, module_cluster.namesrv_addr)
    yield clients
    clients.close()


@pytest.fixture(scope="module")
def producer(module_cluster):
    with Producer("interop_consume_pg", module_cluster.namesrv_addr, instance_name="interop-consume") as producer:
        yield producer


def all_queues(topic: str, queues: int) -> set[tuple[str, str, int]]:
    return {(topic, broker, q) for broker in ("broker-a", "broker-b") for q in range(queues)}


@pytest.mark.parametrize("client", CLIENTS)
def test_push_clustering_shares_the_queues_and_consumes_each_message_once(
    client, java, module_cluster, module_admin, producer, topic_name
):
    create_topic(module_admin, module_cluster, topic_name, queues=2)
    group = unique("g_cluster")
    first, second = (java.push(client, group, topic_name) for _ in range(2))

    def settled():
        a, b = ({q for q in java.queues(n) if q[0] == topic_name} for n in (first, second))
        return a and b and not a & b and a | b == all_queues(topic_name, 2)

    wait_until(settled, 20, "the two Java consumers share the four queues")
    sent = [f"m{i}" for i in range(20)]
    for body in sent:
        producer.send(Message(topic_name, body.encode(), tags="TagA", keys=f"k-{body}", properties={"p": body}))

    def everything():
        got = java.received(first) + java.received(second)
        return got if len(got) >= len(sent) else None

    got = wait_until(everything, 20, "20 messages between the two consumers")
    assert sorted(m["body"] for m in got) == sorted(sent)  # each once
    assert {m["consumer"] for m in got} == {first, second}
    for m in got:
        assert (m["topic"], m["tags"], m["keys"], m["props"]["p"]) == (topic_name, "TagA", f"k-{m['body']}", m["body"])
        assert m["reconsumeTimes"] == 0 and len(m["msgId"]) == 32
    java.shutdown(first)  # a consumer's shutdown persists its offsets on the brokers
    java.shutdown(second)
    with PullClient(module_cluster.namesrv_addr, group, heartbeat_interval_s=None) as puller:
        assert all(
            puller.query_offset(mq) == puller.max_offset(mq) for mq in puller.fetch_subscribe_message_queues(topic_name)
        )


@pytest.mark.parametrize("client", CLIENTS)
def test_push_broadcasting_delivers_every_message_to_every_consumer(
    client, java, module_cluster, module_admin, producer, topic_name
):
    create_topic(module_admin, module_cluster, topic_name, queues=2)
    group = unique("g_broadcast")
    consumers = [java.push(client, group, topic_name, broadcasting=True) for _ in range(2)]
    wait_until(
        lambda: all({q for q in java.queues(n) if q[0] == topic_name} == all_queues(topic_name, 2) for n in consumers),
        20,
        "each broadcasting consumer holds every queue",
    )
    sent = [f"b{i}" for i in range(10)]
    for body in sent:
        producer.send(Message(topic_name, body.encode()))
    for name in consumers:
        got = java.received(name, count=len(sent), timeout_s=20)
        assert sorted(m["body"] for m in got) == sorted(sent)


@pytest.mark.parametrize("client", CLIENTS)
def test_a_tag_subscription_gets_only_its_tags(client, java, module_cluster, module_admin, producer, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=1)
    name = java.push(client, unique("g_tags"), topic_name, expression="TagA || TagC")
    for i in range(12):
        tag = "ABC"[i % 3]
        producer.send(Message(topic_name, f"{tag}{i}".encode(), tags=f"Tag{tag}"))
    wanted = sorted(f"{'ABC'[i % 3]}{i}" for i in range(12) if i % 3 != 1)
    got = java.received(name, count=len(wanted), timeout_s=20)
    assert sorted(m["body"] for m in got) == wanted
    assert {m["tags"] for m in got} == {"TagA", "TagC"}


# 5.x lite pull consumers pull with LITE_PULL_MESSAGE (361), which Gantry's brokers serve as PULL_MESSAGE.
@pytest.mark.parametrize("client", CLIENTS)
def test_lite_pull_subscribe_polls_and_commits(client, java, module_cluster, module_admin, producer, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=2)
    group = unique("g_lite")
    sent = [f"l{i}" for i in range(10)]
    for body in sent:
        producer.send(Message(topic_name, body.encode(), tags="L", keys=body))
    name = java.lite(client, group, topic_name, expression="L", autoCommit=False)
    polled = java.call("poll", name, count=len(sent), timeoutMs=20_000, timeout_s=40)
    assert sorted(m["body"] for m in polled) == sorted(sent)
    assert all(m["keys"] == m["body"] and m["tags"] == "L" for m in polled)
    committed = java.call("commit", name)
    assert sum(q["committed"] for q in committed if q["topic"] == topic_name) == len(sent)
    java.shutdown(name)  # persists the committed offsets on the brokers
    with PullClient(module_cluster.namesrv_addr, group, heartbeat_interval_s=None) as puller:
        assert sum(max(puller.query_offset(mq), 0) for mq in puller.fetch_subscribe_message_queues(topic_name)) == len(
            sent
        )


@pytest.mark.parametrize("client", CLIENTS)
def test_lite_pull_assign_reads_every_queue_of_the_topic(
    client, java, module_cluster, module_admin, producer, topic_name
):
    create_topic(module_admin, module_cluster, topic_name, queues=2)
    sent = [f"a{i}" for i in range(8)]
    for body in sent:
        producer.send(Message(topic_name, body.encode()))
    name = java.lite(client, unique("g_assign"), topic_name, assign=True)
    polled = java.call("poll", name, count=len(sent), timeoutMs=20_000, timeout_s=40)
    assert sorted(m["body"] for m in polled) == sorted(sent)
    assert {m["queueId"] for m in polled} == {0, 1}
