"""Process helpers shared by the benchmarks: free loopback ports and waiting for a server's
"ready" line in its log file (a log file, not a pipe: a pipe nobody reads fills up and stalls
the server)."""
from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(proc: subprocess.Popen, log: Path, timeout_s: float = 60.0) -> None:
    """Return once ``log`` contains "ready"; raise with the log's tail if the process died or
    did not get there in time."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process exited early:\n{log.read_text()[-2000:]}")
        if b"ready" in log.read_bytes():
            return
        time.sleep(0.05)
    raise RuntimeError(f"not ready in {timeout_s}s:\n{log.read_text()[-2000:]}")
