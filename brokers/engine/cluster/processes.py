"""The cluster harness with a process per server: the same :class:`ClusterSpec`, each member run by
``python -m brokers.engine member LAUNCH.json`` (``member.py``), for benchmarks and crash drills.

Every member logs to ``<log_dir>/<key>.log`` (a file, not a pipe: a pipe nobody reads fills up and
stalls the server) and is ready once its log has the server's ready line, whose address it reads.
:meth:`ProcessCluster.kill_broker` sends SIGKILL: what the page cache held and the store had not
flushed is lost as in a crash, and the next start recovers from the abort file.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from brokers.engine.cluster.spec import BrokerSpec, ClusterSpec, ClusterSpecError, check_broker_overrides

ROOT = Path(__file__).resolve().parents[3]  # the checkout holding the ``brokers`` package
READY_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 60.0  # a clean stop flushes the store; a large dirty page cache takes a while
SLAVE_CONNECT_TIMEOUT_S = 30.0
_NAMESRV_READY = re.compile(r"namesrv ready on (\S+)")
_BROKER_READY = re.compile(r"broker \S+ ready at (\S+) .*?\bHA (\S+),")
_GRPC_READY = re.compile(r"5\.x gRPC endpoint at (\S+)")


@dataclass
class Member:
    """One running (or stopped) server of a ProcessCluster."""

    key: str  # "namesrv-0", "broker-a", "broker-a#1"
    log: Path
    proc: subprocess.Popen[bytes]
    addr: str = ""
    ha_addr: str = ""
    grpc_addr: str | None = None

    @property
    def port(self) -> int:
        return int(self.addr.rpartition(":")[2])

    @property
    def pid(self) -> int:
        return self.proc.pid


class ProcessCluster:
    """A spec's servers as child processes: ``with ProcessCluster(spec) as c: ...``.

    ``launcher`` is the command before ``brokers.engine member ...`` (default ``python -m``);
    ``launchers`` replaces it for some members by key (a profiler's wrapper around one broker, say); ``env`` adds variables to the children's environment;
    ``log_level`` is the children's. ``admin_options`` (``access_key``, ``secret_key``, ``tls``)
    sign the admin requests that check slaves are connected when the spec turns the ACL or TLS on.
    """

    def __init__(
        self,
        spec: ClusterSpec,
        *,
        log_dir: Path | None = None,
        launcher: Sequence[str] = (sys.executable, "-m"),
        launchers: Mapping[str, Sequence[str]] | None = None,
        env: Mapping[str, str] | None = None,
        log_level: str = "WARNING",
        ready_timeout_s: float = READY_TIMEOUT_S,
        admin_options: Mapping[str, Any] | None = None,
    ) -> None:
        spec.to_json()  # refuse a spec a child could not read, before anything starts
        self.spec = spec
        self.log_dir = log_dir or Path(spec.root) / "logs"
        self.launcher = tuple(launcher)
        self.launchers = {key: tuple(command) for key, command in (launchers or {}).items()}
        self.env = {
            **os.environ,
            **(env or {}),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        }
        self.log_level = log_level
        self.ready_timeout_s = ready_timeout_s
        self.admin_options = dict(admin_options or {})
        self.namesrvs: list[Member] = []
        self.brokers: dict[str, Member] = {}  # key -> its process, running or stopped, in start order
        self.members: dict[str, BrokerSpec] = {}  # key -> what it runs (the spec's, or an ad-hoc broker)
        self._overrides: dict[str, dict[str, Any]] = {}  # key -> the overrides of its last start
        self._starts: dict[str, int] = {}

    # -- addresses --------------------------------------------------------------------------------

    @property
    def namesrv_addrs(self) -> tuple[str, ...]:
        return tuple(m.addr for m in self.namesrvs) if self.spec.namesrvs else self.spec.namesrv_addrs

    @property
    def namesrv_addr(self) -> str:
        return ";".join(self.namesrv_addrs)

    def addr(self, key: str) -> str:
        return self.brokers[key].addr

    def grpc_addr(self, key: str) -> str | None:
        return self.brokers[key].grpc_addr

    def ha_addr(self, key: str) -> str:
        return self.brokers[key].ha_addr

    def pid(self, key: str) -> int:
        return self.brokers[key].pid

    # -- the whole cluster ------------------------------------------------------------------------

    def start(self, *, wait_slaves: bool = True, brokers: Collection[str] | None = None) -> ProcessCluster:
        """Start the name servers, then every broker (or those of ``brokers``: the others wait for
        ``start_broker``), each once ready; on a failure stop them all and raise."""
        try:
            for index in range(self.spec.namesrvs):
                self.namesrvs.append(self._launch(f"namesrv-{index}", {"namesrv": index}))
            for member in self.spec.members():
                if brokers is None or member.key in brokers:
                    self.start_broker(member.key)
            if wait_slaves:
                self.wait_slaves_connected()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """SIGTERM every server, newest broker first, the name servers last, and wait for each."""
        for member in [*reversed(self.brokers.values()), *reversed(self.namesrvs)]:
            _end(member.proc, signal.SIGTERM)

    def __enter__(self) -> ProcessCluster:
        """Start the cluster, unless ``start()`` already did (``with ProcessCluster(spec).start() as c``)."""
        return self if self.namesrvs or self.brokers else self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def wait_slaves_connected(self, timeout_s: float = SLAVE_CONNECT_TIMEOUT_S) -> None:
        """Return once each running master reports as many HA slaves (haSlaveCount) as it has running slaves."""
        from brokers.engine.client.admin import BlockingMQAdminClient

        running = [(self.members[k], m) for k, m in self.brokers.items() if m.proc.poll() is None]
        masters = {spec.broker_name: m.addr for spec, m in running if not spec.is_slave}
        wanted: dict[str, int] = {}  # a master's address -> its running slaves
        for spec, _ in running:
            if spec.is_slave and spec.broker_name in masters:
                wanted[masters[spec.broker_name]] = wanted.get(masters[spec.broker_name], 0) + 1
        if not wanted:
            return
        deadline = time.monotonic() + timeout_s
        with BlockingMQAdminClient(self.namesrv_addr or "127.0.0.1:1", timeout_s=2.0, **self.admin_options) as admin:
            while True:
                missing = []
                for addr, count in wanted.items():
                    try:
                        info = admin.get_broker_runtime_info(addr)
                    except Exception:  # noqa: BLE001 (not answering yet counts as not connected)
                        info = {}
                    if int(info.get("haSlaveCount") or 0) < count:
                        missing.append(addr)
                if not missing:
                    return
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"slaves of the masters at {', '.join(missing)} did not connect within {timeout_s}s"
                    )
                time.sleep(0.1)

    # -- one broker -------------------------------------------------------------------------------

    def start_broker(
        self,
        key: str,
        *,
        member: BrokerSpec | None = None,
        port: int | None = None,
        ha_port: int | None = None,
        **overrides: Any,
    ) -> Member:
        """Start broker ``key`` and wait until it is ready: the spec's, or ``member`` (a broker the spec does
        not name: a drill's next generation, say), on ``port``/``ha_port`` when given, with ``overrides``."""
        member = member or self.spec.member(key)
        if key in self.brokers and self.brokers[key].proc.poll() is None:
            raise ClusterSpecError(f"broker {key!r} is already running")
        check_broker_overrides(f"broker {key}", {k: v for k, v in overrides.items() if k != "namesrv_addrs"})
        if ha_port is not None:
            overrides["ha_listen_port"] = ha_port
        launch: dict[str, Any] = {
            "broker": key,
            "member": asdict(member),
            "namesrv_addrs": list(self.namesrv_addrs),
            "overrides": overrides,
        }
        if port is not None:
            launch["port"] = port
        self.members[key] = member
        self._overrides[key] = dict(overrides)
        started = self._launch(key, launch)
        self.brokers.pop(key, None)
        self.brokers[key] = started
        return started

    def stop_broker(self, key: str) -> int:
        """Stop broker ``key`` cleanly (SIGTERM); return its exit code."""
        return _end(self.brokers[key].proc, signal.SIGTERM)

    def kill_broker(self, key: str) -> int:
        """Kill broker ``key`` (SIGKILL: a crash); return its exit code."""
        return _end(self.brokers[key].proc, signal.SIGKILL)

    def signal_broker(self, key: str, sig: signal.Signals) -> None:
        """Send ``sig`` to broker ``key`` if it runs (SIGSTOP stalls it, SIGCONT resumes it)."""
        if self.brokers[key].proc.poll() is None:
            self.brokers[key].proc.send_signal(sig)

    def restart_broker(self, key: str, *, keep_port: bool = True, **overrides: Any) -> Member:
        """Stop broker ``key`` if it runs, then start it again as last time (its member, its overrides updated
        with ``overrides``) on its store, and on its last ports with ``keep_port``."""
        old = self.brokers[key]
        if old.proc.poll() is None:
            self.stop_broker(key)
        ports: dict[str, int] = {}
        if keep_port and old.addr:
            ports["port"] = old.port
            if old.ha_addr and "ha_listen_port" not in overrides:
                ports["ha_port"] = int(old.ha_addr.rpartition(":")[2])
        again = {k: v for k, v in self._overrides.get(key, {}).items() if k != "ha_listen_port"}
        return self.start_broker(key, member=self.members.get(key), **ports, **{**again, **overrides})

    # -- launching --------------------------------------------------------------------------------

    def _launch(self, key: str, what: dict[str, Any]) -> Member:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self._starts[key] = self._starts.get(key, 0) + 1
        stem = key.replace("#", "-s")
        launch_file = self.log_dir / f"{stem}.launch.json"
        launch_file.write_text(json.dumps({"spec": asdict(self.spec), **what}))
        log = self.log_dir / (f"{stem}.log" if self._starts[key] == 1 else f"{stem}.{self._starts[key]}.log")
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [
                    *self.launchers.get(key, self.launcher),
                    "brokers.engine",
                    "member",
                    str(launch_file),
                    "--log-level",
                    self.log_level,
                ],
                cwd=ROOT,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        member = Member(key, log, proc)
        try:
            self._wait_ready(member, grpc="namesrv" not in what and self._serves_grpc(key, what["overrides"]))
        except BaseException:
            _end(proc, signal.SIGKILL)
            raise
        return member

    def _serves_grpc(self, key: str, overrides: dict[str, Any]) -> bool:
        member = self.members[key]
        return {**self.spec.broker_overrides, **member.overrides, **overrides}.get("grpc_port") is not None

    def _wait_ready(self, member: Member, *, grpc: bool) -> None:
        deadline = time.monotonic() + self.ready_timeout_s
        while True:
            text = member.log.read_text(errors="replace")
            ready = _NAMESRV_READY.search(text) or _BROKER_READY.search(text)
            grpc_line = _GRPC_READY.search(text)
            if ready and (grpc_line or not grpc):
                member.addr = ready.group(1)
                member.ha_addr = ready.group(2) if ready.re is _BROKER_READY else ""
                member.grpc_addr = grpc_line.group(1) if grpc_line else None
                return
            if member.proc.poll() is not None:
                raise RuntimeError(f"{member.key} exited ({member.proc.returncode}) before ready:\n{text[-2000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{member.key} not ready within {self.ready_timeout_s}s:\n{text[-2000:]}")
            time.sleep(0.05)


def _end(proc: subprocess.Popen[bytes], sig: signal.Signals) -> int:
    """Send ``sig`` unless the process has ended (then SIGCONT: a SIGSTOPped process handles a SIGTERM only
    once it runs again); wait for it (SIGKILL after STOP_TIMEOUT_S)."""
    if proc.poll() is None:
        proc.send_signal(sig)
        if sig != signal.SIGKILL:
            proc.send_signal(signal.SIGCONT)
        try:
            proc.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode
