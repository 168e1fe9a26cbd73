"""``manage.py run_cluster`` as a subprocess: ready line, both brokers registered, clean SIGTERM."""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.client.simple import SimpleProducer
from brokers.engine.common.message import Message
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.remoting.blocking import BlockingRemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand

from tests.fixtures.ports import free_ports

ROOT = Path(__file__).resolve().parents[2]


def start(*args: str) -> tuple[subprocess.Popen, queue.Queue]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "console.settings", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "run_cluster", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue = queue.Queue()

    def pump() -> None:
        for line in proc.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return proc, lines


def wait_for(lines: queue.Queue, marker: str, timeout_s: float = 30.0) -> tuple[str | None, list[str]]:
    seen: list[str] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            break
        if line is None:
            break
        seen.append(line)
        if marker in line:
            return line, seen
    return None, seen


def test_cluster_starts_serves_and_stops_cleanly(tmp_path):
    ns_port, port_a, port_b = free_ports(3)
    store = tmp_path / "store"
    proc, lines = start(
        "--store-dir",
        str(store),
        "--namesrv-port",
        str(ns_port),
        "--enable-property-filter",
        "--broker",
        f"broker-a:{port_a}",
        "--broker",
        f"broker-b:{port_b}",
        "--cluster",
        "RunClusterTest",
    )
    try:
        ready, seen = wait_for(lines, "ready")
        assert ready is not None, "\n".join(seen)
        assert f"127.0.0.1:{ns_port}" in ready and f"127.0.0.1:{port_a}" in ready and f"127.0.0.1:{port_b}" in ready
        namesrv = f"127.0.0.1:{ns_port}"
        with BlockingMQAdminClient(namesrv) as admin:
            info = admin.examine_broker_cluster_info()
            assert info.clusters == {"RunClusterTest": ("broker-a", "broker-b")}
            assert {b.addr for b in info.brokers} == {f"127.0.0.1:{port_a}", f"127.0.0.1:{port_b}"}
            admin.create_or_update_topic_in_cluster("RunClusterTest", TopicConfig("RunClusterTopic", 2, 2))
            deadline = time.monotonic() + 10
            while (
                len(admin.examine_topic_route_info("RunClusterTopic").queue_datas) < 2 and time.monotonic() < deadline
            ):
                time.sleep(0.05)
        with SimpleProducer(namesrv, heartbeat_interval_s=None) as producer:
            for i in range(4):
                producer.send(Message("RunClusterTopic", f"{i}".encode()))
        sql92 = {"subscriptionData": {"topic": "RunClusterTopic", "subString": "a > 5", "expressionType": "SQL92"}}
        with BlockingRemotingClient() as client:  # --enable-property-filter: every broker serves SQL92 subscriptions
            for port in (port_a, port_b):
                request = RemotingCommand.request(RequestCode.CHECK_CLIENT_CONFIG, None, json.dumps(sql92).encode())
                assert client.invoke(f"127.0.0.1:{port}", request).code == ResponseCode.SUCCESS
        assert (store / "broker-a" / "abort").exists()  # present while running
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise
    stopped, seen = wait_for(lines, "cluster stopped", timeout_s=5)
    assert code == 0, "\n".join(seen)
    assert stopped is not None
    for name in ("broker-a", "broker-b"):
        assert (store / name / "commitlog").is_dir()
        assert not (store / name / "abort").exists()


def run_to_exit(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "console.settings"}
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "run_cluster", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_bad_arguments_exit_non_zero_with_a_clear_message(tmp_path):
    ns_port, port_a, port_b = free_ports(3)
    base = ["--store-dir", str(tmp_path), "--namesrv-port", str(ns_port)]
    cases = [
        (["--broker", "noport"], "expected NAME:PORT"),
        (["--broker", f"broker-a:{port_a}", "--broker", f"broker-a:{port_b}"], "given twice"),
        (["--broker", f"broker-a:{port_a}", "--broker", f"broker-b:{port_a}"], "used twice"),
        (["--broker", "bad name!:1234"], "illegal broker name: the broker name contains a space at position 4"),
        (
            ["--broker", f"broker-a:{port_a}", "--cluster", "Default/Cluster"],
            "illegal cluster name: the cluster name contains '/'",
        ),
        (["--broker", f"broker-a:{port_a}", "--flush", "sometimes"], "invalid choice"),
    ]
    for args, message in cases:
        result = run_to_exit(*base, *args)
        assert result.returncode != 0, args
        assert message in result.stderr, (args, result.stderr)


def test_port_in_use_is_reported(tmp_path):
    ns_port, port_a = free_ports(2)
    with socket.socket() as busy:
        busy.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        busy.bind(("127.0.0.1", port_a))
        busy.listen()
        result = run_to_exit(
            "--store-dir", str(tmp_path), "--namesrv-port", str(ns_port), "--broker", f"broker-a:{port_a}"
        )
    assert result.returncode == 1
    assert f"broker broker-a: cannot listen on 127.0.0.1:{port_a}" in result.stderr


def free_port_pairs(n: int) -> list[int]:
    """n ports each with its port + 1 free too (a broker's HA port)."""
    found: list[int] = []
    while len(found) < n:
        (port,) = free_ports(1)
        if port + 1 > 65535 or any(abs(port - p) <= 1 for p in found):
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        found.append(port)
    return found


def test_a_slave_replicates_its_master_which_runs_sync_master(tmp_path):
    ns_port, port_a, port_b, port_s = free_port_pairs(4)
    store = tmp_path / "store"
    proc, lines = start(
        "--store-dir",
        str(store),
        "--namesrv-port",
        str(ns_port),
        "--broker",
        f"broker-a:{port_a}",
        "--broker",
        f"broker-b:{port_b}",
        "--slave",
        f"broker-a:{port_s}",
        "--cluster",
        "GroupTest",
    )
    try:
        ready, seen = wait_for(lines, "ready")
        assert ready is not None, "\n".join(seen)
        assert f"broker-a 127.0.0.1:{port_a} (GroupTest, SYNC_MASTER)" in ready
        assert f"broker-a#1 127.0.0.1:{port_s} (GroupTest, SLAVE of broker-a)" in ready
        assert f"broker-b 127.0.0.1:{port_b} (GroupTest)" in ready
        namesrv = f"127.0.0.1:{ns_port}"
        with BlockingMQAdminClient(namesrv) as admin:
            info = admin.examine_broker_cluster_info()
            assert info.broker_datas["broker-a"].broker_addrs == {0: f"127.0.0.1:{port_a}", 1: f"127.0.0.1:{port_s}"}
            assert info.broker_datas["broker-b"].broker_addrs == {0: f"127.0.0.1:{port_b}"}
            deadline = time.monotonic() + 20
            while admin.get_broker_runtime_info(f"127.0.0.1:{port_a}").get("haConnectionState") != "CONNECTED":
                assert time.monotonic() < deadline, "the slave did not connect to broker-a"
                time.sleep(0.1)
            assert admin.get_broker_runtime_info(f"127.0.0.1:{port_a}")["brokerRole"] == "SYNC_MASTER"
            assert admin.get_broker_runtime_info(f"127.0.0.1:{port_s}")["brokerRole"] == "SLAVE"
            assert admin.get_broker_runtime_info(f"127.0.0.1:{port_b}")["brokerRole"] == "ASYNC_MASTER"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise
    assert code == 0
    assert (store / "broker-a-s1" / "commitlog").is_dir() and not (store / "broker-a-s1" / "abort").exists()


def test_bad_slave_and_role_flags_exit_non_zero_with_a_clear_message(tmp_path):
    ns_port, port_a, port_s = free_port_pairs(3)
    base = ["--store-dir", str(tmp_path), "--namesrv-port", str(ns_port), "--broker", f"broker-a:{port_a}"]
    cases = [
        (["--slave", f"broker-c:{port_s}"], "no --broker broker-c"),
        (["--slave", f"broker-a:{port_a + 1}"], "used twice"),  # broker-a's HA port
        (["--slave", "broker-a"], "expected NAME:PORT"),
        (["--role", "broker-a=SLAVE"], "expected NAME=ASYNC_MASTER or NAME=SYNC_MASTER"),
        (["--role", "broker-c=SYNC_MASTER"], "no --broker broker-c"),
    ]
    for args, message in cases:
        result = run_to_exit(*base, *args)
        assert result.returncode != 0, args
        assert message in result.stderr, (args, result.stderr)


def test_roles_default_to_sync_master_with_a_slave_unless_told():
    from brokers.management.commands.run_cluster import parse_broker_specs, parse_roles

    specs = parse_broker_specs(["broker-a:10911", "broker-b:10921"], 9876, ["broker-a:10915", "broker-a:10917"])
    assert [(s.key, s.port, s.broker_id, s.role, s.store_name) for s in specs] == [
        ("broker-a", 10911, 0, "SYNC_MASTER", "broker-a"),
        ("broker-b", 10921, 0, "ASYNC_MASTER", "broker-b"),
        ("broker-a#1", 10915, 1, "SLAVE", "broker-a-s1"),
        ("broker-a#2", 10917, 2, "SLAVE", "broker-a-s2"),
    ]
    told = parse_broker_specs(["broker-a:10911"], 9876, ["broker-a:10915"], parse_roles(["broker-a=ASYNC_MASTER"]))
    assert [s.role for s in told] == ["ASYNC_MASTER", "SLAVE"]


def test_grpc_port_serves_5x_clients(tmp_path):
    ns_port, port_a, grpc_port = free_ports(3)
    proc, lines = start(
        "--store-dir",
        str(tmp_path / "store"),
        "--namesrv-port",
        str(ns_port),
        "--broker",
        f"broker-a:{port_a}",
        "--cluster",
        "GrpcTest",
        "--grpc-port",
        str(grpc_port),
    )
    try:
        ready, seen = wait_for(lines, "ready")
        assert ready is not None, "\n".join(seen)
        assert f"broker-a 127.0.0.1:{port_a} (GrpcTest, 5.x gRPC 127.0.0.1:{grpc_port})" in ready
        with BlockingMQAdminClient(f"127.0.0.1:{ns_port}") as admin:
            admin.create_or_update_topic_in_cluster("GrpcTest", TopicConfig("GrpcTopic", 2, 2))
            deadline = time.monotonic() + 10
            while not admin.examine_topic_route_info("GrpcTopic").queue_datas and time.monotonic() < deadline:
                time.sleep(0.05)
        from rocketmq import ClientConfiguration, Credentials
        from rocketmq import Message as Message5
        from rocketmq import Producer as Producer5

        producer = Producer5(ClientConfiguration(f"127.0.0.1:{grpc_port}", Credentials()), ("GrpcTopic",))
        producer.startup()
        try:
            msg = Message5()
            msg.topic, msg.body = "GrpcTopic", b"from a 5.x client"
            assert producer.send(msg).message_id
        finally:
            producer.shutdown()
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise
    result = run_to_exit(
        "--store-dir",
        str(tmp_path / "bad"),
        "--namesrv-port",
        str(ns_port),
        "--broker",
        f"broker-a:{port_a}",
        "--grpc-port",
        "70000",
    )
    assert result.returncode != 0 and "--grpc-port 70000 is outside" in result.stderr
