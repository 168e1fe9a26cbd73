"""Produce throughput of a broker group on loopback, and the replication lag at a steady rate.

One run, same messages and batching for every row: a lone master (ASYNC_MASTER, no slave), an
ASYNC_MASTER with one slave, and a SYNC_MASTER with one slave (a send answered only once the
slave has it), ``--rounds`` times, alternating the order of the three (lone first, then lone
last), each group's rate divided by the lone master's of the same round; the medians and
min–max of those ratios close the output, with /proc/loadavg before each round. Name server, master and slave are subprocesses (`python -m brokers.engine ...`),
the producer is this process (the internal async producer, batches as bench/broker_bench.py);
CPU per message of the master and the slave (/proc/<pid>/stat) and of this producer (os.times).
Then, on the ASYNC_MASTER group, a steady rate of single sends while the master's runtime info
(GET_BROKER_RUNTIME_INFO: haReplicationLagBytes, haReplicationLagMs = age of the oldest
record the slave lacks) is sampled every 50 ms.

``--pin`` puts the master alone on CPU 0 and everything else (slave, name server, producer) on
CPU 1, the same for every group: on a 2-CPU machine the master then never shares its core with
its slave, which is closer to a deployment with the slave on another host. Without it the
scheduler places the three busy processes on the two CPUs as it likes.

    .venv/bin/python bench/ha_bench.py [--messages 50000] [--size 1024] [--batch 32] [--inflight 64]
                                       [--rounds 3] [--pin] [--rate 2000] [--seconds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from baselines import batches_in_flight  # noqa: E402
from bench_common import cpu_seconds, loadavg, own_cpu  # noqa: E402
from processes import ClusterSpec, ProcessCluster  # noqa: E402

from brokers.engine.cluster import GroupSpec  # noqa: E402
from brokers.engine.store.config import ASYNC_FLUSH, SYNC_FLUSH  # noqa: E402

from brokers.engine.client.admin import BlockingMQAdminClient  # noqa: E402
from brokers.engine.client.simple import AsyncSimpleProducer  # noqa: E402
from brokers.engine.common.message import Message  # noqa: E402
from brokers.engine.common.topic_config import TopicConfig  # noqa: E402

TOPIC = "HaBenchTopic"
QUEUES = 4


@contextmanager
def group(role: str, slave: bool, flush: str = "async"):
    """Name server + master (+ slave), a ProcessCluster of the engine's harness; yields (namesrv, master addr,
    admin client, [master pid, slave pid]) once the topic is routable and, with a slave, the slave is connected."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-ha-"))
    spec = ClusterSpec(
        str(tmp),
        groups=(GroupSpec("bench-a", slaves=int(slave), role=role),),
        store_overrides={"flush_disk_type": SYNC_FLUSH if flush == "sync" else ASYNC_FLUSH},
    )
    try:
        with ProcessCluster(spec) as cluster, BlockingMQAdminClient(cluster.namesrv_addr, timeout_s=5.0) as admin:
            master = cluster.addr("bench-a")
            admin.create_or_update_topic(master, TopicConfig(TOPIC, QUEUES, QUEUES))
            deadline = time.monotonic() + 15
            while True:
                try:
                    if admin.examine_topic_route_info(TOPIC).queue_datas:
                        break
                except Exception:  # noqa: BLE001 (not routed yet)
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{TOPIC} not routed within 15 s")
                time.sleep(0.05)
            yield cluster.namesrv_addr, master, admin, [m.pid for m in cluster.brokers.values()]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


async def produce(namesrv: str, n: int, body: bytes, batch: int, inflight: int) -> tuple[float, Counter]:
    statuses: Counter = Counter()
    async with AsyncSimpleProducer(namesrv, "ha-bench-producer", timeout_s=30.0) as producer:
        queues = await producer.fetch_publish_message_queues(TOPIC)
        await producer.send(Message(TOPIC, body), queues[0])  # connect + route outside the timing
        sem = asyncio.Semaphore(inflight)

        async def one(i: int) -> None:
            async with sem:
                mq = queues[(i // batch) % len(queues)]
                if batch == 1:
                    result = await producer.send(Message(TOPIC, body), mq)
                else:
                    result = await producer.send_batch([Message(TOPIC, body) for _ in range(min(batch, n - i))], mq)
                statuses[result.status.value] += 1

        start = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(0, n, batch)))
        return time.perf_counter() - start, statuses


async def steady(namesrv: str, body: bytes, rate: int, seconds: float, sample) -> list[tuple[int, int]]:
    """Single sends at ``rate``/s for ``seconds``; sample the lag every 50 ms meanwhile."""
    samples: list[tuple[int, int]] = []
    async with AsyncSimpleProducer(namesrv, "ha-bench-steady", timeout_s=30.0) as producer:
        queues = await producer.fetch_publish_message_queues(TOPIC)
        loop = asyncio.get_running_loop()
        stop = loop.time() + seconds

        async def sampler() -> None:
            while loop.time() < stop:
                samples.append(await asyncio.to_thread(sample))
                await asyncio.sleep(0.05)

        task = loop.create_task(sampler())
        sent, start = 0, loop.time()
        pending = set()
        while loop.time() < stop:
            due = int((loop.time() - start) * rate)
            while sent < due:
                pending.add(loop.create_task(producer.send(Message(TOPIC, body), queues[sent % len(queues)])))
                sent += 1
            await asyncio.sleep(0.002)
        await asyncio.gather(*pending)
        await task
    return samples


GROUPS = (
    ("lone master", "ASYNC_MASTER", False),
    ("ASYNC_MASTER + slave", "ASYNC_MASTER", True),
    ("SYNC_MASTER + slave", "SYNC_MASTER", True),
)


@contextmanager
def pinned(pids: list[int], pin: bool):
    """With ``pin``: the master alone on CPU 0, the slave and this producer on CPU 1 (the name
    server is idle); this process's own affinity is restored afterwards."""
    if not pin:
        yield
        return
    mine = os.sched_getaffinity(0)
    os.sched_setaffinity(pids[0], {0})
    for pid in pids[1:]:
        os.sched_setaffinity(pid, {1})
    os.sched_setaffinity(0, {1})
    try:
        yield
    finally:
        os.sched_setaffinity(0, mine)


def measure(args: argparse.Namespace, body: bytes, label: str, role: str, slave: bool) -> list[tuple]:
    """One group: a batched run then a single-send run; a row (label, op, seconds, statuses, cpu) each."""
    rows = []
    with group(role, slave) as (namesrv, _master, _admin, pids), pinned(pids, args.pin):
        for batch in (args.batch, 1):
            inflight = batches_in_flight(args.inflight, batch) if batch > 1 else args.inflight
            before = [cpu_seconds(pid) for pid in pids] + [own_cpu()]
            seconds, statuses = asyncio.run(produce(namesrv, args.messages, body, batch, inflight))
            time.sleep(0.3)  # the slave's dispatch and flushes behind the last answer
            cpu = [
                (after - b) / args.messages * 1e6
                for after, b in zip([cpu_seconds(pid) for pid in pids] + [own_cpu()], before)
            ]
            shares = " · ".join(f"{us:.1f}" for us in cpu) if slave else f"{cpu[0]:.1f} · — · {cpu[1]:.1f}"
            rows.append((label, f"produce batch {batch}" if batch > 1 else "produce single", seconds, statuses, shares))
    return rows


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f}x ({min(values):.2f}–{max(values):.2f})" if values else "–"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=50_000)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--inflight", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3, help="rounds of the three groups, alternating their order")
    ap.add_argument(
        "--pin",
        action="store_true",
        help="master alone on CPU 0; slave, name server and producer on CPU 1 (needs 2 CPUs)",
    )
    ap.add_argument("--rate", type=int, default=2000, help="steady single sends per second for the lag figure")
    ap.add_argument("--seconds", type=float, default=5.0)
    args = ap.parse_args()
    if args.rounds < 1 or args.messages < 1:
        ap.error("--rounds and --messages must be at least 1")
    if args.pin and len(os.sched_getaffinity(0)) < 2:
        ap.error("--pin needs at least 2 CPUs")
    body = os.urandom(args.size)
    rows, loads = [], []
    ratios: dict[tuple[str, str], list[float]] = {}
    for r in range(args.rounds):
        loads.append(loadavg())
        order = GROUPS if r % 2 == 0 else tuple(reversed(GROUPS))
        got = [row for label, role, slave in order for row in measure(args, body, label, role, slave)]
        base = {op: args.messages / s for label, op, s, _, _ in got if label == "lone master"}
        for label, op, seconds, statuses, cpu in got:
            ratio = args.messages / seconds / base[op]
            rows.append((r + 1, label, op, seconds, statuses, cpu, ratio))
            if label != "lone master":
                ratios.setdefault((label, op), []).append(ratio)
    with group("ASYNC_MASTER", True) as (namesrv, master, admin, pids), pinned(pids, args.pin):

        def sample() -> tuple[int, int]:
            info = admin.get_broker_runtime_info(master)
            return int(info.get("haReplicationLagBytes", -1)), int(info.get("haReplicationLagMs", -1))

        samples = asyncio.run(steady(namesrv, body, args.rate, args.seconds, sample))
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, {args.messages} messages of {args.size} B, ASYNC_FLUSH, "
        f"{args.inflight} messages in flight, {args.rounds} rounds"
        + (", pinned: master on CPU 0, the rest on CPU 1" if args.pin else "")
    )
    print("/proc/loadavg before each round: " + "; ".join(f"{i + 1}: {load}" for i, load in enumerate(loads)))
    print(
        "| round | group | operation | messages | seconds | msgs/s | vs lone master | CPU µs/msg master · slave · producer | send statuses |"
    )
    print("| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for rnd, label, op, seconds, statuses, cpu, ratio in rows:
        print(
            f"| {rnd} | {label} | {op} | {args.messages} | {seconds:.2f} | {args.messages / seconds:,.0f} | {ratio:.2f}x | {cpu} | "
            f"{', '.join(f'{k} {v}' for k, v in sorted(statuses.items()))} |"
        )
    print("\n| group | operation | vs the lone master of the same round: median (min–max) |")
    print("| --- | --- | ---: |")
    for (label, op), values in ratios.items():
        print(f"| {label} | {op} | {spread(values)} |")
    lag_bytes = sorted(b for b, _ in samples if b >= 0)
    lag_ms = sorted(m for _, m in samples if m >= 0)
    if lag_bytes:
        p = lambda xs, q: xs[min(len(xs) - 1, int(q * len(xs)))]  # noqa: E731
        print(
            f"\nASYNC_MASTER replication lag at {args.rate} msgs/s of {args.size} B for {args.seconds:.0f} s "
            f"({len(lag_bytes)} samples of the master's runtime info): bytes median {statistics.median(lag_bytes):.0f}, "
            f"p99 {p(lag_bytes, 0.99)}, max {lag_bytes[-1]}; ms median {statistics.median(lag_ms):.0f}, "
            f"p99 {p(lag_ms, 0.99)}, max {lag_ms[-1]}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
