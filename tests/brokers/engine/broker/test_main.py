"""``python -m brokers.engine``: help, bad arguments, and a real broker process started and stopped."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from brokers.engine.__main__ import main as engine_main
from brokers.engine.broker.startup import main as broker_main
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.command import RemotingCommand

REPO = Path(__file__).resolve().parents[4]


def test_usage_and_bad_arguments(capsys, tmp_path):
    assert engine_main([]) == 2
    assert "namesrv" in capsys.readouterr().out
    assert engine_main(["--help"]) == 0
    assert engine_main(["frobnicate"]) == 2
    assert "unknown command" in capsys.readouterr().err
    assert broker_main(["--help"]) == 0
    assert "--store-dir" in capsys.readouterr().out
    assert broker_main(["--name", "b"]) == 2  # no --store-dir
    assert "--store-dir" in capsys.readouterr().err
    assert broker_main(["--name", "bad name", "--store-dir", str(tmp_path)]) == 2
    assert "broker name" in capsys.readouterr().err
    assert broker_main(["--name", "b", "--store-dir", str(tmp_path), "--namesrv", "nohost"]) == 2
    assert "host:port" in capsys.readouterr().err
    assert broker_main(["--name", "b", "--store-dir", str(tmp_path), "--port", "70000"]) == 2
    assert broker_main(["--name", "b", "--store-dir", str(tmp_path), "--commitlog-file-size", "10"]) == 2
    assert "commitlog_file_size" in capsys.readouterr().err
    assert broker_main(["--name", "b", "--store-dir", str(tmp_path), "--max-index-count", "1"]) == 2
    assert "max_index_count" in capsys.readouterr().err
    assert broker_main(["--name", "b", "--store-dir", str(tmp_path), "--consume-queue-units-per-file", "0"]) == 2
    assert "consume_queue_units_per_file" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())  # nothing was created


def _start(args: list[str], pattern: str) -> tuple[subprocess.Popen, re.Match]:
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "brokers.engine", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        match = re.search(pattern, line)
        if match:
            return proc, match
    proc.kill()
    raise AssertionError(f"no ready line from {args}: {proc.stderr.read()}")


def test_broker_process_ready_serves_and_stops_cleanly(tmp_path):
    namesrv, m = _start(["namesrv", "--port", "0"], r"ready on [\d.]+:(\d+)")
    namesrv_addr = f"127.0.0.1:{m.group(1)}"
    store = tmp_path / "store"
    broker = None
    try:
        broker, m = _start(
            [
                "broker",
                "--name",
                "broker-x",
                "--port",
                "0",
                "--namesrv",
                namesrv_addr,
                "--store-dir",
                str(store),
                "--flush",
                "sync",
                "--commitlog-file-size",
                "1048576",
            ],
            r"ready at ([\d.]+:\d+)",
        )
        broker_addr = m.group(1)
        assert (store / "abort").exists()

        async def talk():
            client = RemotingClient()
            try:
                route = await client.invoke(
                    namesrv_addr, RemotingCommand.request(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": "broker-x"})
                )
                assert route.code == 0 and broker_addr.encode() in route.body
                info = await client.invoke(broker_addr, RemotingCommand.request(RequestCode.GET_BROKER_RUNTIME_INFO))
                assert info.code == 0 and b"SYNC_FLUSH" in info.body
            finally:
                await client.close()

        asyncio.run(asyncio.wait_for(talk(), 10))
        broker.send_signal(signal.SIGTERM)
        assert broker.wait(15) == 0
        assert "stopped" in broker.stdout.read()
        assert not (store / "abort").exists()
        assert (store / "config" / "topics.json").exists()
        # A second broker refuses a store that is in use.
        other, _ = _start(["broker", "--name", "broker-y", "--port", "0", "--store-dir", str(store)], r"ready at")
        try:
            code = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "brokers.engine",
                    "broker",
                    "--name",
                    "broker-z",
                    "--port",
                    "0",
                    "--store-dir",
                    str(store),
                ],
                cwd=REPO,
                env=dict(os.environ, PYTHONPATH=str(REPO)),
                capture_output=True,
                text=True,
                timeout=20,
            )
            assert code.returncode == 1 and "could not start" in code.stderr
        finally:
            other.send_signal(signal.SIGINT)
            assert other.wait(15) == 0
    finally:
        if broker is not None and broker.poll() is None:
            broker.kill()
        namesrv.send_signal(signal.SIGTERM)
        namesrv.wait(10)
