"""The measured workloads of bench/broker_bench.py, one function per system and operation.

Each takes a :class:`~bench_common.Meter`, does its set-up (client, connection, route) outside the
measurement, starts the meter, does ``n`` messages and returns the meter's Run. Gantry and the
minimal asyncio broker are driven by the same client (``AsyncSimpleProducer``, ``AsyncPullClient``);
Redis by ``redis.asyncio``, which uses hiredis when it is installed.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import redis
import redis.asyncio as aredis

from bench_common import Meter, Run
from processes import free_port, wait_ready

from brokers.engine.client.simple import AsyncPullClient, AsyncSimpleProducer, PullStatus
from brokers.engine.common.message import Message

BENCH = Path(__file__).resolve().parent


@contextmanager
def minimal_broker(queues: int) -> Iterator[tuple[str, int]]:
    """bench/minimal_broker.py as a subprocess: yield (its address, its pid)."""
    with tempfile.TemporaryDirectory(prefix="bench-minimal-") as tmp:
        port, log = free_port(), Path(tmp) / "minimal.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    str(BENCH / "minimal_broker.py"),
                    "--port",
                    str(port),
                    "--file",
                    str(Path(tmp) / "appended"),
                    "--queues",
                    str(queues),
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            wait_ready(proc, log, 30.0)
            yield f"127.0.0.1:{port}", proc.pid
        finally:
            proc.terminate()
            proc.wait(30)


async def _produce(meter: Meter, namesrv: str, topic: str, n: int, body: bytes, batch: int, inflight: int) -> Run:
    """``n`` messages, single sends (``batch`` 1) or batches, ``inflight`` requests at once, round
    robin over the topic's queues (a batch per queue)."""
    async with AsyncSimpleProducer(namesrv, "bench-producer", timeout_s=30.0) as producer:
        queues = await producer.fetch_publish_message_queues(topic)
        await producer.send(Message(topic, body), queues[0])  # connect + route outside the measurement
        sem = asyncio.Semaphore(inflight)

        async def one(i: int) -> None:
            async with sem:
                mq = queues[(i // batch) % len(queues)]
                if batch == 1:
                    await producer.send(Message(topic, body), mq)
                else:
                    await producer.send_batch([Message(topic, body) for _ in range(min(batch, n - i))], mq)

        meter.start()
        await asyncio.gather(*(one(i) for i in range(0, n, batch)))
        return meter.stop(n)


def produce(meter: Meter, namesrv: str, topic: str, n: int, body: bytes, batch: int, inflight: int) -> Run:
    return asyncio.run(_produce(meter, namesrv, topic, n, body, batch, inflight))


async def _consume(meter: Meter, namesrv: str, topic: str, expected: int, max_nums: int) -> Run:
    """Every queue of ``topic`` from offset 0 to its end, ``max_nums`` per pull, one pull in flight
    per queue."""
    async with AsyncPullClient(namesrv, "bench-consumer", timeout_s=30.0) as puller:
        queues = await puller.fetch_subscribe_message_queues(topic)
        await puller.pull(queues[0], 0, max_nums=1)  # connect outside the measurement
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

        meter.start()
        await asyncio.gather(*(drain(mq) for mq in queues))
        run = meter.stop(sum(counts))
    if sum(counts) < expected:
        raise RuntimeError(f"consumed {sum(counts)} of {expected}")
    return run


def consume(meter: Meter, namesrv: str, topic: str, expected: int, max_nums: int) -> Run:
    return asyncio.run(_consume(meter, namesrv, topic, expected, max_nums))


async def _redis_produce(meter: Meter, port: int, stream: str, n: int, body: bytes, batch: int, inflight: int) -> Run:
    """``XADD`` one at a time or pipelines (``transaction=False``) of ``batch``, ``inflight`` at once."""
    client = aredis.Redis(port=port, max_connections=inflight)
    await client.delete(stream)  # outside the measurement: the stream does not grow run after run
    sem = asyncio.Semaphore(inflight)

    async def one(i: int) -> None:
        async with sem:
            if batch == 1:
                await client.xadd(stream, {"body": body})
            else:
                pipe = client.pipeline(transaction=False)
                for _ in range(min(batch, n - i)):
                    pipe.xadd(stream, {"body": body})
                await pipe.execute()

    try:
        meter.start()
        await asyncio.gather(*(one(i) for i in range(0, n, batch)))
        return meter.stop(n)
    finally:
        await client.aclose()


def redis_produce(meter: Meter, port: int, stream: str, n: int, body: bytes, batch: int, inflight: int) -> Run:
    return asyncio.run(_redis_produce(meter, port, stream, n, body, batch, inflight))


async def _redis_consume(meter: Meter, port: int, stream: str, n: int, count: int) -> Run:
    """``XRANGE`` of ``count`` entries from the start of ``stream``, one request at a time."""
    client = aredis.Redis(port=port)
    await client.ping()
    got, last = 0, "-"
    try:
        meter.start()
        while got < n:
            rows = await client.xrange(stream, min=last, max="+", count=count)
            if last != "-":
                rows = rows[1:] if rows and rows[0][0] == last else rows
            if not rows:
                break
            got += len(rows)
            last = rows[-1][0]
        run = meter.stop(got)
    finally:
        await client.aclose()
    if got < n:
        raise RuntimeError(f"redis consume read {got} of {n}")
    return run


def redis_consume(meter: Meter, port: int, stream: str, n: int, count: int) -> Run:
    return asyncio.run(_redis_consume(meter, port, stream, n, count))


def redis_fill(port: int, stream: str, n: int, body: bytes) -> None:
    """``n`` entries in ``stream`` (outside any measurement), for the consume row."""
    client = redis.Redis(port=port)
    client.delete(stream)
    for i in range(0, n, 1000):
        pipe = client.pipeline(transaction=False)
        for _ in range(min(1000, n - i)):
            pipe.xadd(stream, {"body": body})
        pipe.execute()
    client.close()


def redis_pid(port: int) -> int:
    client = redis.Redis(port=port)
    try:
        return int(client.info("server")["process_id"])
    finally:
        client.close()
