"""``manage.py run_cluster`` as a subprocess: ready line, both brokers registered, clean SIGTERM."""
from __future__ import annotations

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

ROOT = Path(__file__).resolve().parents[2]


def free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def start(*args: str) -> tuple[subprocess.Popen, queue.Queue]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "console.settings", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, str(ROOT / "manage.py"), "run_cluster", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
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
    proc, lines = start("--store-dir", str(store), "--namesrv-port", str(ns_port),
                        "--broker", f"broker-a:{port_a}", "--broker", f"broker-b:{port_b}", "--cluster", "RunClusterTest")
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
            while len(admin.examine_topic_route_info("RunClusterTopic").queue_datas) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
        with SimpleProducer(namesrv, heartbeat_interval_s=None) as producer:
            for i in range(4):
                producer.send(Message("RunClusterTopic", f"{i}".encode()))
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
    return subprocess.run([sys.executable, str(ROOT / "manage.py"), "run_cluster", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)


def test_bad_arguments_exit_non_zero_with_a_clear_message(tmp_path):
    ns_port, port_a, port_b = free_ports(3)
    base = ["--store-dir", str(tmp_path), "--namesrv-port", str(ns_port)]
    cases = [
        (["--broker", "noport"], "expected NAME:PORT"),
        (["--broker", f"broker-a:{port_a}", "--broker", f"broker-a:{port_b}"], "given twice"),
        (["--broker", f"broker-a:{port_a}", "--broker", f"broker-b:{port_a}"], "used twice"),
        (["--broker", "bad name!:1234"], "illegal broker name"),
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
        result = run_to_exit("--store-dir", str(tmp_path), "--namesrv-port", str(ns_port), "--broker", f"broker-a:{port_a}")
    assert result.returncode == 1
    assert f"broker broker-a: cannot listen on 127.0.0.1:{port_a}" in result.stderr
