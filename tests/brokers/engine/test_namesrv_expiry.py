"""A broker that stops registering vanishes from routes after the expiry, and comes back.

Both servers are real subprocesses. SIGSTOP freezes the broker (its connection stays open, so
only the name server's expiry scan can remove it); SIGCONT lets it register again.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient, MQBrokerError
from brokers.engine.common.topic_config import TopicConfig
from tests.fixtures.ports import free_ports

ROOT = Path(__file__).resolve().parents[3]


def _spawn(argv: list[str], log: Path) -> subprocess.Popen:
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "brokers.engine", *argv], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT
        )
    deadline = time.monotonic() + 30
    while not re.search(rb"\bready\b", log.read_bytes()):  # not "address already in use"
        assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.02)
    return proc


def _wait(predicate, timeout_s: float) -> None:
    """Poll until ``predicate()`` holds; fail after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.05)


def _routed(admin: BlockingMQAdminClient, topic: str) -> bool:
    try:
        return bool(admin.examine_topic_route_info(topic).queue_datas)
    except MQBrokerError:
        return False


@pytest.mark.slow
def test_routes_vanish_after_expiry_and_return_on_registration(tmp_path) -> None:
    ns_port, broker_port = free_ports(2)
    namesrv = _spawn(
        ["namesrv", "--port", str(ns_port), "--scan-interval", "0.1", "--expire", "1.5"], tmp_path / "ns.log"
    )
    broker = _spawn(
        [
            "broker",
            "--name",
            "broker-x",
            "--port",
            str(broker_port),
            "--namesrv",
            f"127.0.0.1:{ns_port}",
            "--store-dir",
            str(tmp_path / "store"),
            "--register-interval",
            "0.3",
        ],
        tmp_path / "broker.log",
    )
    admin = BlockingMQAdminClient(f"127.0.0.1:{ns_port}", timeout_s=2.0)
    try:
        admin.create_or_update_topic(f"127.0.0.1:{broker_port}", TopicConfig("ExpiryTopic", 2, 2))
        _wait(lambda: _routed(admin, "ExpiryTopic"), 5)

        broker.send_signal(signal.SIGSTOP)
        # Registrations every 0.3 s kept it alive; frozen, it is gone once 1.5 s have passed
        # (not at once; how long it takes: bench/latency_bench.py).
        assert _routed(admin, "ExpiryTopic")
        _wait(lambda: not _routed(admin, "ExpiryTopic"), 10)
        assert admin.examine_broker_cluster_info().brokers == ()

        broker.send_signal(signal.SIGCONT)
        _wait(lambda: _routed(admin, "ExpiryTopic"), 10)
        assert [b.broker_name for b in admin.examine_broker_cluster_info().brokers] == ["broker-x"]
    finally:
        admin.close()
        broker.send_signal(signal.SIGCONT)
        for proc in (broker, namesrv):
            proc.terminate()
            assert proc.wait(30) == 0
