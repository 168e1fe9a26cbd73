"""Process helpers shared by the benchmarks: free loopback ports and waiting for a server's
"ready" line in its log file (a log file, not a pipe: a pipe nobody reads fills up and stalls
the server).

Importing this module makes SIGTERM end a benchmark the way Ctrl-C does: SystemExit runs the
``with`` blocks and ``finally`` clauses that stop its name servers, brokers and redis-servers (the
default action, dying at once, left them running: ``pkill -f broker_bench`` orphaned several).
"""

from __future__ import annotations

import os
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


def start_grpc_broker(tmp: Path, root: Path) -> tuple[subprocess.Popen, subprocess.Popen, int, int, int]:
    """A name server and one broker with its 5.x gRPC endpoint, subprocesses logging under ``tmp``, both ready:
    (name server, broker, name server port, broker port, gRPC port). The caller terminates them."""
    ns_port, broker_port, grpc_port = free_port(), free_port(), free_port()
    env = {**os.environ, "PYTHONPATH": str(root)}
    ns_log, broker_log = tmp / "namesrv.log", tmp / "broker.log"
    with open(ns_log, "w") as out:
        namesrv = subprocess.Popen(
            [sys.executable, "-m", "brokers.engine", "namesrv", "--port", str(ns_port), "--log-level", "ERROR"],
            cwd=root,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    with open(broker_log, "w") as out:
        broker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "brokers.engine",
                "broker",
                "--name",
                "broker-a",
                "--store-dir",
                str(tmp / "b"),
                "--port",
                str(broker_port),
                "--namesrv",
                f"127.0.0.1:{ns_port}",
                "--grpc-port",
                str(grpc_port),
                "--log-level",
                "ERROR",
            ],
            cwd=root,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    wait_ready(namesrv, ns_log, 30)
    wait_ready(broker, broker_log, 30)
    return namesrv, broker, ns_port, broker_port, grpc_port
