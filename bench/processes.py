"""Process helpers shared by the benchmarks: free loopback ports and waiting for a server's
"ready" line in its log file (a log file, not a pipe: a pipe nobody reads fills up and stalls
the server).

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
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from brokers.engine.cluster import ClusterSpec  # noqa: E402
from brokers.engine.cluster.processes import ProcessCluster  # noqa: E402

__all__ = [
    "ClusterSpec",
    "ProcessCluster",
    "free_port",
    "start_grpc_broker",
    "start_on_fresh_ports",
    "stop_all",
    "wait_ready",
]

T = TypeVar("T")
STARTS = 3  # attempts, each on fresh ports: a port can be taken between free_port() and the child's bind


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


def start_on_fresh_ports(start: Callable[[int], T], stop: Callable[[], None], what: str) -> T:
    """Return ``start(attempt)``, trying up to STARTS times; ``stop()`` after each failure (a lost
    port race: free_port() handed out a port something else bound before the child did). The last
    failure raises."""
    for attempt in range(1, STARTS + 1):
        try:
            return start(attempt)
        except Exception as exc:  # noqa: BLE001 (the last attempt raises)
            stop()
            if attempt == STARTS:
                raise
            print(
                f"{what} start {attempt} of {STARTS} failed ({str(exc).strip().splitlines()[-1][:200]}); "
                "again on fresh ports",
                file=sys.stderr,
                flush=True,
            )
    raise AssertionError("unreachable")


def stop_all(procs: list[subprocess.Popen]) -> None:
    """Terminate ``procs`` (newest first), wait for each and forget them."""
    for proc in reversed(procs):
        if proc.poll() is None:
            proc.terminate()
        proc.wait(60)
    procs.clear()


def start_grpc_broker(tmp: Path) -> ProcessCluster:
    """A name server and one broker (broker-a) with its 5.x gRPC endpoint on an ephemeral port, processes
    of the engine's cluster harness logging under ``tmp/logs``, both ready. The caller stops it (``with``)."""
    return ProcessCluster(ClusterSpec(str(tmp), broker_overrides={"grpc_port": 0}), log_level="ERROR").start()
