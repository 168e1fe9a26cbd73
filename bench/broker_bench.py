"""Produce and consume throughput of Gantry's broker for 1 KB messages, on loopback.

Beside it, in the same run and with the same message size, count, batching and concurrency:
redis-server Streams through redis-py, and a raw buffered file append (bench/baselines.py).

The name server and the broker run as subprocesses (`python -m brokers.engine ...`) so that the
broker has a core to itself, as it would in production; the client is this process.

    .venv/bin/python bench/broker_bench.py [--messages 50000] [--size 1024] [--batch 32] [--inflight 64]
                                           [--pull 32] [--extra-pull 256]

Single sends keep ``--inflight`` requests in flight, batches ``--inflight / --batch`` (as many
messages), on both systems. Consumers read 32 messages per request (RocketMQ's default pull
batch); ``--extra-pull N`` adds a row per system reading N per request.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from baselines import Figure, batches_in_flight, file_append_figures, redis_figures  # noqa: E402
from processes import free_port, wait_ready  # noqa: E402

from brokers.engine.client.admin import BlockingMQAdminClient  # noqa: E402
from brokers.engine.client.simple import AsyncPullClient, AsyncSimpleProducer, PullStatus  # noqa: E402
from brokers.engine.common.message import Message  # noqa: E402
from brokers.engine.common.topic_config import TopicConfig  # noqa: E402

TOPIC = "BenchTopic"
QUEUES = 4


@contextmanager
def gantry(flush: str):
    tmp = Path(tempfile.mkdtemp(prefix="bench-gantry-"))
    ns_port, broker_port = free_port(), free_port()
    procs = []
    try:
        for name, argv in (
            ("namesrv", ["namesrv", "--port", str(ns_port)]),
            ("broker", ["broker", "--name", "bench-broker", "--port", str(broker_port),
                        "--namesrv", f"127.0.0.1:{ns_port}", "--store-dir", str(tmp / "store"), "--flush", flush]),
        ):
            log = tmp / f"{name}.log"
            with open(log, "wb") as out:
                proc = subprocess.Popen([sys.executable, "-m", "brokers.engine", *argv, "--log-level", "WARNING"]
                                        if name == "broker" else [sys.executable, "-m", "brokers.engine", *argv],
                                        cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
            procs.append(proc)
            wait_ready(proc, log, 30.0)
        namesrv = f"127.0.0.1:{ns_port}"
        admin = BlockingMQAdminClient(namesrv, timeout_s=5.0)
        admin.create_or_update_topic(f"127.0.0.1:{broker_port}", TopicConfig(TOPIC, QUEUES, QUEUES))
        deadline = time.monotonic() + 10
        while True:
            try:
                if admin.examine_topic_route_info(TOPIC).queue_datas:
                    break
            except Exception:
                if time.monotonic() > deadline:
                    raise
            time.sleep(0.05)
        admin.close()
        yield namesrv
    finally:
        for proc in reversed(procs):
            proc.terminate()
            proc.wait(30)
        shutil.rmtree(tmp, ignore_errors=True)


async def _produce(namesrv: str, n: int, body: bytes, batch: int, inflight: int) -> float:
    async with AsyncSimpleProducer(namesrv, "bench-producer", timeout_s=30.0) as producer:
        queues = await producer.fetch_publish_message_queues(TOPIC)
        await producer.send(Message(TOPIC, body), queues[0])  # connect + route outside the timing
        sem = asyncio.Semaphore(inflight)

        async def one(i: int) -> None:
            async with sem:
                mq = queues[(i // batch) % len(queues)]
                if batch == 1:
                    await producer.send(Message(TOPIC, body), mq)
                else:
                    await producer.send_batch([Message(TOPIC, body) for _ in range(min(batch, n - i))], mq)

        start = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(0, n, batch)))
        return time.perf_counter() - start


async def _consume(namesrv: str, expected: int, max_nums: int) -> float:
    async with AsyncPullClient(namesrv, "bench-consumer", timeout_s=30.0) as puller:
        queues = await puller.fetch_subscribe_message_queues(TOPIC)
        counts = []

        async def drain(mq) -> None:
            offset, got = 0, 0
            while True:
                result = await puller.pull(mq, offset, max_nums=max_nums)
                if result.status != PullStatus.FOUND:
                    break
                got += len(result.messages)
                offset = result.next_begin_offset
            counts.append(got)

        start = time.perf_counter()
        await asyncio.gather(*(drain(mq) for mq in queues))
        elapsed = time.perf_counter() - start
    if sum(counts) < expected:
        raise RuntimeError(f"consumed {sum(counts)} of {expected}")
    return elapsed


def gantry_figures(n: int, size: int, batch: int, inflight: int, pulls: tuple[int, ...]) -> list[Figure]:
    body = os.urandom(size)
    out = []
    for flush, durability in (("async", "ASYNC_FLUSH"), ("sync", "SYNC_FLUSH (group commit)")):
        with gantry(flush) as namesrv:
            t = asyncio.run(_produce(namesrv, n, body, 1, inflight))
            out.append(Figure("gantry", "produce single", durability, n, t))
            t = asyncio.run(_produce(namesrv, n, body, batch, batches_in_flight(inflight, batch)))
            out.append(Figure("gantry", f"produce batch {batch}", durability, n, t))
            for pull in pulls:  # everything produced above (and the connect message), from offset 0
                t = asyncio.run(_consume(namesrv, 2 * n + 1, pull))
                out.append(Figure("gantry", f"consume (pull {pull} per request)", durability, 2 * n + 1, t))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=50_000)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--inflight", type=int, default=64, help="concurrent single sends (batches: inflight/batch)")
    ap.add_argument("--pull", type=int, default=32, help="messages per pull / XRANGE count")
    ap.add_argument("--extra-pull", type=int, default=0, metavar="N", help="also consume with N messages per pull / XRANGE")
    args = ap.parse_args()
    pulls = (args.pull, args.extra_pull) if args.extra_pull else (args.pull,)
    figures = gantry_figures(args.messages, args.size, args.batch, args.inflight, pulls)
    figures += redis_figures(args.messages, args.size, args.batch, args.inflight, pulls)
    figures += file_append_figures(args.messages, args.size)
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, {args.messages} messages of {args.size} B")
    print("| system | operation | durability | messages | seconds | msgs/s | MB/s |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: |")
    for f in figures:
        print(f"| {f.system} | {f.operation} | {f.durability} | {f.messages} | {f.seconds:.2f} | "
              f"{f.rate:,.0f} | {f.rate * args.size / 1e6:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
