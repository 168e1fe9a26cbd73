"""The cluster harness's process mode: the same spec, each server a ``python -m brokers.engine member``
child; a group with a slave replicates, a killed master recovers its store on the same port."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest

from brokers.engine.client import Message, Producer
from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.cluster import BrokerSpec, ClusterSpec, GroupSpec
from brokers.engine.cluster.processes import ProcessCluster
from brokers.engine.common.topic_config import TopicConfig
from tests.fixtures.waiting import wait_until

SMALL_STORE = {"commitlog_file_size": 1 << 20, "consume_queue_units_per_file": 1000}


def _max_offsets(admin: BlockingMQAdminClient, addr: str) -> int:
    return int(admin.get_broker_runtime_info(addr)["commitLogMaxOffset"])


def test_a_process_group_replicates_and_a_killed_master_comes_back_with_its_store(tmp_path):
    spec = ClusterSpec(
        str(tmp_path),
        groups=(GroupSpec("broker-a", slaves=1),),
        store_overrides=SMALL_STORE,
        broker_overrides={"grpc_port": 0},
    )
    with ProcessCluster(spec) as cluster:
        assert cluster.grpc_addr("broker-a") is not None and cluster.grpc_addr("broker-a#1") is not None
        with BlockingMQAdminClient(cluster.namesrv_addr, timeout_s=3.0) as admin:
            admin.create_or_update_topic_in_cluster(spec.cluster_name, TopicConfig("ProcReplicated", 2, 2))
            wait_until(
                lambda: admin.examine_topic_route_info("ProcReplicated").queue_datas,
                what="a route",
                ignoring=(Exception,),
            )
            with Producer("proc_pg", cluster.namesrv_addr) as producer:
                for i in range(10):
                    producer.send(Message("ProcReplicated", f"m{i}".encode()))
            master_addr = cluster.addr("broker-a")
            written = _max_offsets(admin, master_addr)
            assert written > 0
            wait_until(lambda: _max_offsets(admin, cluster.addr("broker-a#1")) == written, what="the slave caught up")
            assert cluster.kill_broker("broker-a") == -signal.SIGKILL
            cluster.restart_broker("broker-a")
            assert cluster.addr("broker-a") == master_addr
            assert _max_offsets(admin, master_addr) == written
            cluster.wait_slaves_connected()
        assert (tmp_path / "logs" / "broker-a.2.log").exists()
    assert [m.proc.returncode for m in cluster.brokers.values()] == [0, 0]
    assert [m.proc.returncode for m in cluster.namesrvs] == [0]


def test_a_broker_the_spec_does_not_name_runs_as_a_process_and_stalls_on_sigstop(tmp_path):
    spec = ClusterSpec(str(tmp_path), groups=(), store_overrides=SMALL_STORE)
    with ProcessCluster(spec) as cluster:
        member = BrokerSpec(key="gen-0", broker_name="drill-a", role="SYNC_MASTER")
        started = cluster.start_broker("gen-0", member=member, register_interval_s=5.0)
        with BlockingMQAdminClient(cluster.namesrv_addr, timeout_s=3.0) as admin:
            info = admin.get_broker_runtime_info(started.addr)
            assert info["brokerRole"] == "SYNC_MASTER"
            assert (tmp_path / "gen-0" / "commitlog").is_dir()
            ha_addr = started.ha_addr
            again = cluster.restart_broker("gen-0")
            assert (again.addr, again.ha_addr) == (started.addr, ha_addr)
            cluster.signal_broker("gen-0", signal.SIGSTOP)
            try:
                assert again.proc.poll() is None
            finally:
                cluster.signal_broker("gen-0", signal.SIGCONT)
            assert admin.get_broker_runtime_info(again.addr)["brokerRole"] == "SYNC_MASTER"


def test_a_spec_a_child_cannot_read_is_refused_before_anything_starts(tmp_path):
    from brokers.engine.cluster import ClusterSpecError

    spec = ClusterSpec(str(tmp_path / "root"), broker_overrides={"acl_file": tmp_path / "plain_acl.yml"})  # a Path
    with pytest.raises(ClusterSpecError, match="JSON"):
        ProcessCluster(spec)
    assert list(tmp_path.iterdir()) == []


def test_a_bad_launch_file_exits_2_naming_it(tmp_path):
    launch = tmp_path / "nothing.json"
    proc = subprocess.run(
        [sys.executable, "-m", "brokers.engine", "member", str(launch)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2 and str(launch) in proc.stderr
    launch.write_text(json.dumps({"spec": {"root": str(tmp_path), "no_such_field": 1}, "namesrv": 0}))
    proc = subprocess.run(
        [sys.executable, "-m", "brokers.engine", "member", str(launch)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2 and "no_such_field" in proc.stderr


def test_a_stalled_broker_still_stops_cleanly(tmp_path):
    spec = ClusterSpec(str(tmp_path), store_overrides=SMALL_STORE)
    with ProcessCluster(spec) as cluster:
        cluster.signal_broker("broker-a", signal.SIGSTOP)
        assert cluster.stop_broker("broker-a") == 0
        assert not (tmp_path / "broker-a" / "abort").exists()


@pytest.mark.parametrize(
    "fields, named",
    [
        ({"metrics": {"broker-b": {"port": 9100}}}, "metrics['broker-b']: no member"),
        ({"metrics": {"namesrv-1": {"port": 9100}}}, "metrics['namesrv-1']: no member"),
        ({"metrics": {"broker-a": {"port": 0}}}, "metrics['broker-a'].port: 0 is outside 1..65535"),
        ({"metrics": {"broker-a": {"port": "9100"}}}, "metrics['broker-a'].port: expected int"),
        ({"metrics": {"broker-a": {}}}, "metrics['broker-a'].port: required"),
        ({"metrics": {"broker-a": {"port": 9100, "tokn": "x"}}}, "metrics['broker-a']: unknown field(s) tokn"),
        ({"event_loop": "tokio"}, "event_loop must be 'uvloop', 'asyncio' or empty"),
    ],
)
def test_bad_metrics_or_event_loop_settings_are_refused_naming_the_field(tmp_path, fields, named):
    from brokers.engine.cluster import ClusterSpecError

    with pytest.raises(ClusterSpecError) as refused:
        ClusterSpec(str(tmp_path / "root"), **fields)
    assert named in str(refused.value)
    assert list(tmp_path.iterdir()) == []


def test_members_serve_metrics_with_their_token_and_run_the_loop_the_spec_names(tmp_path):
    import urllib.error
    import urllib.request

    from tests.fixtures.ports import free_port

    token = "a-metrics-token-of-the-spec-0123456789"
    (tmp_path / "token").write_text(token + "\n")
    ns_port, broker_port = free_port(), free_port()
    metrics = {"namesrv-0": {"port": ns_port, "token_file": str(tmp_path / "token")}, "broker-a": {"port": broker_port}}
    spec = ClusterSpec(str(tmp_path), store_overrides=SMALL_STORE, metrics=metrics, event_loop="asyncio")
    with ProcessCluster(spec, log_level="INFO") as cluster:
        with urllib.request.urlopen(f"http://127.0.0.1:{broker_port}/metrics", timeout=10) as resp:
            assert b"rocketmq_broker_tps" in resp.read()
        with pytest.raises(urllib.error.HTTPError) as unauthorized:
            urllib.request.urlopen(f"http://127.0.0.1:{ns_port}/metrics", timeout=10)
        assert unauthorized.value.code == 401
        request = urllib.request.Request(
            f"http://127.0.0.1:{ns_port}/metrics", headers={"Authorization": f"Bearer {token}"}
        )
        with urllib.request.urlopen(request, timeout=10) as resp:
            assert b"gantry_namesrv_live_brokers" in resp.read()
        assert "event loop: asyncio)" in cluster.namesrvs[0].log.read_text()
        assert "event loop: asyncio)" in cluster.brokers["broker-a"].log.read_text()


def test_a_bad_metrics_token_file_stops_the_member_naming_the_flag(tmp_path):
    spec = ClusterSpec(str(tmp_path), groups=(), metrics={"namesrv-0": {"port": 9, "token_file": str(tmp_path / "no")}})
    with pytest.raises(RuntimeError, match="--metrics-token-file"):
        ProcessCluster(spec).start()
