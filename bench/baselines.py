"""Baselines for the broker benchmark: Redis Streams through redis-py, and a raw file append.

Both run on this machine in the same run as the Gantry figures, with the same message size,
count, batching and concurrency, so the comparison is like for like.
"""
from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass

import redis
import redis.asyncio as aredis

from processes import free_port


@dataclass(frozen=True)
class Figure:
    system: str
    operation: str
    durability: str
    messages: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.messages / self.seconds if self.seconds else float("inf")


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
        [exe, "--port", str(port), "--bind", "127.0.0.1", "--dir", tmp, "--save", "",
         "--appendonly", "yes", "--appendfsync", appendfsync, "--daemonize", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
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


async def _redis_consume(port: int, n: int, count: int) -> float:
    client = aredis.Redis(port=port)
    got, last = 0, "-"
    start = time.perf_counter()
    while got < n:
        rows = await client.xrange("bench", min=last, max="+", count=count)
        if last != "-":
            rows = rows[1:] if rows and rows[0][0] == last else rows
        if not rows:
            break
        got += len(rows)
        last = rows[-1][0]
    elapsed = time.perf_counter() - start
    await client.aclose()
    if got < n:
        raise RuntimeError(f"redis consume read {got} of {n}")
    return elapsed


def redis_figures(n: int, size: int, batch: int, inflight: int, pull_counts: tuple[int, ...]) -> list[Figure]:
    """Single and pipelined XADD, then XRANGE reads of the pipelined stream, per AOF fsync policy.

    Pipelines of ``batch`` XADDs are sent ``batches_in_flight(inflight, batch)`` at a time, as
    Gantry's batches are.
    """
    body = os.urandom(size)
    out = []
    for fsync, durability in (("everysec", "async (AOF everysec)"), ("always", "sync (AOF always)")):
        for b in (1, batch):
            with redis_server(fsync) as port:
                t = asyncio.run(_redis_produce(port, n, body, b, inflight if b == 1 else batches_in_flight(inflight, b)))
                out.append(Figure("redis streams", f"produce {'single' if b == 1 else f'batch {b}'}", durability, n, t))
                if b == batch:
                    for count in pull_counts:
                        t = asyncio.run(_redis_consume(port, n, count))
                        out.append(Figure("redis streams", f"consume (XRANGE count {count})", durability, n, t))
    return out


def file_append_figures(n: int, size: int) -> list[Figure]:
    """A raw buffered append of length-prefixed records, fsynced once at the end."""
    body = os.urandom(size)
    header = len(body).to_bytes(4, "big")
    with tempfile.TemporaryDirectory(prefix="bench-file-") as tmp:
        path = os.path.join(tmp, "log")
        start = time.perf_counter()
        with open(path, "ab", buffering=1 << 20) as fh:
            for _ in range(n):
                fh.write(header)
                fh.write(body)
            fh.flush()
            os.fsync(fh.fileno())
        elapsed = time.perf_counter() - start
        start = time.perf_counter()
        count = 0
        with open(path, "rb", buffering=1 << 20) as fh:
            while True:
                h = fh.read(4)
                if not h:
                    break
                fh.read(int.from_bytes(h, "big"))
                count += 1
        read_elapsed = time.perf_counter() - start
    assert count == n
    return [
        Figure("raw file", "append (buffered, one fsync at end)", "fsync at end", n, elapsed),
        Figure("raw file", "read back", "-", n, read_elapsed),
    ]
