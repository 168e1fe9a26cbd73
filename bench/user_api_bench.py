"""What a user calls: Gantry's public clients against redis-py + hiredis, row by row (the goals' rows 1–4).

The public API exactly as docs/clients.md shows it (``from brokers.engine.client import Producer,
PushConsumer, Message``) against redis-py in the configuration users install (``redis[hiredis]``),
on one machine, in one run:

1. ``Producer.send`` of 1 KB, one call after another  vs  ``XADD`` one after another;
2. ``Producer.send_batch`` of 32, one after another  vs  a pipeline of 32 ``XADD``s, one after another;
3. the public asyncio ``AsyncProducer``, 64 sends in flight  vs  ``redis.asyncio`` + hiredis, 64
   ``XADD``s in flight;
4. ``PushConsumer`` delivery to a listener, 8 queues, one process (32 per pull, one message per
   listener call, the defaults)  vs  ``XREADGROUP`` of 32 + a call per message + ``XACK``.

The name server and the broker run as subprocesses (ASYNC_FLUSH), redis-server privately with AOF
``everysec`` (bench/baselines.py); the clients are this process. Each row runs three times,
alternating which system goes first; each run lasts ``--seconds`` (send rows) or delivers
``--consume-messages`` (row 4). Printed: /proc/loadavg before every run, then a markdown table of
medians with min-max, the ratio Gantry / Redis (per-run ratios' median and spread), and CPU per
message of the server process (/proc/<pid>/stat) and of this client process (os.times).

    .venv/bin/python bench/user_api_bench.py [--seconds 2.5] [--size 1024] [--runs 3]
                                             [--consume-messages 50000] [--profile DIR]

``--profile DIR`` instead runs row 1's Gantry side once for ``--seconds`` with the broker under
cProfile (its main thread: the event loop) and this client under cProfile (every thread, the
client's loop thread included), timed by each thread's CPU clock (``--profile-clock wall``: wall time), writes DIR/broker.prof and DIR/client.prof, and prints the top
functions of each by tottime (bench/profiling.py).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import threading
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import redis  # noqa: E402
import redis.asyncio as aredis  # noqa: E402

from baselines import redis_server  # noqa: E402
from bench_common import Row, Run, alternate, machine_header, print_loads, require_hiredis, timed  # noqa: E402
from bench_common import print_table as common_table  # noqa: E402
from profiling import ThreadProfiles, print_top  # noqa: E402
from user_api_cluster import QUEUES, gantry_cluster  # noqa: E402

from brokers.engine.client import AsyncProducer, ConsumeConcurrentlyStatus, Message, Producer, PushConsumer  # noqa: E402

SEND_TOPIC = "UserBenchSend"
CONSUME_TOPIC = "UserBenchConsume"
STREAM = "userbench"
BATCH = 32
INFLIGHT = 64


# -- the Gantry side (the public API as docs/clients.md shows it) -----------------------------------------


def gantry_send(producer: Producer, body: bytes, seconds: float) -> Callable[[], int]:
    def go() -> int:
        n, deadline = 0, time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            producer.send(Message(SEND_TOPIC, body))
            n += 1
        return n

    return go


def gantry_send_batch(producer: Producer, body: bytes, seconds: float) -> Callable[[], int]:
    def go() -> int:
        n, deadline = 0, time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            producer.send_batch([Message(SEND_TOPIC, body) for _ in range(BATCH)])
            n += BATCH
        return n

    return go


def gantry_async_send(namesrv: str, body: bytes, seconds: float) -> Callable[[], int]:
    """The public asyncio producer (the goals' row 3): 64 sends in flight for ``seconds``, with
    ``AsyncProducer``'s documented API (``await start()``, ``await send(msg)``, ``await stop()``)."""

    async def run() -> int:
        producer = AsyncProducer("userbench-async", namesrv)
        await producer.start()
        try:
            await producer.send(Message(SEND_TOPIC, body))  # route and connection outside the count
            count, deadline = [0], time.perf_counter() + seconds

            async def worker() -> None:
                while time.perf_counter() < deadline:
                    await producer.send(Message(SEND_TOPIC, body))
                    count[0] += 1

            await asyncio.gather(*(worker() for _ in range(INFLIGHT)))
            return count[0]
        finally:
            await producer.stop()

    return lambda: asyncio.run(run())


def gantry_push(broker_pid: int, namesrv: str, expected: int, run_no: int) -> Run:
    """A fresh group from the first offset; timed from ``start()`` to the ``expected``-th delivery.

    The shutdown (offsets persisted, connections closed) comes after the timing, so that it does
    not run into the next measurement."""
    lock, done, seen = threading.Lock(), threading.Event(), [0]

    def listener(msgs) -> ConsumeConcurrentlyStatus:
        with lock:
            seen[0] += len(msgs)
            if seen[0] >= expected:
                done.set()
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    consumer = PushConsumer(
        f"userbench-push-{run_no}-{os.getpid()}", namesrv, consume_from_where="CONSUME_FROM_FIRST_OFFSET"
    )
    consumer.subscribe(CONSUME_TOPIC)
    consumer.register_listener(listener)

    def go() -> int:
        consumer.start()
        if not done.wait(300):
            raise RuntimeError(f"PushConsumer delivered {seen[0]} of {expected}")
        return seen[0]

    try:
        return timed(broker_pid, go)
    finally:
        consumer.shutdown()


# -- the Redis side (redis-py + hiredis) ---------------------------------------------------------------


def redis_send(client: redis.Redis, body: bytes, seconds: float) -> Callable[[], int]:
    def go() -> int:
        n, deadline = 0, time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            client.xadd(STREAM, {"body": body})
            n += 1
        return n

    return go


def redis_pipeline(client: redis.Redis, body: bytes, seconds: float) -> Callable[[], int]:
    def go() -> int:
        n, deadline = 0, time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            pipe = client.pipeline(transaction=False)
            for _ in range(BATCH):
                pipe.xadd(STREAM, {"body": body})
            pipe.execute()
            n += BATCH
        return n

    return go


def redis_async_send(port: int, body: bytes, seconds: float) -> Callable[[], int]:
    async def run() -> int:
        client = aredis.Redis(port=port, max_connections=INFLIGHT)
        await client.ping()
        count, deadline = [0], time.perf_counter() + seconds

        async def worker() -> None:
            while time.perf_counter() < deadline:
                await client.xadd(STREAM, {"body": body})
                count[0] += 1

        try:
            await asyncio.gather(*(worker() for _ in range(INFLIGHT)))
        finally:
            await client.aclose()
        return count[0]

    return lambda: asyncio.run(run())


def redis_consume(client: redis.Redis, stream: str, expected: int, run_no: int) -> Callable[[], int]:
    def listener(fields: dict) -> None:  # what a user's handler is handed, once per message
        return None

    def go() -> int:
        group = f"userbench-{run_no}-{os.getpid()}"
        client.xgroup_create(stream, group, id="0")
        got = 0
        while got < expected:
            resp = client.xreadgroup(group, "c1", {stream: ">"}, count=BATCH)
            if not resp:
                break
            ids = []
            for _, entries in resp:
                for entry_id, fields in entries:
                    listener(fields)
                    ids.append(entry_id)
            client.xack(stream, group, *ids)
            got += len(ids)
        return got

    return go


# -- the table ---------------------------------------------------------------------------------------------


def print_table(rows: list[Row], args: argparse.Namespace) -> None:
    print(
        "\n"
        + machine_header(
            f"{require_hiredis()}, {args.size} B, {args.runs} runs, {args.seconds} s per send run, "
            f"{args.consume_messages} per consume run"
        )
        + "\n"
    )
    common_table(rows)
    print_loads(rows)


# -- main ----------------------------------------------------------------------------------------------------


def bench(args: argparse.Namespace) -> list[Row]:
    require_hiredis()
    body = os.urandom(args.size)
    rows = []
    with gantry_cluster((SEND_TOPIC, CONSUME_TOPIC)) as (namesrv, broker_pid), redis_server("everysec") as port:
        client = redis.Redis(port=port)
        redis_pid = int(client.info("server")["process_id"])
        parser = type(client.connection_pool.get_connection()._parser).__name__
        print(f"redis-py parser: {parser}", flush=True)

        def fresh_stream() -> None:  # outside the timing: the stream does not grow run after run
            client.delete(STREAM)

        with Producer("userbench-producer", namesrv) as producer:
            producer.send(Message(SEND_TOPIC, body))  # route and connection outside the timing
            producer.send_batch([Message(SEND_TOPIC, body) for _ in range(BATCH)])

            row = Row("`Producer.send`, one after another, 1 KB  vs  `XADD`", "≥ 1.5×")
            alternate(
                row,
                args.runs,
                lambda i: timed(broker_pid, gantry_send(producer, body, args.seconds)),
                lambda i: (fresh_stream(), timed(redis_pid, redis_send(client, body, args.seconds)))[1],
            )
            rows.append(row)

            row = Row("`Producer.send_batch` of 32, one after another  vs  pipeline of 32 `XADD`", "≥ 2×")
            alternate(
                row,
                args.runs,
                lambda i: timed(broker_pid, gantry_send_batch(producer, body, args.seconds)),
                lambda i: (fresh_stream(), timed(redis_pid, redis_pipeline(client, body, args.seconds)))[1],
            )
            rows.append(row)

            # the consume row's data, outside the timing: the same messages in both systems
            for i in range(0, args.consume_messages, BATCH):
                producer.send_batch(
                    [Message(CONSUME_TOPIC, body) for _ in range(min(BATCH, args.consume_messages - i))]
                )
        fresh_stream()
        for i in range(0, args.consume_messages, 1000):
            pipe = client.pipeline(transaction=False)
            for _ in range(min(1000, args.consume_messages - i)):
                pipe.xadd("userbench-consume", {"body": body})
            pipe.execute()

        row = Row("asyncio producer, 64 in flight, 1 KB  vs  `redis.asyncio` `XADD`, 64 in flight", "≥ 2×")
        alternate(
            row,
            args.runs,
            lambda i: timed(broker_pid, gantry_async_send(namesrv, body, args.seconds)),
            lambda i: (fresh_stream(), timed(redis_pid, redis_async_send(port, body, args.seconds)))[1],
        )
        rows.append(row)

        row = Row(f"`PushConsumer` to a listener, {QUEUES} queues, one process  vs  `XREADGROUP` 32 + `XACK`", "≥ 2×")
        alternate(
            row,
            args.runs,
            lambda i: gantry_push(broker_pid, namesrv, args.consume_messages, i),
            lambda i: timed(redis_pid, redis_consume(client, "userbench-consume", args.consume_messages, i)),
        )
        rows.append(row)
        client.close()
    return rows


def profile(args: argparse.Namespace) -> None:
    out = Path(args.profile).resolve()
    out.mkdir(parents=True, exist_ok=True)
    body = os.urandom(args.size)
    profiles = ThreadProfiles(args.profile_clock)
    with gantry_cluster((SEND_TOPIC,), broker_profile=out / "broker.prof", profile_clock=args.profile_clock) as (
        namesrv,
        _pid,
    ):
        with profiles:  # every thread started from here on (the client's loop thread) and this one
            with Producer("userbench-producer", namesrv) as producer:
                producer.send(Message(SEND_TOPIC, body))
                n = gantry_send(producer, body, args.seconds)()
    profiles.dump(out / "client.prof")
    print(f"{n} sends profiled")
    print_top(
        out / "broker.prof", f"broker (main thread: the event loop), {n} sends, {args.profile_clock} clock", args.top
    )
    print_top(
        out / "client.prof", f"client (this process, every thread), {n} sends, {args.profile_clock} clock", args.top
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=2.5, help="length of each send run")
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--consume-messages", type=int, default=50_000)
    ap.add_argument("--profile", metavar="DIR", help="profile row 1's Gantry side instead (see above)")
    ap.add_argument(
        "--profile-clock",
        choices=("wall", "cpu"),
        default="cpu",
        help="cpu: time.thread_time (waits count for nothing); wall: cProfile's default",
    )
    ap.add_argument("--top", type=int, default=15, help="functions printed per profile")
    args = ap.parse_args()
    if args.profile:
        profile(args)
        return 0
    print_table(bench(args), args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
