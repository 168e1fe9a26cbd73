"""A broker's 5.x figures in its metrics (docs/metrics.md): ``gantry_grpc_clients`` by client type and
``gantry_pop_inflight`` per group and topic, with Apache's official Python client (SimpleConsumer) on the
cluster's gRPC endpoints; the text format read back by prometheus-client's own parser."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from brokers.engine.client.simple import SimpleProducer
from brokers.engine.common.message import Message
from brokers.engine.metrics.broker_collector import BrokerCollector
from tests.brokers.engine.client._cluster import create_topic
from tests.fixtures.waiting import wait_until
from tests.interop._python_grpc import PythonClients, receive_until

TOPIC, GROUP = "GrpcMetricsTopic", "GrpcMetricsGroup"


def scrape(cluster) -> dict[str, dict[tuple, float]]:
    """name -> {labels as a sorted tuple: value}, summed over the brokers."""
    out: dict[str, dict[tuple, float]] = {}
    for controller in cluster.brokers.values():
        registry = CollectorRegistry()
        registry.register(BrokerCollector(controller, cluster._loop))
        for family in text_string_to_metric_families(generate_latest(registry).decode()):
            for sample in family.samples:
                key = tuple(sorted((k, v) for k, v in sample.labels.items() if k not in ("broker", "cluster")))
                series = out.setdefault(sample.name, {})
                series[key] = series.get(key, 0.0) + sample.value
    return out


def test_grpc_clients_and_pop_inflight(module_cluster, module_admin) -> None:
    create_topic(module_admin, module_cluster, TOPIC, queues=2)
    with SimpleProducer(module_cluster.namesrv_addr, "grpc_metrics_producer", heartbeat_interval_s=None) as producer:
        for i in range(5):
            producer.send(Message(TOPIC, f"m{i}".encode()))
    before = scrape(module_cluster)
    assert before["gantry_grpc_clients"][(("client_type", "SIMPLE_CONSUMER"),)] == 0
    assert not any(dict(k).get("group") == GROUP for k in before.get("gantry_pop_inflight", {}))

    clients = PythonClients(module_cluster.brokers["broker-a"].grpc_addr)
    try:
        consumer = clients.simple(GROUP, TOPIC)
        got = receive_until(consumer, 5)
        inflight_key = (("group", GROUP), ("topic", TOPIC))
        now = scrape(module_cluster)
        assert now["gantry_grpc_clients"][(("client_type", "SIMPLE_CONSUMER"),)] >= 1
        assert now["gantry_pop_inflight"][inflight_key] == 5
        for message in got[:3]:
            consumer.ack(message)
        assert scrape(module_cluster)["gantry_pop_inflight"][inflight_key] == 2
        for message in got[3:]:
            consumer.ack(message)
        assert scrape(module_cluster)["gantry_pop_inflight"][inflight_key] == 0  # the series stays, at 0
    finally:
        clients.close()
    wait_until(
        lambda: scrape(module_cluster)["gantry_grpc_clients"][(("client_type", "SIMPLE_CONSUMER"),)] == 0,
        15,
        "the consumer's session ended at its shutdown",
    )


def test_grpc_calls_by_method_and_status(module_cluster, module_admin) -> None:
    topic = "GrpcCallsTopic"
    create_topic(module_admin, module_cluster, topic, queues=2)
    clients = PythonClients(module_cluster.brokers["broker-a"].grpc_addr)
    try:
        consumer = clients.simple("GrpcCallsGroup", topic)
        consumer.receive(16, 30)  # nothing there: one ReceiveMessage answered MESSAGE_NOT_FOUND
    finally:
        clients.close()
    calls = scrape(module_cluster)["gantry_grpc_calls_total"]
    assert calls[(("code", "OK"), ("method", "QueryRoute"))] >= 1
    assert calls[(("code", "MESSAGE_NOT_FOUND"), ("method", "ReceiveMessage"))] >= 1
    assert calls[(("code", "OK"), ("method", "NotifyClientTermination"))] >= 1
