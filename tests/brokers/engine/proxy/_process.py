"""The cluster-mode proxy as the tests run it: ``python -m brokers.engine proxy`` in a process of its own."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
READY = re.compile(r"proxy 5\.x gRPC endpoint at (\S+)")


def start_proxy(namesrv_addr: str, *options: str) -> tuple[subprocess.Popen[str], str]:
    """The proxy process in front of ``namesrv_addr``'s cluster and its gRPC address, once it says it is ready."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "brokers.engine", "proxy", "--namesrv", namesrv_addr, "--grpc-port", "0", *options],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line)
        found = READY.search(line)
        if found:
            return proc, found.group(1)
    proc.wait(15)
    raise AssertionError("the proxy did not start:\n" + "".join(lines))


def stop_proxy(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(15)
