"""A name server and one broker (ASYNC_FLUSH unless told) as a ProcessCluster for the performance-goal benches
(bench/user_api_bench.py, bench/broker_bench.py), with the topics created (8 queues each unless
told).

``broker_profile`` runs the broker under cProfile (bench/profiled_main.py, ``profile_clock`` wall
or cpu): the broker stops on SIGTERM by returning from its main, so the profile is written.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from processes import ClusterSpec, ProcessCluster

from brokers.engine.cluster import GroupSpec
from brokers.engine.store.config import ASYNC_FLUSH, SYNC_FLUSH

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.common.topic_config import TopicConfig

ROOT = Path(__file__).resolve().parent.parent
QUEUES = 8


BROKER = "userbench-broker"


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
    spec = ClusterSpec(
        str(tmp),
        groups=(GroupSpec(BROKER),),
        store_overrides={"flush_disk_type": SYNC_FLUSH if flush == "sync" else ASYNC_FLUSH},
    )
    profiled = (
        {BROKER: (sys.executable, str(ROOT / "bench" / "profiled_main.py"), str(broker_profile), profile_clock)}
        if broker_profile
        else {}
    )
    try:
        with ProcessCluster(spec, launchers=profiled) as servers:
            with BlockingMQAdminClient(servers.namesrv_addr, timeout_s=5.0) as admin:
                for topic in topics:
                    admin.create_or_update_topic(servers.addr(BROKER), TopicConfig(topic, queues, queues))
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
            yield servers.namesrv_addr, servers.pid(BROKER)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
