"""End-to-end numbers of the load-balancing clients (Producer, PushConsumer) on loopback.

A name server and two brokers run as subprocesses (``python -m brokers.engine``, ASYNC_FLUSH);
a topic has 4 queues on each broker (8 in all).

1. Latency at fixed rates (the goals' row "end-to-end latency, Gantry Producer -> PushConsumer,
   1 KB, at 1,000 and 5,000 msgs/s"): for each rate of ``--rates``, on a fresh topic, one Producer
   sends that many messages/s (``send_async``, ``--size``-byte bodies carrying their send time)
   for ``--seconds``; one PushConsumer in another process records, per message, the time its
   listener got it. Reported per rate: /proc/loadavg before it, the achieved rate, send
   acknowledgement latency and end-to-end latency (send call to listener call), p50, p99, p999.
2. Throughput with 1, 2 and 4 consumers (skipped with ``--latency-only``): ``--messages`` messages
   are stored in a fresh topic of 8 queues; k consumer processes of a fresh group (FIRST_OFFSET,
   AVG) start with their listeners held at a gate; once they hold every queue between them (read
   with GET_CONSUMER_RUNNING_INFO) the gate opens; msgs/s = messages / (last first-time delivery -
   gate opening).

    .venv/bin/python bench/client_bench.py [--rates 1000,5000] [--size 1024] [--seconds 10]
                                           [--messages 20000] [--latency-only] [--freeze-app-heap]

``--freeze-app-heap``: the producing process and the consumer processes (the "applications") call
``gc.freeze()`` once their client has started, as the broker and the name server do after their
start-up (``brokers/engine/common/gc_freeze.py``); without it their full collections walk every
object they imported (~16-37 ms each on the 2-core VM, a few per run), which sets the p99.

Every consumer is a process of its own (each has its own GIL, as separate services would).
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_common import loadavg  # noqa: E402
from processes import ClusterSpec, ProcessCluster  # noqa: E402

from brokers.engine.cluster import GroupSpec  # noqa: E402
from brokers.engine.client import ClientConfig, ConsumeConcurrentlyStatus, Message, Producer, PushConsumer  # noqa: E402
from brokers.engine.client.admin import BlockingMQAdminClient  # noqa: E402
from brokers.engine.common.gc_freeze import freeze_startup_heap  # noqa: E402
from brokers.engine.common.topic_config import TopicConfig  # noqa: E402

TOPIC = "ClientBench"
QUEUES = 4
BROKERS = ("bench-a", "bench-b")


FREEZE_ENV = "GANTRY_BENCH_FREEZE_APP_HEAP"


@contextmanager
def cluster():
    """A name server and the BROKERS (async flush) as a ProcessCluster, TOPIC on each; yields (namesrv, tmp)."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-client-"))
    spec = ClusterSpec(str(tmp), groups=tuple(GroupSpec(name) for name in BROKERS))
    try:
        with ProcessCluster(spec) as servers, BlockingMQAdminClient(servers.namesrv_addr, timeout_s=5.0) as admin:
            for name in BROKERS:
                admin.create_or_update_topic(servers.addr(name), TopicConfig(TOPIC, QUEUES, QUEUES))
            deadline = time.monotonic() + 60  # a loaded machine registers slowly
            while len(admin.examine_topic_route_info(TOPIC).queue_datas) < len(BROKERS):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{TOPIC} not routed to every broker")
                time.sleep(0.05)
            yield servers.namesrv_addr, tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def percentile(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))] if values else float("nan")


# -- consumer worker (a subprocess) ----------------------------------------------------------------


def worker(namesrv: str, group: str, out: str, instance: str, topic: str) -> None:
    """Consume until SIGTERM; write a line per message: receive time and the body's first word.

    Listeners wait until the file ``<out>.go`` exists (the throughput gate)."""
    import signal

    fh = open(out, "a", encoding="utf-8")
    lock = threading.Lock()
    gate = threading.Event()

    def watch_gate() -> None:
        while not os.path.exists(out + ".go"):
            time.sleep(0.005)
        gate.set()

    threading.Thread(target=watch_gate, daemon=True).start()

    def listener(msgs):
        gate.wait()
        now = time.time()
        with lock:
            for m in msgs:
                fh.write(f"{now:.6f} {m.body.split(b' ', 1)[0].decode()}\n")
            fh.flush()
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    consumer = PushConsumer(
        group,
        namesrv,
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        instance_name=instance,
        client_config=ClientConfig(rebalance_interval_s=2.0),
    )
    consumer.subscribe(topic)
    consumer.register_listener(listener)
    consumer.start()
    if os.environ.get(FREEZE_ENV):
        freeze_startup_heap()
    with lock:
        fh.write("ready\n")
        fh.flush()
    stop.wait()
    consumer.shutdown()


def start_workers(
    namesrv: str, group: str, k: int, tmp: Path, topic: str = TOPIC
) -> tuple[list[subprocess.Popen], list[Path]]:
    procs, outs = [], []
    for i in range(k):
        out = tmp / f"{group}-{i}.txt"
        outs.append(out)
        procs.append(
            subprocess.Popen(
                [sys.executable, __file__, "--worker", namesrv, group, str(out), f"{group}-{i}", topic], cwd=ROOT
            )
        )
    return procs, outs


def wait_ready(outs: list[Path]) -> None:
    deadline = time.monotonic() + 60
    while not all(o.exists() and "ready" in o.read_text() for o in outs):
        if time.monotonic() > deadline:
            raise RuntimeError("consumers not ready")
        time.sleep(0.05)


def read_lines(outs: list[Path]) -> list[tuple[float, str]]:
    rows = []
    for out in outs:
        if out.exists():
            for line in out.read_text().splitlines():
                if line != "ready" and " " in line:
                    t, sent = line.split(" ", 1)
                    rows.append((float(t), sent))
    return rows


def stop_workers(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        p.wait(30)


# -- the two measurements --------------------------------------------------------------------------


def latency(namesrv: str, tmp: Path, rate: int, seconds: float, size: int) -> dict:
    """One rate on a fresh topic and group: the send-ack and end-to-end latencies."""
    topic = f"{TOPIC}Lat{rate}"
    group = f"lat-{rate}"
    create_topic(namesrv, topic)
    (tmp / f"{group}-0.txt.go").touch()  # no gate
    procs, outs = start_workers(namesrv, group, 1, tmp, topic)
    try:
        wait_ready(outs)
        # What the harness keeps while it sends is kept small and flat (floats in lists, the futures still
        # in flight): 10,000s of retained futures and keys made this process's own full garbage
        # collections take 30-85 ms mid-run, and those pauses, not Gantry, were the p99.
        acks: list[float] = []
        n = int(rate * seconds)
        sent_at = [0.0] * n  # message i's send time (time.time()); its body starts with "i@"
        with Producer("bench-producer", namesrv) as producer:
            producer.send(Message(topic, b"warmup ".ljust(size, b"x")))  # route and connections outside the timing
            if os.environ.get(FREEZE_ENV):
                freeze_startup_heap()
            load = loadavg()
            start = time.perf_counter()
            in_flight: collections.deque = collections.deque()
            for i in range(n):
                due = start + i / rate
                delay = due - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
                now = time.time()
                body = f"{i}@{now:.6f} ".encode().ljust(size, b"x")
                t0 = time.perf_counter()
                f = producer.send_async(Message(topic, body))
                f.add_done_callback(lambda _f, t0=t0: acks.append(time.perf_counter() - t0))
                in_flight.append(f)
                sent_at[i] = now
                while in_flight and in_flight[0].done():
                    in_flight.popleft().result()
            for f in in_flight:
                f.result(30)
            achieved = n / (time.perf_counter() - start)
        deadline = time.monotonic() + 60
        while True:
            rows = [(t, int(key.split("@", 1)[0])) for t, key in read_lines(outs) if "@" in key]
            if len(rows) >= n or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        e2e = [t - sent_at[i] for t, i in rows]
        out = {
            "rate": rate,
            "size": size,
            "load_before": load,
            "achieved_rate": round(achieved),
            "messages": n,
            "received": len(rows),
        }
        for name, values in (("ack", acks), ("e2e", e2e)):
            for label, p in (("p50", 0.5), ("p99", 0.99), ("p999", 0.999)):
                out[f"{name}_{label}_ms"] = round(percentile(values, p) * 1000, 3)
        return out
    finally:
        stop_workers(procs)


def print_latency_table(results: list[dict]) -> None:
    print(
        "\n| rate msgs/s (achieved) | size | load before | received | e2e p50 ms | e2e p99 ms | e2e p999 ms | "
        "ack p50 ms | ack p99 ms | ack p999 ms |"
    )
    print("| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in results:
        print(
            f"| {r['rate']:,} ({r['achieved_rate']:,}) | {r['size']} B | {r['load_before']} | {r['received']:,} of {r['messages']:,} | "
            f"{r['e2e_p50_ms']:.2f} | {r['e2e_p99_ms']:.2f} | {r['e2e_p999_ms']:.2f} | "
            f"{r['ack_p50_ms']:.2f} | {r['ack_p99_ms']:.2f} | {r['ack_p999_ms']:.2f} |"
        )


def create_topic(namesrv: str, topic: str) -> None:
    with BlockingMQAdminClient(namesrv, timeout_s=5.0) as admin:
        for addr in admin.examine_broker_cluster_info().master_addrs():
            admin.create_or_update_topic(addr, TopicConfig(topic, QUEUES, QUEUES))
        while len(admin.examine_topic_route_info(topic).queue_datas) < len(BROKERS):
            time.sleep(0.05)


def wait_balanced(namesrv: str, group: str, k: int, topic: str) -> None:
    """Until the k consumers hold the topic's 8 queues between them, each exactly once."""
    from brokers.engine.client.identity import local_ip

    ids = [f"{local_ip()}@{group}-{i}" for i in range(k)]
    deadline = time.monotonic() + 60
    with BlockingMQAdminClient(namesrv, timeout_s=5.0) as admin:
        while time.monotonic() < deadline:
            try:
                held = [
                    mq
                    for cid in ids
                    for mq in admin.get_consumer_running_info(group, cid).mq_table
                    if mq.topic == topic
                ]
            except Exception:
                held = []
            if len(held) == len(BROKERS) * QUEUES and len(set(held)) == len(held):
                return
            time.sleep(0.1)
    raise RuntimeError("consumers did not balance")


def throughput(namesrv: str, tmp: Path, k: int, n: int) -> dict:
    group, topic = f"tput-{k}", f"{TOPIC}{k}"
    create_topic(namesrv, topic)
    with Producer("bench-loader", namesrv) as producer:
        queues = producer.fetch_publish_message_queues(topic)

        def batch(i: int) -> None:
            msgs = [Message(topic, (f"{i + j} ").encode().ljust(256, b"x")) for j in range(min(32, n - i))]
            producer.send_batch(msgs, queues[(i // 32) % len(queues)])

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            list(pool.map(batch, range(0, n, 32)))
    procs, outs = start_workers(namesrv, group, k, tmp, topic)
    try:
        wait_ready(outs)
        wait_balanced(namesrv, group, k, topic)
        start = time.time()
        for out in outs:
            Path(str(out) + ".go").touch()
        deadline = time.monotonic() + 300
        while True:
            rows = read_lines(outs)
            first_seen: dict[str, float] = {}
            for t, sent in rows:
                first_seen[sent] = min(t, first_seen.get(sent, t))
            if len(first_seen) >= n or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        elapsed = max(first_seen.values()) - start
        return {
            "consumers": k,
            "messages": len(first_seen),
            "deliveries": len(rows),
            "seconds": round(elapsed, 3),
            "msgs_per_s": round(len(first_seen) / elapsed),
        }
    finally:
        stop_workers(procs)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(*sys.argv[2:7])
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rates", default="1000,5000", help="comma-separated send rates of the latency phase, msgs/s")
    parser.add_argument("--rate", type=int, help="a single rate (same as --rates N)")
    parser.add_argument("--size", type=int, default=1024, help="body size of the latency phase, bytes")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each rate's send")
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--latency-only", action="store_true", help="only the latency phase")
    parser.add_argument(
        "--freeze-app-heap",
        action="store_true",
        help="the producing and consuming processes gc.freeze() once their clients started",
    )
    args = parser.parse_args()
    if args.freeze_app_heap:
        os.environ[FREEZE_ENV] = "1"  # the consumer processes inherit it
    rates = [args.rate] if args.rate else [int(r) for r in args.rates.split(",") if r.strip()]
    print(
        f"{platform.node()} {platform.processor() or platform.machine()} cores={os.cpu_count()} python={platform.python_version()}"
        f"{' app heaps frozen after start-up' if args.freeze_app_heap else ''}"
    )
    with cluster() as (namesrv, tmp):
        results = []
        for rate in rates:
            results.append(latency(namesrv, tmp, rate, args.seconds, args.size))
            print(json.dumps(results[-1]), flush=True)
        print_latency_table(results)
        if not args.latency_only:
            for k in (1, 2, 4):
                print(json.dumps(throughput(namesrv, tmp, k, args.messages)), flush=True)


if __name__ == "__main__":
    main()
