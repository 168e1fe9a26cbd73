"""Process helpers shared by the benchmarks. Name servers and brokers are the engine's cluster
harness's (``ProcessCluster``, re-exported here with ``ClusterSpec``; ``start_grpc_broker`` is the
gRPC benches' one-broker cluster). ``free_port`` and ``wait_ready`` (a server's "ready" line in its
log file: a log file, not a pipe, as a pipe nobody reads fills up and stalls the server) serve the
other servers the benches run (bench/minimal_broker.py).

Importing this module makes SIGTERM end a benchmark the way Ctrl-C does: SystemExit runs the
``with`` blocks and ``finally`` clauses that stop its name servers, brokers and redis-servers (the
default action, dying at once, left them running: ``pkill -f broker_bench`` orphaned several).
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from brokers.engine.cluster import ClusterSpec  # noqa: E402
from brokers.engine.cluster.processes import ProcessCluster  # noqa: E402
from bench_common import cpu_seconds  # noqa: E402

__all__ = [
    "settle",
    "ClusterSpec",
    "ProcessCluster",
    "free_port",
    "start_grpc_broker",
    "wait_ready",
]


def _exit_on_sigterm(signum: int, _frame) -> None:
    raise SystemExit(128 + signum)


def exit_on_sigterm() -> None:
    """Let SIGTERM raise SystemExit in this (main) thread, unless someone installed a handler."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _exit_on_sigterm)


exit_on_sigterm()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


READY = re.compile(rb"\bready\b")  # the engine's ready line; "address already in use" is not it


def wait_ready(proc: subprocess.Popen, log: Path, timeout_s: float = 60.0) -> None:
    """Return once ``log`` has the word "ready" (not "already": a lost port logs "address already
    in use"); raise with the log's tail if the process died or did not get there in time."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process exited early:\n{log.read_text()[-2000:]}")
        if READY.search(log.read_bytes()):
            return
        time.sleep(0.05)
    raise RuntimeError(f"not ready in {timeout_s}s:\n{log.read_text()[-2000:]}")


def start_grpc_broker(tmp: Path) -> ProcessCluster:
    """A name server and one broker (broker-a) with its 5.x gRPC endpoint on an ephemeral port, processes
    of the engine's cluster harness logging under ``tmp/logs``, both ready. The caller stops it (``with``)."""
    return ProcessCluster(ClusterSpec(str(tmp), broker_overrides={"grpc_port": 0}), log_level="ERROR").start()


def settle(pid: int, busy_share: float = 0.1, window_s: float = 0.5, timeout_s: float = 30.0) -> float:
    """Wait until process ``pid`` uses under ``busy_share`` of a core over ``window_s`` (it has finished
    cleaning up after an attack, say) or ``timeout_s`` passed; the seconds waited."""
    started = time.monotonic()
    while time.monotonic() - started < timeout_s:
        before = cpu_seconds(pid)
        time.sleep(window_s)
        if cpu_seconds(pid) - before < busy_share * window_s:
            break
    return time.monotonic() - started
