"""Baselines for the benchmarks: a private redis-server (Streams through redis-py), started per run.

The Redis workloads themselves live beside the Gantry ones they are compared with
(bench/broker_workloads.py, bench/user_api_bench.py), with the same message size, count,
batching and concurrency, so the comparison is like for like.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import tempfile
import time
from contextlib import contextmanager

import redis
import redis.asyncio as aredis

from processes import free_port


def batches_in_flight(inflight: int, batch: int) -> int:
    """Concurrent batch sends for ``inflight`` concurrent single sends: as many messages in flight."""
    return max(1, inflight // batch)


@contextmanager
def redis_server(appendfsync: str):
    """A private redis-server with AOF on: 'everysec' matches ASYNC_FLUSH, 'always' SYNC_FLUSH."""
    exe = shutil.which("redis-server")
    if exe is None:
        raise RuntimeError("redis-server is not installed (make run / make test install it)")
    port = free_port()
    tmp = tempfile.mkdtemp(prefix="bench-redis-")
    proc = subprocess.Popen(
        [
            exe,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--dir",
            tmp,
            "--save",
            "",
            "--appendonly",
            "yes",
            "--appendfsync",
            appendfsync,
            "--daemonize",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        client = redis.Redis(port=port)
        for _ in range(100):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        client.close()
        yield port
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)


async def _redis_produce(port: int, n: int, body: bytes, batch: int, inflight: int) -> float:
    client = aredis.Redis(port=port, max_connections=inflight)
    sem = asyncio.Semaphore(inflight)

    async def one(i: int) -> None:
        async with sem:
            if batch == 1:
                await client.xadd("bench", {"body": body})
            else:
                pipe = client.pipeline(transaction=False)
                for _ in range(min(batch, n - i)):
                    pipe.xadd("bench", {"body": body})
                await pipe.execute()

    start = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(0, n, batch)))
    elapsed = time.perf_counter() - start
    await client.aclose()
    return elapsed
