"""Produce throughput of a broker group on loopback, and the replication lag at a steady rate.

One run, same messages and batching for every row: a lone master (ASYNC_MASTER, no slave), an
ASYNC_MASTER with one slave, and a SYNC_MASTER with one slave (a send answered only once the
slave has it). Name server, master and slave are subprocesses (`python -m brokers.engine ...`),
the producer is this process (the internal async producer, batches as bench/broker_bench.py);
CPU per message of the master and the slave (/proc/<pid>/stat) and of this producer (os.times).
Then, on the ASYNC_MASTER group, a steady rate of single sends while the master's runtime info
(GET_BROKER_RUNTIME_INFO: haReplicationLagBytes, haReplicationLagMs = age of the oldest
record the slave lacks) is sampled every 50 ms.

    .venv/bin/python bench/ha_bench.py [--messages 50000] [--size 1024] [--batch 32] [--inflight 64]
                                       [--rate 2000] [--seconds 5]
"""
from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import statistics
import subprocess
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
from bench_common import cpu_seconds, own_cpu  # noqa: E402
from processes import free_port, start_on_fresh_ports, stop_all, wait_ready  # noqa: E402

from brokers.engine.client.admin import BlockingMQAdminClient  # noqa: E402
from brokers.engine.client.simple import AsyncSimpleProducer  # noqa: E402
from brokers.engine.common.message import Message  # noqa: E402
from brokers.engine.common.topic_config import TopicConfig  # noqa: E402

TOPIC = "HaBenchTopic"
QUEUES = 4


@contextmanager
def group(role: str, slave: bool, flush: str = "async"):
    """Name server + master (+ slave); yields (namesrv, master addr, admin client, [master pid, slave pid])."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-ha-"))
    procs: list[subprocess.Popen] = []
    admin = None
    try:
        namesrv, master, admin = start_on_fresh_ports(
            lambda attempt: _start(tmp / f"try{attempt}", procs, role, slave, flush), lambda: stop_all(procs), "group")
        yield namesrv, master, admin, [proc.pid for proc in procs[1:]]
    finally:
        if admin is not None:
            admin.close()
        stop_all(procs)
        shutil.rmtree(tmp, ignore_errors=True)


def _start(tmp: Path, procs: list[subprocess.Popen], role: str, slave: bool, flush: str):
    """Start the group's processes into ``procs``; (namesrv, master addr, admin client) once the
    topic is routable and, with a slave, the slave is connected."""
    tmp.mkdir(parents=True)
    ns_port, master_port, slave_port = free_port(), free_port(), free_port()
    master_ha, slave_ha = free_port(), free_port()
    namesrv = f"127.0.0.1:{ns_port}"
    common = ["--namesrv", namesrv, "--flush", flush, "--log-level", "WARNING"]
    members = [("namesrv", ["namesrv", "--port", str(ns_port)]),
               ("master", ["broker", "--name", "bench-a", "--port", str(master_port), "--ha-port", str(master_ha),
                           "--store-dir", str(tmp / "master"), "--broker-id", "0", "--role", role, *common])]
    if slave:
        members.append(("slave", ["broker", "--name", "bench-a", "--port", str(slave_port), "--ha-port", str(slave_ha),
                                  "--store-dir", str(tmp / "slave"), "--broker-id", "1", "--role", "SLAVE",
                                  "--master-ha-addr", f"127.0.0.1:{master_ha}", *common]))
    for name, argv in members:
        log = tmp / f"{name}.log"
        with open(log, "wb") as out:
            procs.append(subprocess.Popen([sys.executable, "-m", "brokers.engine", *argv], cwd=ROOT,
                                          stdout=out, stderr=subprocess.STDOUT))
        wait_ready(procs[-1], log, 30.0)
    master = f"127.0.0.1:{master_port}"
    admin = BlockingMQAdminClient(namesrv, timeout_s=5.0)
    try:
        admin.create_or_update_topic(master, TopicConfig(TOPIC, QUEUES, QUEUES))
        deadline = time.monotonic() + 15
        while True:  # the route is there and, with a slave, the slave is connected
            info = admin.get_broker_runtime_info(master)
            try:
                routed = bool(admin.examine_topic_route_info(TOPIC).queue_datas)
            except Exception:
                routed = False
            if routed and (not slave or info.get("haSlaveCount") == "1"):
                return namesrv, master, admin
            if time.monotonic() > deadline:
                raise RuntimeError(f"group not ready: {info.get('haConnectionState')}")
            time.sleep(0.05)
    except BaseException:
        admin.close()
        raise


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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=50_000)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--inflight", type=int, default=64)
    ap.add_argument("--rate", type=int, default=2000, help="steady single sends per second for the lag figure")
    ap.add_argument("--seconds", type=float, default=5.0)
    args = ap.parse_args()
    body = os.urandom(args.size)
    rows = []
    for label, role, slave in (("lone master", "ASYNC_MASTER", False), ("ASYNC_MASTER + slave", "ASYNC_MASTER", True),
                               ("SYNC_MASTER + slave", "SYNC_MASTER", True)):
        with group(role, slave) as (namesrv, _master, _admin, pids):
            for batch in (args.batch, 1):
                inflight = batches_in_flight(args.inflight, batch) if batch > 1 else args.inflight
                before = [cpu_seconds(pid) for pid in pids] + [own_cpu()]
                seconds, statuses = asyncio.run(produce(namesrv, args.messages, body, batch, inflight))
                time.sleep(0.3)  # the slave's dispatch and flushes behind the last answer
                cpu = [(after - b) / args.messages * 1e6 for after, b in zip([cpu_seconds(pid) for pid in pids] + [own_cpu()], before)]
                shares = " · ".join(f"{us:.1f}" for us in cpu) if slave else f"{cpu[0]:.1f} · — · {cpu[1]:.1f}"
                rows.append((label, f"produce batch {batch}" if batch > 1 else "produce single", seconds, statuses, shares))
    with group("ASYNC_MASTER", True) as (namesrv, master, admin, _pids):
        def sample() -> tuple[int, int]:
            info = admin.get_broker_runtime_info(master)
            return int(info.get("haReplicationLagBytes", -1)), int(info.get("haReplicationLagMs", -1))

        samples = asyncio.run(steady(namesrv, body, args.rate, args.seconds, sample))
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, {args.messages} messages of {args.size} B, ASYNC_FLUSH")
    print("| group | operation | messages | seconds | msgs/s | vs lone master | CPU µs/msg master · slave · producer | send statuses |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |")
    base = {op: args.messages / s for label, op, s, _, _ in rows if label == "lone master"}
    for label, op, seconds, statuses, cpu in rows:
        rate = args.messages / seconds
        print(f"| {label} | {op} | {args.messages} | {seconds:.2f} | {rate:,.0f} | {rate / base[op]:.2f}x | {cpu} | "
              f"{', '.join(f'{k} {v}' for k, v in sorted(statuses.items()))} |")
    lag_bytes = sorted(b for b, _ in samples if b >= 0)
    lag_ms = sorted(m for _, m in samples if m >= 0)
    if lag_bytes:
        p = lambda xs, q: xs[min(len(xs) - 1, int(q * len(xs)))]  # noqa: E731
        print(f"\nASYNC_MASTER replication lag at {args.rate} msgs/s of {args.size} B for {args.seconds:.0f} s "
              f"({len(lag_bytes)} samples of the master's runtime info): bytes median {statistics.median(lag_bytes):.0f}, "
              f"p99 {p(lag_bytes, 0.99)}, max {lag_bytes[-1]}; ms median {statistics.median(lag_ms):.0f}, "
              f"p99 {p(lag_ms, 0.99)}, max {lag_ms[-1]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
