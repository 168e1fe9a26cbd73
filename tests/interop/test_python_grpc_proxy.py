"""Apache's official 5.x Python client (rocketmq-python-client from PyPI, unmodified) through the cluster-mode
proxy, ``python -m brokers.engine proxy``: one address in front of two brokers that have no gRPC port of
their own. Sends spread over both brokers; a SimpleConsumer gets every message from both, with
redelivery (attempt 2) and acks; a PushConsumer's FAILURE reaches the group's dead-letter topic; each 5.x
client shows to the brokers as a connection of its own (a member of its group while it heartbeats). With
the ACL on (the brokers' plain_acl.yml given to the proxy too): a signed account sends and consumes, a
wrong secret is refused, an account without PUB may not send."""

from __future__ import annotations


import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from brokers.engine.client.admin import BlockingMQAdminClient
from tests.brokers.engine.acl._acl_cluster import ADMIN, DEMO, SUB_ONLY, acl_text, write_acl
from tests.brokers.engine.client._cluster import EmbeddedCluster
from tests.brokers.engine.proxy._process import start_proxy, stop_proxy
from tests.fixtures.ports import free_port
from tests.interop._grpc_clients import create_topic, read_topic, unique
from tests.interop._python_grpc import PythonClients, message, poison_goes_to_the_dead_letter_topic, receive_until


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    made = EmbeddedCluster(tmp_path_factory.mktemp("proxy-cluster"), broker_names=("broker-a", "broker-b")).start()
    yield made
    made.stop()


@pytest.fixture(scope="module")
def proxy_process(cluster):
    """The proxy (with its /metrics on): (its gRPC address, its metrics port)."""
    metrics_port = free_port()
    proc, addr = start_proxy(cluster.namesrv_addr, "--metrics-port", str(metrics_port))
    yield addr, metrics_port
    stop_proxy(proc)


@pytest.fixture(scope="module")
def proxy(proxy_process):
    return proxy_process[0]


def scrape(metrics_port: int) -> dict[str, dict[tuple, float]]:
    """The proxy's /metrics as Prometheus reads it: name -> {labels: value}."""
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    out: dict[str, dict[tuple, float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return out


@pytest.fixture(scope="module")
def admin(cluster):
    with BlockingMQAdminClient(cluster.namesrv_addr) as client:
        yield client


@pytest.fixture
def clients(proxy):
    made = PythonClients(proxy)
    yield made
    made.close()


def test_sends_spread_over_both_brokers_and_a_simple_consumer_gets_them_all(cluster, admin, clients, proxy_process):
    topic, group = unique("px_topic"), unique("px_group")
    create_topic(admin, cluster, topic)
    producer = clients.producer(topic)
    receipts = [producer.send(message(topic, f"m-{i}")) for i in range(20)]
    assert all(r.message_id for r in receipts)
    stored = read_topic(cluster.namesrv_addr, topic, expect=20)  # Gantry's 4.x reader: both brokers
    assert sorted(m.body for _, m in stored) == sorted(f"m-{i}".encode() for i in range(20))
    assert {mq.broker_name for mq, _ in stored} == {"broker-a", "broker-b"}

    consumer = clients.simple(group, topic)
    got = receive_until(consumer, 20)
    assert sorted(m.body.decode() for m in got) == sorted(f"m-{i}" for i in range(20))
    for m in got:
        consumer.ack(m)
    assert consumer.receive(16, 30) == []
    figures = scrape(proxy_process[1])  # the proxy's own metrics see its clients and their calls
    proxy_labels = {"broker": "proxy", "cluster": ""}

    def figure(name: str, **labels: str) -> float:
        return figures[name][tuple(sorted({**proxy_labels, **labels}.items()))]

    assert figure("gantry_grpc_clients", client_type="PRODUCER") >= 1
    assert figure("gantry_grpc_clients", client_type="SIMPLE_CONSUMER") >= 1
    assert figure("gantry_grpc_calls_total", method="SendMessage", code="OK") >= 20
    assert figure("gantry_grpc_calls_total", method="AckMessage", code="OK") >= 20


def test_no_ack_comes_again_with_attempt_2_through_the_proxy(cluster, admin, clients):
    topic, group = unique("px_topic"), unique("px_group")
    create_topic(admin, cluster, topic)
    producer = clients.producer(topic)
    for body in ("keep-1", "keep-2", "acked-1", "acked-2"):
        producer.send(message(topic, body))
    consumer = clients.simple(group, topic)
    first = receive_until(consumer, 4, invisible_s=2)
    for m in first:
        if m.body.startswith(b"acked"):
            consumer.ack(m)
    again = receive_until(consumer, 2, timeout_s=20, invisible_s=30)
    assert sorted((m.body, m.delivery_attempt) for m in again) == [(b"keep-1", 2), (b"keep-2", 2)]
    for m in again:
        consumer.ack(m)
    assert consumer.receive(16, 30) == []


def test_push_failure_reaches_the_dead_letter_topic_and_members_show_as_connections(cluster, admin, clients):
    topic, group = unique("px_topic"), unique("px_group")
    create_topic(admin, cluster, topic)
    poison_goes_to_the_dead_letter_topic(admin, cluster, clients, topic, group)
    connections = admin.examine_consumer_connection_info(group)  # the brokers see the 5.x client itself
    assert len(connections.connections) == 1
    assert connections.connections[0].language == "PYTHON"


@pytest.fixture(scope="module")
def acl_proxy(tmp_path_factory):
    """A two-broker cluster with the ACL on, and a proxy given the same ACL file: (cluster, admin, address)."""
    root = tmp_path_factory.mktemp("proxy-acl")
    acl_file = str(write_acl(root / "plain_acl.yml", acl_text()))
    made = EmbeddedCluster(
        root / "stores",
        broker_names=("broker-a", "broker-b"),
        namesrv_options={"acl_file": acl_file},
        acl_file=acl_file,
    ).start()
    proc, addr = start_proxy(made.namesrv_addr, "--acl-file", acl_file)
    try:
        with BlockingMQAdminClient(
            made.namesrv_addr, timeout_s=5.0, access_key=ADMIN[0], secret_key=ADMIN[1]
        ) as acl_admin:
            yield made, acl_admin, addr
    finally:
        stop_proxy(proc)
        made.stop()


def test_with_the_acl_signed_calls_pass_a_wrong_secret_and_a_missing_pub_do_not(acl_proxy):
    made, acl_admin, addr = acl_proxy
    topic, group = unique("px_acl"), unique("px_acl_group")
    create_topic(acl_admin, made, topic)
    signed = PythonClients(addr, access_key=DEMO[0], secret_key=DEMO[1])
    forged = PythonClients(addr, access_key=DEMO[0], secret_key="not-the-secret")
    sub_only = PythonClients(addr, access_key=SUB_ONLY[0], secret_key=SUB_ONLY[1])
    try:
        producer = signed.producer(topic)
        for i in range(4):
            producer.send(message(topic, f"signed-{i}"))
        consumer = signed.simple(group, topic)
        got = receive_until(consumer, 4)
        assert sorted(m.body for m in got) == [f"signed-{i}".encode() for i in range(4)]
        for m in got:
            consumer.ack(m)
        with pytest.raises(Exception, match="40100|signature mismatch|failed to fetch topic"):
            forged.producer(topic).send(message(topic, "forged"))
        with pytest.raises(Exception, match="40300|no permission to PUB"):
            sub_only.producer(topic).send(message(topic, "not allowed"))
        assert acl_admin.examine_topic_stats(topic).total_messages == 4  # the refused ones stored nothing
    finally:
        for clients in (signed, forged, sub_only):
            clients.close()
