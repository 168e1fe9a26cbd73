"""The brokers' and name servers' ``/metrics`` (docs/metrics.md), on real processes: the text format
parsed by prometheus-client's own parser, rocketmq-exporter's names, a lagging group's
``rocketmq_group_diff`` equal to ``mqadmin consumerProgress``'s Diff Total, loopback by default,
bad flags refused naming the flag."""

from __future__ import annotations

import io
import socket
import subprocess
import sys
import urllib.request

import pytest
from django.core.management import call_command
from prometheus_client.parser import text_string_to_metric_families

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.client.simple import PullClient, SimpleProducer
from brokers.engine.common.message import Message
from brokers.engine.common.topic_config import TopicConfig
from tests.brokers.engine._group_procs import ROOT, BrokerProc, NamesrvProc
from tests.brokers.engine.client._cluster import wait_for_route
from tests.fixtures.ports import free_port

TOPIC, GROUP = "MetricsLagTopic", "MetricsLagGroup"


@pytest.fixture(scope="module")
def procs(tmp_path_factory):
    root = tmp_path_factory.mktemp("metrics-procs")
    ns_metrics_port = free_port()
    namesrv = NamesrvProc(root, metrics={"port": ns_metrics_port})
    namesrv.start()
    metrics_port = free_port()
    broker = BrokerProc(root, namesrv.addr, "broker-m", 0, "ASYNC_MASTER", metrics={"port": metrics_port})
    try:
        broker.start()
        yield namesrv, broker
    finally:
        broker.stop()
        namesrv.stop()


def scrape(port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
        assert resp.status == 200 and resp.headers["Content-Type"].startswith("text/plain")
        return {f.name: f for f in text_string_to_metric_families(resp.read().decode())}


def test_name_server_scrape_parses(procs):
    namesrv, _broker = procs
    families = scrape(namesrv.metrics_port)
    assert families["gantry_namesrv_live_brokers"].samples[0].value == 1
    assert {"gantry_request_latency_seconds", "gantry_refusals", "gantry_open_connections"} <= families.keys()
    codes = {s.labels["code"] for s in families["gantry_request_latency_seconds"].samples}
    assert "103" in codes  # REGISTER_BROKER was answered


def test_lagging_group_diff_equals_consumer_progress(procs):
    namesrv, broker = procs
    admin = BlockingMQAdminClient(namesrv.addr)
    try:
        admin.create_or_update_topic(f"127.0.0.1:{broker.port}", TopicConfig(TOPIC, 1, 1))
        wait_for_route(admin, TOPIC, 1)
    finally:
        admin.close()
    with SimpleProducer(namesrv.addr, "metrics_test_producer", heartbeat_interval_s=None) as producer:
        for i in range(10):
            producer.send(Message(TOPIC, f"m{i}".encode()))
    with PullClient(namesrv.addr, GROUP, heartbeat_interval_s=None) as puller:
        puller.subscribe(TOPIC, "*")
        (mq,) = puller.fetch_subscribe_message_queues(TOPIC)
        assert len(puller.pull(mq, 0, max_nums=4).messages) == 4
        puller.update_offset(mq, 4)  # consumed 4 of 10
        out = io.StringIO()
        call_command("mqadmin", "consumerProgress", "-g", GROUP, "-t", TOPIC, "-n", namesrv.addr, stdout=out)
    progress_total = int(out.getvalue().split("Consume Diff Total:")[1].split()[0])
    assert progress_total == 6
    families = scrape(broker.metrics_port)
    diff = {(s.labels["group"], s.labels["topic"]): s for s in families["rocketmq_group_diff"].samples}
    sample = diff[(GROUP, TOPIC)]
    assert sample.value == progress_total
    assert (
        set(sample.labels) == {"group", "topic", "countOfOnlineConsumers", "msgModel"}
        and sample.labels["msgModel"] == "1"
    )
    offsets = {s.labels["topic"]: s.value for s in families["rocketmq_producer_offset"].samples}
    assert offsets[TOPIC] == 10
    consumer = [s for s in families["rocketmq_consumer_offset"].samples if s.labels["group"] == GROUP]
    assert [(s.labels["cluster"], s.labels["broker"], s.labels["topic"], s.value) for s in consumer] == [
        ("DefaultCluster", "broker-m", TOPIC, 4)
    ]
    assert families["rocketmq_brokeruntime_msg_put_total_today_now"].samples[0].value >= 10
    assert set(families["rocketmq_brokeruntime_put_tps60"].samples[0].labels) == {
        "cluster",
        "brokerIP",
        "brokerHost",
        "des",
        "boottime",
        "broker_version",
    }
    assert {
        "rocketmq_producer_tps",
        "rocketmq_producer_message_size",
        "rocketmq_consumer_tps",
        "rocketmq_broker_tps",
        "rocketmq_broker_qps",
        "rocketmq_group_get_latency_by_storetime",
        "gantry_store_flush_latency_seconds",
        "gantry_request_latency_seconds",
        "gantry_open_connections",
        "gantry_refusals",
    } <= families.keys()


def test_metrics_port_binds_loopback_by_default(procs):
    _namesrv, broker = procs
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: it only picks the outgoing interface's address
        own = probe.getsockname()[0]
    except OSError:
        own = "127.0.0.1"
    finally:
        probe.close()
    if own.startswith("127."):
        pytest.skip("this machine has no non-loopback address to probe")
    with pytest.raises(OSError):
        socket.create_connection((own, broker.metrics_port), timeout=2).close()


@pytest.mark.parametrize(
    "argv, flag",
    [
        (["broker", "--name", "b", "--store-dir", "unused", "--metrics-port", "70000"], "--metrics-port"),
        (["broker", "--name", "b", "--store-dir", "unused", "--metrics-port", "x1"], "--metrics-port"),
        (["namesrv", "--port", "0", "--metrics-port", "9100", "--metrics-host", "metrics.example"], "--metrics-host"),
    ],
)
def test_bad_metrics_flags_are_refused_naming_the_flag(argv, flag):
    done = subprocess.run(
        [sys.executable, "-m", "brokers.engine", *argv], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2, done.stderr
    assert flag in done.stderr and "Traceback" not in done.stderr
