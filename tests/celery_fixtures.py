"""Real Redis and real Celery worker processes for the tests of background work.

``redis_server`` (session): a private redis-server on an ephemeral loopback port with its data in
a temporary directory; ``.stop()`` / ``.start()`` take it down and bring it back on the same port.
``celery_redis`` points Django's settings and the Celery app at it (and restarts it after a test
that stopped it). ``celery_worker`` starts ``celery -A console worker`` processes against the test
database file (tests using it need ``transactional_db`` so the worker sees committed rows).
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class RedisHandle:
    port: int
    data_dir: Path
    proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        from console.redis_server import start_redis

        if self.proc is None or self.proc.poll() is not None:
            self.proc = start_redis(self.port, self.data_dir)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    handle = RedisHandle(free_port(), tmp_path_factory.mktemp("redis"))
    handle.start()
    yield handle
    handle.stop()


def _point_celery_at(url: str) -> None:
    from console.celery import app

    app.conf.update(broker_url=url, result_backend=url)
    app._pool = None  # drop connections made to another broker
    if "backend" in app.__dict__:
        del app.__dict__["backend"]


@pytest.fixture
def celery_redis(redis_server, settings):
    """Settings and the Celery app pointed at the test redis-server; Redis flushed first."""
    redis_server.start()
    settings.REDIS_URL = redis_server.url
    settings.CELERY_BROKER_URL = redis_server.url
    settings.CELERY_RESULT_BACKEND = redis_server.url
    _point_celery_at(redis_server.url)
    import redis

    redis.Redis.from_url(redis_server.url).flushdb()
    yield redis_server
    redis_server.start()  # a test that stopped Redis leaves it running for the next


@dataclass
class WorkerProcess:
    proc: subprocess.Popen
    log_path: Path
    name: str
    env: dict = field(default_factory=dict)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_ready(self, timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if " ready." in self.log():
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"worker {self.name} exited with {self.proc.returncode}:\n{self.log()[-4000:]}")
            time.sleep(0.1)
        raise RuntimeError(f"worker {self.name} not ready within {timeout_s} s:\n{self.log()[-4000:]}")

    def kill(self) -> None:
        """SIGKILL the worker and its pool children (its whole process group)."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self, timeout_s: float = 20.0) -> None:
        if self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.kill()


@pytest.fixture
def celery_worker(celery_redis, transactional_db, tmp_path):
    """Return ``start(queues="celery", concurrency=1, env=None) -> WorkerProcess``; all stopped after."""
    from django.conf import settings
    from django.db import connection

    db_path = connection.settings_dict["NAME"]
    workers: list[WorkerProcess] = []

    def start(queues: str = "celery", concurrency: int = 1, env: dict | None = None) -> WorkerProcess:
        name = f"w{len(workers) + 1}-{os.getpid()}@test"
        log_path = tmp_path / f"{name.split('@')[0]}.log"
        full_env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "console.settings",
            "REDIS_URL": celery_redis.url,
            "DATABASE_URL": f"sqlite:///{db_path}",
            "NAMESRV_ADDR": settings.MQ["NAMESRV_ADDR"],
            "PYTHONUNBUFFERED": "1",
            **(env or {}),
        }
        argv = [sys.executable, "-m", "celery", "-A", "console", "worker", "-Q", queues, "-c", str(concurrency),
                "-P", "prefork", "-n", name, "--without-mingle", "--without-gossip", "-l", "INFO"]
        with open(log_path, "wb") as out:
            proc = subprocess.Popen(argv, cwd=ROOT, env=full_env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        worker = WorkerProcess(proc, log_path, name, full_env)
        workers.append(worker)
        worker.wait_ready()
        return worker

    yield start
    for worker in workers:
        worker.stop()
