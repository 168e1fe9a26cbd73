"""A broker group as real processes: ``python -m brokers.engine namesrv|broker ...`` subprocesses on
free loopback ports, their output in log files, started, SIGKILLed, SIGSTOPped and restarted by the
drills (tests/brokers/engine/test_group_drills.py) and bench/ha_catchup_bench.py."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from tests.fixtures import waiting
from tests.fixtures.ports import free_port

ROOT = Path(__file__).resolve().parents[3]


class Proc:
    """One engine process; ``start`` waits for its ready line (``ready_word``) in its log.

    A first start that loses its port to another process (the ports were free when picked; tests
    run in parallel) picks fresh ports and tries again; a restart keeps its ports (its address is
    the broker's identity in the drills)."""

    ready_word = b" ready at "  # the broker's line; a bare "ready" matches "address already in use"
    port_conflict = b"address already in use"
    start_attempts = 3

    def __init__(self, argv: list[str], log: Path) -> None:
        self.argv = argv
        self.log = log
        self.proc: subprocess.Popen | None = None
        self.started = False

    def start(self, timeout_s: float = 30.0) -> Proc:
        for attempt in range(1, self.start_attempts + 1):
            output = self._start_once(timeout_s)
            if output is None:
                self.started = True
                return self
            if self.started or self.port_conflict not in output or attempt == self.start_attempts:
                break
            self.pick_ports()
        raise AssertionError(f"{self.argv[:3]} did not become ready:\n" + self.log.read_text(errors="replace")[-4000:])

    def _start_once(self, timeout_s: float) -> bytes | None:
        """Start the process; None once its ready line is logged, else what it logged (it is killed)."""
        self.log.parent.mkdir(parents=True, exist_ok=True)
        offset = self.log.stat().st_size if self.log.exists() else 0
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "brokers.engine", *self.argv],
                cwd=ROOT,
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            exited = self.proc.poll() is not None
            with open(self.log, "rb") as fh:
                fh.seek(offset)
                output = fh.read()
            if self.ready_word in output:
                return None
            if exited:
                break
            time.sleep(0.02)
        self.kill()
        return output

    def pick_ports(self) -> None:
        """Choose fresh ports (subclasses that own ports)."""

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        if self.alive:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.send_signal(signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait(10)

    def stop(self) -> None:
        """SIGTERM: a clean stop (configs written, store flushed)."""
        if self.alive:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()

    def pause(self) -> None:
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.proc.send_signal(signal.SIGCONT)

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


class NamesrvProc(Proc):
    ready_word = b"name server listening on"

    def __init__(self, root: Path, *extra: str) -> None:
        self._extra = extra
        super().__init__([], root / "namesrv.log")
        self.pick_ports()

    def pick_ports(self) -> None:
        self.port = free_port()
        self.argv = ["namesrv", "--port", str(self.port), *self._extra]

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"


class BrokerProc(Proc):
    def __init__(
        self,
        root: Path,
        namesrv: str,
        name: str = "broker-a",
        broker_id: int = 0,
        role: str = "ASYNC_MASTER",
        *extra: str,
        store_dir: Path | None = None,
    ) -> None:
        self.store_dir = store_dir or root / f"{name}-{broker_id}"
        self.broker_id = broker_id
        self._args = (namesrv, name, broker_id, role, extra)
        super().__init__([], root / f"{name}-{broker_id}.log")
        self.pick_ports()

    def pick_ports(self) -> None:
        namesrv, name, broker_id, role, extra = self._args
        self.port, self.ha_port = free_port(), free_port()
        self.argv = [
            "broker",
            "--name",
            name,
            "--port",
            str(self.port),
            "--ha-port",
            str(self.ha_port),
            "--namesrv",
            namesrv,
            "--store-dir",
            str(self.store_dir),
            "--broker-id",
            str(broker_id),
            "--role",
            role,
            "--register-interval",
            "2",
            *extra,
        ]

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"


async def call(
    addr: str, code: int, ext: dict | None = None, body: bytes = b"", timeout_s: float = 5.0
) -> RemotingCommand:
    client = RemotingClient()
    try:
        return await client.invoke(addr, RemotingCommand.request(code, ext, body), timeout_s)
    finally:
        await client.close()


def runtime_info(addr: str) -> dict[str, str]:
    """GET_BROKER_RUNTIME_INFO's table (a KVTable JSON)."""
    from brokers.engine.common import json_compat

    reply = asyncio.run(call(addr, RequestCode.GET_BROKER_RUNTIME_INFO))
    assert reply.code == ResponseCode.SUCCESS, reply
    return {str(k): str(v) for k, v in json_compat.loads(reply.body)["table"].items()}


def create_topic(addr: str, topic: str, queues: int) -> None:
    ext = {
        "topic": topic,
        "defaultTopic": "TBW102",
        "readQueueNums": queues,
        "writeQueueNums": queues,
        "perm": 6,
        "topicFilterType": "SINGLE_TAG",
        "topicSysFlag": 0,
        "order": False,
    }
    reply = asyncio.run(call(addr, RequestCode.UPDATE_AND_CREATE_TOPIC, ext))
    assert reply.code == ResponseCode.SUCCESS, reply


# The drills poll servers that may be starting or gone: an exception is "not yet".
wait_until = partial(waiting.wait_until, every_s=0.1, ignoring=(Exception,))
