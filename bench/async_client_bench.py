"""The public asyncio producer against redis-py's asyncio client, same concurrency (goals row 3).

    .venv/bin/python bench/async_client_bench.py [--messages 20000] [--inflight 64] [--size 1024] [--runs 3]

One Gantry broker (ASYNC_FLUSH) and name server in subprocesses, and a redis-server with AOF
``everysec``, on this machine. Each run alternates: ``AsyncProducer.send`` with ``--inflight``
sends in flight (asyncio.gather over a semaphore), then redis.asyncio ``XADD`` with as many in
flight (hiredis parses replies when installed; the output says whether it is). Then
``AsyncPushConsumer`` delivery of what was sent, from the first offset, to a coroutine listener.
Medians and spread of the runs are printed; nothing is asserted (no timing in the test suite).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import client_bench  # noqa: E402
from baselines import _redis_produce, redis_server  # noqa: E402
from brokers.engine.client import AsyncProducer, AsyncPushConsumer, ConsumeConcurrentlyStatus, Message  # noqa: E402
from brokers.engine.client.simple import AsyncSimpleProducer  # noqa: E402


async def gantry_produce(namesrv: str, n: int, body: bytes, inflight: int, simple: bool = False) -> float:
    """``simple``: the internal AsyncSimpleProducer (a reference: the send path without Producer's selection)."""
    client = (
        AsyncSimpleProducer(namesrv, "async-bench-simple") if simple else AsyncProducer("async-bench-producer", namesrv)
    )
    async with client as producer:
        await producer.send(Message(client_bench.TOPIC, body))  # route and connection before the clock starts
        sem = asyncio.Semaphore(inflight)

        async def one() -> None:
            async with sem:
                await producer.send(Message(client_bench.TOPIC, body))

        start = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(n)))
        return time.perf_counter() - start


async def gantry_consume(namesrv: str, n: int, group: str) -> float:
    got = 0
    done = asyncio.Event()

    async def on_messages(msgs, context) -> ConsumeConcurrentlyStatus:
        nonlocal got
        got += len(msgs)
        if got >= n:
            done.set()
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    consumer = AsyncPushConsumer(group, namesrv, consume_from_where="CONSUME_FROM_FIRST_OFFSET")
    consumer.subscribe(client_bench.TOPIC)
    consumer.register_listener(on_messages)
    start = time.perf_counter()
    async with consumer:
        await asyncio.wait_for(done.wait(), 300)
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--inflight", type=int, default=64)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    try:
        import hiredis  # noqa: F401

        parser_name = "hiredis"
    except ImportError:
        parser_name = "pure-Python parser"
    client_bench.BROKERS = ("bench-a",)  # one broker against one redis-server
    body = os.urandom(args.size // 2).hex().encode()[: args.size]
    rates: dict[str, list[float]] = {"gantry": [], "redis": [], "consume": [], "simple": []}
    print(f"load before: {os.getloadavg()[0]:.2f}; redis-py with {parser_name}")
    with client_bench.cluster() as (namesrv, _tmp), redis_server("everysec") as port:
        for run in range(args.runs):
            g = args.messages / asyncio.run(gantry_produce(namesrv, args.messages, body, args.inflight))
            r = args.messages / asyncio.run(_redis_produce(port, args.messages, body, 1, args.inflight))
            c = (
                (run + 1)
                * args.messages
                / asyncio.run(gantry_consume(namesrv, (run + 1) * args.messages, f"async-bench-{run}"))
            )
            rates["gantry"].append(g)
            rates["redis"].append(r)
            rates["consume"].append(c)
            rates["simple"].append(
                args.messages / asyncio.run(gantry_produce(namesrv, args.messages, body, args.inflight, simple=True))
            )
            print(
                f"run {run + 1}: AsyncProducer {g:,.0f} msgs/s, redis.asyncio XADD {r:,.0f} msgs/s ({g / r:.2f}x); "
                f"AsyncPushConsumer {c:,.0f} msgs/s (from the first offset, start included); "
                f"internal AsyncSimpleProducer {rates['simple'][-1]:,.0f} msgs/s"
            )
    for name, values in rates.items():
        print(f"{name}: median {statistics.median(values):,.0f} msgs/s, spread {min(values):,.0f}-{max(values):,.0f}")
    ratios = [g / r for g, r in zip(rates["gantry"], rates["redis"])]
    print(
        f"AsyncProducer / redis.asyncio ({parser_name}), {args.inflight} in flight, {args.size} B: median {statistics.median(ratios):.2f}x, "
        f"spread {min(ratios):.2f}-{max(ratios):.2f}x"
    )


if __name__ == "__main__":
    main()
