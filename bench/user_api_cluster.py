"""A name server and one broker (ASYNC_FLUSH unless told) as subprocesses for the performance-goal benches
(bench/user_api_bench.py, bench/broker_bench.py), with the topics created (8 queues each unless
told).

``broker_profile`` runs the broker under cProfile (bench/profiled_main.py, ``profile_clock`` wall
or cpu): the broker stops on SIGTERM by returning from its main, so the profile is written.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from processes import free_port, start_on_fresh_ports, stop_all, wait_ready

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.common.topic_config import TopicConfig

ROOT = Path(__file__).resolve().parent.parent
QUEUES = 8


@contextmanager
def gantry_cluster(
    topics: tuple[str, ...],
    broker_profile: Path | None = None,
    profile_clock: str = "wall",
    flush: str = "async",
    queues: int = QUEUES,
) -> Iterator[tuple[str, int]]:
    """Yield (name server address, broker pid) with ``topics`` routable; ``flush`` async or sync."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-userapi-"))
    procs: list[subprocess.Popen] = []
    try:
        namesrv = start_on_fresh_ports(
            lambda attempt: _start(tmp / f"try{attempt}", procs, topics, broker_profile, profile_clock, flush, queues),
            lambda: stop_all(procs),
            "cluster",
        )
        yield namesrv, procs[1].pid
    finally:
        stop_all(procs)
        shutil.rmtree(tmp, ignore_errors=True)


def _start(
    tmp: Path,
    procs: list[subprocess.Popen],
    topics: tuple[str, ...],
    broker_profile: Path | None,
    profile_clock: str,
    flush: str,
    queues: int,
) -> str:
    """Start the name server and the broker into ``procs`` and create ``topics``; the name server's address."""
    tmp.mkdir(parents=True)
    ns_port, broker_port = free_port(), free_port()
    namesrv = f"127.0.0.1:{ns_port}"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    broker_argv = [
        "broker",
        "--name",
        "userbench-broker",
        "--port",
        str(broker_port),
        "--namesrv",
        namesrv,
        "--store-dir",
        str(tmp / "store"),
        "--flush",
        flush,
        "--log-level",
        "WARNING",
    ]
    runner = (
        [str(ROOT / "bench" / "profiled_main.py"), str(broker_profile), profile_clock] if broker_profile else ["-m"]
    )
    for name, argv in (
        ("namesrv", [sys.executable, "-m", "brokers.engine", "namesrv", "--port", str(ns_port)]),
        ("broker", [sys.executable, *runner, "brokers.engine", *broker_argv]),
    ):
        log = tmp / f"{name}.log"
        with open(log, "wb") as out:
            procs.append(subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT))
        wait_ready(procs[-1], log, 30.0)
    with BlockingMQAdminClient(namesrv, timeout_s=5.0) as admin:
        for topic in topics:
            admin.create_or_update_topic(f"127.0.0.1:{broker_port}", TopicConfig(topic, queues, queues))
        deadline = time.monotonic() + 10
        for topic in topics:
            while True:
                try:
                    if admin.examine_topic_route_info(topic).queue_datas:
                        break
                except Exception:
                    if time.monotonic() > deadline:
                        raise
                time.sleep(0.05)
    return namesrv
