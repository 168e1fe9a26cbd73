"""A private redis-server on loopback, for ``make run`` and the tests when REDIS_URL is unset.

Data lives under the given directory (``var/redis`` for ``make run``): RDB snapshots only, so
queued tasks survive a clean restart; bound to 127.0.0.1 with protected mode on. ``make run``'s
server needs a password (:func:`private_redis_password`: generated once, kept 0600 in
``var/redis-password``); it reaches redis-server in a 0600 config file, never on the command
line where ``ps`` would show it, and Celery and the cache put it in their URL
(:func:`private_redis_url`).
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import time
from pathlib import Path
from urllib.parse import quote

READY_MARKER = "Ready to accept connections"
PASSWORD_FILE = "redis-password"
PASSWORD_BYTES = 32  # 256 bits: the password only ever lives in files and URLs, never typed


def redis_server_binary() -> str:
    path = shutil.which("redis-server")
    if not path:
        raise RuntimeError(
            "redis-server is not installed (make run / make test install it: apt-get install redis-server)"
        )
    return path


def _write_private(path: Path, text: str, *, exclusive: bool) -> None:
    """Write ``text`` to ``path`` readable by the owner only (0600 whatever the umask)."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
    fd = os.open(path, flags, 0o600)
    with os.fdopen(fd, "w") as fh:
        os.fchmod(fh.fileno(), 0o600)
        fh.write(text)


def private_redis_password(var_dir: Path) -> str:
    """The private redis-server's password: read from ``var_dir/redis-password``, made once (0600)."""
    path = Path(var_dir) / PASSWORD_FILE
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        Path(var_dir).mkdir(mode=0o700, parents=True, exist_ok=True)
        password = secrets.token_urlsafe(PASSWORD_BYTES)
        try:
            _write_private(path, password + "\n", exclusive=True)
        except FileExistsError:  # another process made it first: use theirs
            return path.read_text().strip()
        return password


def private_redis_url(var_dir: Path, port: int, db: int = 0) -> str:
    """``redis://:<password>@127.0.0.1:<port>/<db>`` for the private redis-server."""
    return f"redis://:{quote(private_redis_password(var_dir), safe='')}@127.0.0.1:{port}/{db}"


def redis_argv(port: int, data_dir: Path, password: str | None = None) -> list[str]:
    """redis-server's command line; with ``password``, a 0600 ``redis.conf`` in ``data_dir`` carries it."""
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    argv = [redis_server_binary()]
    if password is not None:
        conf = data_dir / "redis.conf"
        _write_private(conf, f"requirepass {password}\n", exclusive=False)
        argv.append(str(conf))
    return argv + [
        "--port",
        str(port),
        "--bind",
        "127.0.0.1",
        "--protected-mode",
        "yes",
        "--dir",
        str(data_dir),
        "--dbfilename",
        "dump.rdb",
        "--save",
        "60 1",  # snapshot within a minute of any change
        "--appendonly",
        "no",
        "--daemonize",
        "no",
        "--logfile",
        "",
    ]


def wait_for_port(
    port: int, timeout_s: float = 10.0, proc: subprocess.Popen | None = None, password: str | None = None
) -> None:
    deadline = time.monotonic() + timeout_s
    hello = (f"AUTH {password}\r\n" if password is not None else "").encode() + b"PING\r\n"
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"redis-server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
                sock.sendall(hello)
                if b"+PONG" in sock.recv(64):
                    return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"redis-server on port {port} did not answer within {timeout_s} s")


def start_redis(port: int, data_dir: Path, password: str | None = None) -> subprocess.Popen:
    """Start redis-server and wait until it answers PING."""
    proc = subprocess.Popen(redis_argv(port, data_dir, password), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_port(port, proc=proc, password=password)
    return proc
