"""A private redis-server on loopback, for ``make run`` and the tests when REDIS_URL is unset.

Data lives under the given directory (``var/redis`` for ``make run``): RDB snapshots only, so
queued tasks survive a clean restart; bound to 127.0.0.1 with protected mode on.
"""
from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path

READY_MARKER = "Ready to accept connections"


def redis_server_binary() -> str:
    path = shutil.which("redis-server")
    if not path:
        raise RuntimeError("redis-server is not installed (make run / make test install it: apt-get install redis-server)")
    return path


def redis_argv(port: int, data_dir: Path) -> list[str]:
    data_dir.mkdir(parents=True, exist_ok=True)
    return [
        redis_server_binary(), "--port", str(port), "--bind", "127.0.0.1", "--protected-mode", "yes",
        "--dir", str(data_dir), "--dbfilename", "dump.rdb",
        "--save", "60 1",  # snapshot within a minute of any change
        "--appendonly", "no", "--daemonize", "no", "--logfile", "",
    ]


def wait_for_port(port: int, timeout_s: float = 10.0, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"redis-server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
                sock.sendall(b"PING\r\n")
                if sock.recv(16).startswith(b"+PONG"):
                    return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"redis-server on port {port} did not answer within {timeout_s} s")


def start_redis(port: int, data_dir: Path) -> subprocess.Popen:
    """Start redis-server and wait until it answers PING."""
    proc = subprocess.Popen(redis_argv(port, data_dir), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_port(port, proc=proc)
    return proc
