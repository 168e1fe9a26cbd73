"""A broker that stops registering vanishes from routes after the expiry, and comes back.

Both servers are real subprocesses (a ProcessCluster). SIGSTOP freezes the broker (its connection stays open, so
only the name server's expiry scan can remove it); SIGCONT lets it register again.
"""

from __future__ import annotations

import signal
import time

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient, MQBrokerError
from brokers.engine.cluster import ClusterSpec, GroupSpec
from brokers.engine.cluster.processes import ProcessCluster
from brokers.engine.common.topic_config import TopicConfig


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
    spec = ClusterSpec(
        str(tmp_path),
        groups=(GroupSpec("broker-x"),),
        namesrv_overrides={"scan_not_active_broker_interval_s": 0.1, "broker_channel_expired_s": 1.5},
        broker_overrides={"register_interval_s": 0.3},
    )
    cluster = ProcessCluster(spec).start()
    admin = BlockingMQAdminClient(cluster.namesrv_addr, timeout_s=2.0)
    try:
        admin.create_or_update_topic(cluster.addr("broker-x"), TopicConfig("ExpiryTopic", 2, 2))
        _wait(lambda: _routed(admin, "ExpiryTopic"), 5)

        cluster.signal_broker("broker-x", signal.SIGSTOP)
        # Registrations every 0.3 s kept it alive; frozen, it is gone once 1.5 s have passed
        # (not at once; how long it takes: bench/latency_bench.py).
        assert _routed(admin, "ExpiryTopic")
        _wait(lambda: not _routed(admin, "ExpiryTopic"), 10)
        assert admin.examine_broker_cluster_info().brokers == ()

        cluster.signal_broker("broker-x", signal.SIGCONT)
        _wait(lambda: _routed(admin, "ExpiryTopic"), 10)
        assert [b.broker_name for b in admin.examine_broker_cluster_info().brokers] == ["broker-x"]
    finally:
        admin.close()
        cluster.signal_broker("broker-x", signal.SIGCONT)
        cluster.stop()
    assert [m.proc.returncode for m in (cluster.brokers["broker-x"], *cluster.namesrvs)] == [0, 0]
