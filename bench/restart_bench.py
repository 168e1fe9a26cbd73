"""Restart time of a broker with a big commit log: process start -> first acknowledged send.

A name server and a broker run as subprocesses (``python -m brokers.engine ...``); the client is
this process (already running, as a producer waiting for the broker would be). For each log size
(default 1 GiB, then 4 GiB, the same store grown in place):

1. the store is filled offline, fast: this process opens the broker's store directory itself
   (the broker is stopped) and appends batches of ~1 KB messages with a UNIQ_KEY (so the index
   fills as with real producers) over ``--topics`` x ``--queues`` consume queues, then closes it
   cleanly;
2. **clean stop**: the broker is started on it and the clock runs from ``Popen`` until a fresh
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
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from processes import free_port, wait_ready  # noqa: E402

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


class Cluster:
    """A name server for the whole run and one broker process, started and stopped at will."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.store_dir = tmp / "store"
        self.ns_port, self.broker_port, self.ha_port = free_port(), free_port(), free_port()
        self.namesrv = f"127.0.0.1:{self.ns_port}"
        self.ns_proc = self._spawn("namesrv", ["namesrv", "--port", str(self.ns_port)])
        wait_ready(self.ns_proc, tmp / "namesrv.log", 30.0)
        self.broker: subprocess.Popen | None = None
        self.starts = 0

    def _spawn(self, name: str, argv: list[str]) -> subprocess.Popen:
        with open(self.tmp / f"{name}.log", "ab") as out:
            return subprocess.Popen(
                [sys.executable, "-m", "brokers.engine", *argv], cwd=ROOT, stdout=out, stderr=subprocess.STDOUT
            )

    def start_broker(self) -> float:
        """Start the broker; return the perf_counter time just before Popen."""
        self.starts += 1
        argv = [
            "broker",
            "--name",
            "restart-broker",
            "--port",
            str(self.broker_port),
            "--ha-port",
            str(self.ha_port),
            "--namesrv",
            self.namesrv,
            "--store-dir",
            str(self.store_dir),
            "--log-level",
            "INFO",
        ]
        t0 = time.perf_counter()
        self.broker = self._spawn(f"broker-{self.starts}", argv)
        return t0

    def wait_broker_ready(self) -> None:
        assert self.broker is not None
        wait_ready(self.broker, self.tmp / f"broker-{self.starts}.log", 120.0)

    def stop_broker(self, sig: int = signal.SIGTERM) -> None:
        if self.broker is None:
            return
        self.broker.send_signal(sig)
        self.broker.wait(120)
        self.broker = None

    def close(self) -> None:
        self.stop_broker()
        self.ns_proc.terminate()
        self.ns_proc.wait(30)


def create_topics(cluster: Cluster, topics: int, queues: int) -> None:
    admin = BlockingMQAdminClient(cluster.namesrv, timeout_s=10.0)
    try:
        addr = f"127.0.0.1:{cluster.broker_port}"
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


def recovery_line(cluster: Cluster) -> str:
    log = (cluster.tmp / f"broker-{cluster.starts}.log").read_text(errors="replace")
    for line in log.splitlines():
        if "store recovery" in line:
            return line.split("store recovery: ", 1)[-1]
    return ""


def measure(cluster: Cluster, size: int, burst_n: int) -> list[tuple[str, float, str]]:
    rows = []
    t0 = cluster.start_broker()
    t = asyncio.run(first_ack(cluster.namesrv, t0))
    cluster.wait_broker_ready()
    rows.append(("clean stop", t, recovery_line(cluster)))
    asyncio.run(burst(cluster.namesrv, burst_n))
    cluster.stop_broker(signal.SIGKILL)
    t0 = cluster.start_broker()
    t = asyncio.run(first_ack(cluster.namesrv, t0))
    cluster.wait_broker_ready()
    rows.append(("SIGKILL", t, recovery_line(cluster)))
    cluster.stop_broker()
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
    cluster = Cluster(tmp)
    results = []
    try:
        cluster.start_broker()
        cluster.wait_broker_ready()
        create_topics(cluster, args.topics, args.queues)
        cluster.stop_broker()
        for gib in sizes:
            added, secs = fill(cluster.store_dir, int(gib * GIB), args.topics, args.queues)
            print(f"# filled to {gib:g} GiB: {added} messages in {secs:.1f} s", file=sys.stderr, flush=True)
            for case, t, report in measure(cluster, int(gib * GIB), args.burst):
                print(f"# {gib:g} GiB {case}: {t:.2f} s  ({report})", file=sys.stderr, flush=True)
                results.append((gib, case, t))
    finally:
        cluster.close()
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
