"""How fast a slave catches up with its master (broker-group drill 4), on loopback.

Name server, master (ASYNC_MASTER) and slaves are subprocesses (`python -m brokers.engine ...`),
stores in a temporary directory under /tmp, deleted at the end. Two timings:

1. a slave stopped (SIGTERM) while the master takes ``--down-messages`` messages, restarted:
   seconds from its restart until its commit log ends where the master's does;
2. a fresh slave (empty store) added to the group once the master holds ``--gib`` GiB: seconds
   from its start until it holds the master's whole log.

Catch-up is read from GET_BROKER_RUNTIME_INFO (``commitLogMaxOffset`` of both) every 50 ms.

    .venv/bin/python bench/ha_catchup_bench.py [--gib 1.0] [--down-messages 100000] [--size 1024]
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
from brokers.engine.common.message import Message  # noqa: E402
from brokers.engine.common.topic_config import TopicConfig  # noqa: E402

TOPIC = "HaCatchupTopic"
QUEUES = 4
BATCH = 32
INFLIGHT = 8


NAME = "catchup-a"
SLAVE, FRESH = f"{NAME}#1", f"{NAME}#2"


def start_broker(cluster: ProcessCluster, key: str) -> float:
    """Start broker ``key`` of the spec (a restart if it ran); the monotonic time just before its process started."""
    started = time.monotonic()
    if key in cluster.brokers:
        cluster.restart_broker(key)
    else:
        cluster.start_broker(key)
    return started


async def produce(namesrv: str, count: int, size: int) -> None:
    body = os.urandom(size)
    async with AsyncSimpleProducer(namesrv, "ha-catchup-bench", timeout_s=30.0) as producer:
        queues = await producer.fetch_publish_message_queues(TOPIC)
        sem = asyncio.Semaphore(INFLIGHT)

        async def one(i: int) -> None:
            async with sem:
                await producer.send_batch(
                    [Message(TOPIC, body) for _ in range(min(BATCH, count - i))], queues[(i // BATCH) % len(queues)]
                )

        await asyncio.gather(*(one(i) for i in range(0, count, BATCH)))


def max_phy(admin: BlockingMQAdminClient, addr: str) -> int:
    return int(admin.get_broker_runtime_info(addr).get("commitLogMaxOffset", "-1"))


def wait_caught_up(
    admin: BlockingMQAdminClient, master: str, slave: str, since: float, timeout_s: float = 1800
) -> float:
    target = max_phy(admin, master)
    while True:
        try:
            if max_phy(admin, slave) >= target:
                return time.monotonic() - since
        except Exception:
            pass
        if time.monotonic() - since > timeout_s:
            raise RuntimeError(f"slave {slave} not caught up in {timeout_s} s")
        time.sleep(0.05)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gib", type=float, default=1.0, help="master log size before the fresh slave joins")
    ap.add_argument("--down-messages", type=int, default=100_000, help="messages taken while a slave is down")
    ap.add_argument("--size", type=int, default=1024, help="message body bytes")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-ha-catchup-", dir="/tmp"))
    spec = ClusterSpec(str(tmp), groups=(GroupSpec(NAME, slaves=2, role="ASYNC_MASTER"),))
    cluster = ProcessCluster(spec)
    try:
        cluster.start(brokers=(NAME,))
        namesrv, master_addr = cluster.namesrv_addr, cluster.addr(NAME)
        admin = BlockingMQAdminClient(namesrv, timeout_s=10.0)
        admin.create_or_update_topic(master_addr, TopicConfig(TOPIC, QUEUES, QUEUES))
        while not admin.examine_topic_route_info(TOPIC).queue_datas:
            time.sleep(0.05)
        start_broker(cluster, SLAVE)
        slave_addr = cluster.addr(SLAVE)
        asyncio.run(produce(namesrv, 1000, args.size))
        wait_caught_up(admin, master_addr, slave_addr, time.monotonic())

        slave_end = max_phy(admin, slave_addr)
        cluster.stop_broker(SLAVE)
        t = time.monotonic()
        asyncio.run(produce(namesrv, args.down_messages, args.size))
        produce_down_s = time.monotonic() - t
        down_bytes = max_phy(admin, master_addr) - slave_end
        restarted = start_broker(cluster, SLAVE)
        down_s = wait_caught_up(admin, master_addr, slave_addr, restarted)

        target = int(args.gib * (1 << 30))
        t = time.monotonic()
        while max_phy(admin, master_addr) < target:
            remaining = target - max_phy(admin, master_addr)
            asyncio.run(produce(namesrv, max(BATCH, min(50_000, remaining // (args.size + 200) + BATCH)), args.size))
        fill_s = time.monotonic() - t
        log_bytes = max_phy(admin, master_addr)
        started = start_broker(cluster, FRESH)
        fresh_addr = cluster.addr(FRESH)
        fresh_s = wait_caught_up(admin, master_addr, fresh_addr, started)
        admin.close()
        print(
            f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}, loopback, ASYNC_MASTER, ASYNC_FLUSH, bodies of {args.size} B"
        )
        print("| case | log to copy | seconds to catch up | MiB/s |")
        print("| --- | ---: | ---: | ---: |")
        print(
            f"| slave down for {args.down_messages:,} messages, restarted | ~{down_bytes / (1 << 20):,.0f} MiB "
            f"(produced in {produce_down_s:.1f} s) | {down_s:.1f} | {down_bytes / (1 << 20) / down_s:,.0f} |"
        )
        print(
            f"| fresh slave joins a master holding {log_bytes / (1 << 30):.2f} GiB | {log_bytes / (1 << 20):,.0f} MiB "
            f"(filled in {fill_s:.0f} s) | {fresh_s:.1f} | {log_bytes / (1 << 20) / fresh_s:,.0f} |"
        )
        print("(seconds from the slave process's start, store recovery and registration included)")
    finally:
        cluster.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
