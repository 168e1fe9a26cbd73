"""Restart time of a broker with a big commit log: process start -> first acknowledged send.

A name server and a broker run as subprocesses (``python -m brokers.engine ...``); the client is
this process (already running, as a producer waiting for the broker would be). For each log size
(default 1 GiB, then 4 GiB, the same store grown in place):

1. the store is filled offline, fast: this process opens the broker's store directory itself
   (the broker is stopped) and appends batches of ~1 KB messages with a UNIQ_KEY (so the index
   fills as with real producers) over ``--topics`` x ``--queues`` consume queues, then closes it
   cleanly;
2. **clean stop**: the broker is started on it (the engine's cluster harness, a ProcessCluster) and
   the clock runs from just before its ``Popen`` until a fresh
   producer (route lookup on the name server included) gets a send acknowledged;
3. **SIGKILL**: the running broker takes a burst of sends, is killed with SIGKILL right after
   the last acknowledgement, and is timed again the same way.

    .venv/bin/python bench/restart_bench.py [--sizes-gib 1,4] [--topics 250] [--queues 8] [--keep]

One run each; figures go to docs/benchmarks.md. Needs free disk for the largest size plus the
index (~0.5 GiB); everything is deleted at the end (``--keep`` leaves the directory).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from processes import ClusterSpec, ProcessCluster  # noqa: E402

from brokers.engine.cluster import GroupSpec  # noqa: E402

from brokers.engine.client.admin import BlockingMQAdminClient  # noqa: E402
from brokers.engine.client.simple import AsyncSimpleProducer  # noqa: E402
from brokers.engine.common.message import Message, properties_to_string  # noqa: E402
from brokers.engine.common.topic_config import TopicConfig  # noqa: E402
from brokers.engine.store import DefaultMessageStore, StoreConfig  # noqa: E402
from brokers.engine.store.message_inner import MessageExtBatch  # noqa: E402

TOPIC_PREFIX = "RestartTopic"
SEND_TOPIC = f"{TOPIC_PREFIX}0"
BODY_SIZE = 1024
BATCH = 64
GIB = 1 << 30


BROKER = "restart-broker"


def new_cluster(tmp: Path) -> ProcessCluster:
    """A name server for the whole run and one broker (its store under ``tmp``), started and stopped at will;
    the broker keeps its ports across restarts (the harness's ``restart_broker``)."""
    return ProcessCluster(ClusterSpec(str(tmp), groups=(GroupSpec(BROKER),)), log_level="INFO", ready_timeout_s=300.0)


def create_topics(cluster: ProcessCluster, topics: int, queues: int) -> None:
    admin = BlockingMQAdminClient(cluster.namesrv_addr, timeout_s=10.0)
    try:
        addr = cluster.addr(BROKER)
        for i in range(topics):
            admin.create_or_update_topic(addr, TopicConfig(f"{TOPIC_PREFIX}{i}", queues, queues))
    finally:
        admin.close()


def fill(store_dir: Path, target: int, topics: int, queues: int) -> tuple[int, float]:
    """Append ~1 KB messages offline until the commit log reaches ``target`` bytes; return
    (messages added, seconds)."""
    started = time.perf_counter()
    body = os.urandom(BODY_SIZE)
    added = 0
    store = DefaultMessageStore(StoreConfig(store_dir=str(store_dir)))
    store.open()
    try:
        n = store.max_phy_offset // 1200
        while store.max_phy_offset < target:
            entries = []
            for _ in range(BATCH):
                n += 1
                entries.append((0, body, properties_to_string({"UNIQ_KEY": f"7F000001{n:024X}", "TAGS": "TagA"})))
            q = n // BATCH
            batch = MessageExtBatch(
                topic=f"{TOPIC_PREFIX}{q % topics}",
                queue_id=(q // topics) % queues,
                body=b"",
                entries=entries,
                born_timestamp=int(time.time() * 1000),
            )
            result = store.put_messages_sync(batch)
            if not result.ok:
                raise RuntimeError(f"fill failed: {result}")
            added += BATCH
    finally:
        store.close()
    return added, time.perf_counter() - started


async def first_ack(namesrv: str, t0: float, timeout_s: float = 120.0) -> float:
    """Seconds from ``t0`` until a fresh producer gets a send acknowledged (retrying every 10 ms)."""
    deadline = t0 + timeout_s
    while True:
        producer = AsyncSimpleProducer(
            namesrv, "restart-bench", timeout_s=1.0, retry_times=0, heartbeat_interval_s=None
        )
        try:
            await producer.send(Message(SEND_TOPIC, b"first after restart"))
            return time.perf_counter() - t0
        except Exception:
            if time.perf_counter() > deadline:
                raise
        finally:
            await producer.close()
        await asyncio.sleep(0.01)


async def burst(namesrv: str, n: int) -> None:
    """Send ``n`` messages (pipelined) so the killed broker had work in flight."""
    async with AsyncSimpleProducer(namesrv, "restart-burst", timeout_s=10.0) as producer:
        sem = asyncio.Semaphore(64)
        body = os.urandom(BODY_SIZE)

        async def one() -> None:
            async with sem:
                await producer.send(Message(SEND_TOPIC, body))

        await asyncio.gather(*(one() for _ in range(n)))


def recovery_line(cluster: ProcessCluster) -> str:
    log = cluster.brokers[BROKER].log.read_text(errors="replace")
    for line in log.splitlines():
        if "store recovery" in line:
            return line.split("store recovery: ", 1)[-1]
    return ""


async def restart_until_first_ack(cluster: ProcessCluster) -> float:
    """Seconds from just before the broker's start (its ``Popen``) until a fresh producer's first acknowledged
    send; the producer tries while the broker starts, as a waiting producer would."""
    t0 = time.perf_counter()
    started = asyncio.create_task(asyncio.to_thread(cluster.restart_broker, BROKER))
    t = await first_ack(cluster.namesrv_addr, t0)
    await started
    return t


def measure(cluster: ProcessCluster, size: int, burst_n: int) -> list[tuple[str, float, str]]:
    rows = []
    t = asyncio.run(restart_until_first_ack(cluster))
    rows.append(("clean stop", t, recovery_line(cluster)))
    asyncio.run(burst(cluster.namesrv_addr, burst_n))
    cluster.kill_broker(BROKER)
    t = asyncio.run(restart_until_first_ack(cluster))
    rows.append(("SIGKILL", t, recovery_line(cluster)))
    cluster.stop_broker(BROKER)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes-gib", default="1,4", help="commit log sizes to measure, in GiB, ascending")
    ap.add_argument("--topics", type=int, default=250)
    ap.add_argument("--queues", type=int, default=8, help="queues per topic (topics x queues consume queues)")
    ap.add_argument("--burst", type=int, default=20_000, help="messages sent just before the SIGKILL")
    ap.add_argument("--dir", default=None, help="parent directory of the store (default: the temp dir)")
    ap.add_argument("--keep", action="store_true", help="leave the store directory behind")
    args = ap.parse_args()
    sizes = [float(s) for s in args.sizes_gib.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="bench-restart-", dir=args.dir))
    cluster = new_cluster(tmp)
    results = []
    try:
        cluster.start()
        create_topics(cluster, args.topics, args.queues)
        cluster.stop_broker(BROKER)
        store_dir = Path(cluster.spec.store_dir(cluster.spec.member(BROKER)))
        for gib in sizes:
            added, secs = fill(store_dir, int(gib * GIB), args.topics, args.queues)
            print(f"# filled to {gib:g} GiB: {added} messages in {secs:.1f} s", file=sys.stderr, flush=True)
            for case, t, report in measure(cluster, int(gib * GIB), args.burst):
                print(f"# {gib:g} GiB {case}: {t:.2f} s  ({report})", file=sys.stderr, flush=True)
                results.append((gib, case, t))
    finally:
        cluster.stop()
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, {args.topics} topics x {args.queues} queues, {BODY_SIZE} B bodies"
    )
    print("| commit log | restart after | process start -> first acknowledged send (s) |")
    print("| ---: | --- | ---: |")
    for gib, case, t in results:
        print(f"| {gib:g} GiB | {case} | {t:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
