"""The 5.x gRPC path against the 4.x remoting path, same broker, same run: produce and consume throughput,
and the broker's CPU per message on each.

A name server and one broker (``--grpc-port``) are subprocesses. Each path moves the same messages
(``--messages`` of ``--size`` bytes, ``--threads`` senders each sending one at a time, what an application
calls):

- gRPC: Apache's official Python client (``rocketmq-python-client``): ``Producer.send``; then a
  ``SimpleConsumer`` receiving 32 at a time and acking each message (the 5.x model: one ack per message;
  a batch's acks in flight together from a pool of threads);
- remoting: Gantry's own client: ``Producer.send``; then a ``PullClient`` pulling 32 at a time and
  committing the offset once per pull.

Per row: messages/s, the broker's CPU (``/proc/<pid>/stat`` user + system) and the client's (this
process, ``os.times``) per message, and the gRPC / remoting ratios (throughput goal >= 0.5). The two
processes share the machine's cores, so their CPU per message together bounds the throughput: on 2 cores,
no more than 2 / (broker + client) messages per second, and no more than 1 / client while the client is
held to one core by its interpreter lock.

    .venv/bin/python bench/grpc_bench.py [--messages 4000] [--size 256] [--threads 4]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from bench_common import cpu_seconds, own_cpu  # noqa: E402
from processes import start_grpc_broker  # noqa: E402

from brokers.engine.client.admin import BlockingMQAdminClient  # noqa: E402
from brokers.engine.client.producer import Producer  # noqa: E402
from brokers.engine.client.simple import PullClient  # noqa: E402
from brokers.engine.common.message import Message  # noqa: E402
from brokers.engine.common.topic_config import TopicConfig  # noqa: E402


def in_threads(threads: int, total: int, work) -> float:
    """Run ``work(i)`` for i in range(total) over ``threads`` threads; the wall seconds."""
    counter = iter(range(total))
    lock = threading.Lock()

    def loop():
        while True:
            with lock:
                i = next(counter, None)
            if i is None:
                return
            work(i)

    started = time.perf_counter()
    workers = [threading.Thread(target=loop) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return time.perf_counter() - started


def measured(pid: int, messages: int, run) -> tuple[float, float, float]:
    """(messages/s, broker CPU µs per message, client CPU µs per message) of ``run()``."""
    before, own_before = cpu_seconds(pid), own_cpu()
    seconds = run()
    return (
        messages / seconds,
        (cpu_seconds(pid) - before) / messages * 1e6,
        (own_cpu() - own_before) / messages * 1e6,
    )


Measured = tuple[float, float, float]


def remoting_path(namesrv: str, topic: str, args, pid: int) -> tuple[Measured, Measured]:
    body = b"r" * args.size
    producer = Producer("bench_remoting_producer", namesrv)
    producer.start()
    try:
        produce = measured(
            pid,
            args.messages,
            lambda: in_threads(args.threads, args.messages, lambda i: producer.send(Message(topic, body))),
        )
    finally:
        producer.shutdown()

    def consume() -> float:
        started = time.perf_counter()
        with PullClient(namesrv, "bench_remoting_group", heartbeat_interval_s=None) as puller:
            got = 0
            for mq in puller.fetch_subscribe_message_queues(topic):
                offset = 0
                while True:
                    result = puller.pull(mq, offset, 32)
                    if not result.messages:
                        break
                    got += len(result.messages)
                    offset = result.next_begin_offset
                    puller.update_offset(mq, offset)
        assert got == args.messages, f"remoting consumed {got} of {args.messages}"
        return time.perf_counter() - started

    return produce, measured(pid, args.messages, consume)


def grpc_path(endpoint: str, topic: str, args, pid: int) -> tuple[Measured, Measured]:
    from rocketmq import ClientConfiguration, Credentials, FilterExpression
    from rocketmq import Message as Message5
    from rocketmq import Producer as Producer5
    from rocketmq import SimpleConsumer

    config = ClientConfiguration(endpoint, Credentials(), request_timeout=10)
    producer = Producer5(config, (topic,))
    producer.startup()
    body = b"g" * args.size

    def send(i: int) -> None:
        msg = Message5()
        msg.topic, msg.body = topic, body
        producer.send(msg)

    try:
        produce = measured(pid, args.messages, lambda: in_threads(args.threads, args.messages, send))
    finally:
        producer.shutdown()
    consumer = SimpleConsumer(config, "bench_grpc_group", {topic: FilterExpression("*")}, await_duration=1)
    consumer.startup()

    acks = ThreadPoolExecutor(args.threads * 2, thread_name_prefix="ack")

    def consume() -> float:
        started = time.perf_counter()
        got = 0
        while got < args.messages:
            batch = consumer.receive(32, 60)
            list(
                acks.map(consumer.ack, batch)
            )  # the batch's acks in flight together (ack_async returns no future in 5.1.2)
            got += len(batch)
            if not batch and time.perf_counter() - started > 120:
                raise AssertionError(f"gRPC consumed {got} of {args.messages}")
        return time.perf_counter() - started

    try:
        return produce, measured(pid, args.messages, consume)
    finally:
        acks.shutdown()
        consumer.shutdown()


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}×" if b else "n/a (too few messages to measure)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=4000)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        with start_grpc_broker(Path(tmp)) as cluster:
            namesrv_addr, broker_addr = cluster.namesrv_addr, cluster.addr("broker-a")
            with BlockingMQAdminClient(namesrv_addr) as admin:
                for topic in ("BenchRemoting", "BenchGrpc"):
                    admin.create_or_update_topic(broker_addr, TopicConfig(topic, 4, 4))
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    try:
                        admin.examine_topic_route_info("BenchGrpc")
                        admin.examine_topic_route_info("BenchRemoting")
                        break
                    except Exception:  # noqa: BLE001 - not registered yet
                        time.sleep(0.2)
            pid = cluster.pid("broker-a")
            remote = remoting_path(namesrv_addr, "BenchRemoting", args, pid)
            grpc = grpc_path(str(cluster.grpc_addr("broker-a")), "BenchGrpc", args, pid)
    print(f"{args.messages} messages of {args.size} B, {args.threads} sending threads; load {os.getloadavg()[0]:.2f}")
    print(
        "| path | produce msgs/s | broker CPU µs/msg | client CPU µs/msg "
        "| consume msgs/s | broker CPU µs/msg | client CPU µs/msg |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, (produced, consumed) in (
        ("remoting (Gantry's client)", remote),
        ("gRPC (Apache's Python client)", grpc),
    ):
        print(f"| {name} | " + " | ".join(f"{value:,.0f}" for value in (*produced, *consumed)) + " |")
    ratios = [ratio(grpc[i][j], remote[i][j]) for i in (0, 1) for j in (0, 1, 2)]
    print("| gRPC / remoting | " + " | ".join(ratios) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
