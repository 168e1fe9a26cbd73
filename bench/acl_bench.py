"""Produce throughput with the ACL on vs off, in one run: what the signature check costs a send.

Two clusters run side by side as subprocesses (`python -m brokers.engine ...`, loopback, async
flush): one without an ACL, one with ``--acl-file`` (an admin account creates the topic, a
PUB|SUB account produces, so every send is signed by the client and validated by the broker:
HmacSHA1 over the ext fields and the 1 KiB body, then the PUB check). Rounds alternate between
the two in ABBA order, so a busy neighbour on a shared machine, and each broker's background flush
of the round before, weigh on both alike; the table shows the best and the median round of each.

    .venv/bin/python bench/acl_bench.py [--messages 3000] [--rounds 8] [--size 1024] [--inflight 64]

Rows: single sends one at a time (each waits for its answer: latency-bound) and single sends with
``--inflight`` in flight (throughput-bound). Beside the rates, the CPU time the broker process and
this (client) process spent per message, which a loaded machine disturbs less than wall-clock rates.
Goal: the ACL costs under 10 % of single-send throughput.
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
from contextlib import ExitStack, contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from processes import ClusterSpec, ProcessCluster  # noqa: E402

from brokers.engine.cluster import GroupSpec  # noqa: E402

from brokers.engine.client.admin import BlockingMQAdminClient  # noqa: E402
from brokers.engine.client.simple import AsyncSimpleProducer  # noqa: E402
from brokers.engine.common.message import Message  # noqa: E402
from brokers.engine.common.topic_config import TopicConfig  # noqa: E402

TOPIC = "AclBenchTopic"
QUEUES = 4
ADMIN = ("bench-admin", "bench-admin-secret-0123456789")
PRODUCER = ("bench-producer", "bench-producer-secret-0123456789")
ACL_TEXT = f"""\
accounts:
  - accessKey: {ADMIN[0]}
    secretKey: {ADMIN[1]}
    admin: true
  - accessKey: {PRODUCER[0]}
    secretKey: {PRODUCER[1]}
    defaultTopicPerm: PUB|SUB
    defaultGroupPerm: SUB
"""


@contextmanager
def cluster(acl: bool):
    """A name server and a broker (a ProcessCluster, the ACL file on both when ``acl``); yields (namesrv address, producer keys or None, the broker's pid)."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-acl-"))
    if acl:
        (tmp / "plain_acl.yml").write_text(ACL_TEXT)
        os.chmod(tmp / "plain_acl.yml", 0o600)
    acl_file = {"acl_file": str(tmp / "plain_acl.yml")} if acl else {}
    spec = ClusterSpec(
        str(tmp), groups=(GroupSpec("bench-broker"),), broker_overrides=acl_file, namesrv_overrides=acl_file
    )
    keys = dict(zip(("access_key", "secret_key"), ADMIN)) if acl else {}
    try:
        with ProcessCluster(spec, admin_options=keys) as servers:
            with BlockingMQAdminClient(servers.namesrv_addr, timeout_s=5.0, **keys) as admin:
                admin.create_or_update_topic(servers.addr("bench-broker"), TopicConfig(TOPIC, QUEUES, QUEUES))
                deadline = time.monotonic() + 10
                while not _routed(admin):
                    if time.monotonic() > deadline:
                        raise RuntimeError("topic not routed")
                    time.sleep(0.05)
            yield servers.namesrv_addr, (PRODUCER if acl else None), servers.pid("bench-broker")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _routed(admin: BlockingMQAdminClient) -> bool:
    try:
        return bool(admin.examine_topic_route_info(TOPIC).queue_datas)
    except Exception:
        return False


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc; clock ticks of 10 ms)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def produce(namesrv: str, keys: tuple[str, str] | None, n: int, body: bytes, inflight: int) -> float:
    """Seconds to send ``n`` single messages with ``inflight`` in flight (1: one at a time)."""
    credentials = dict(zip(("access_key", "secret_key"), keys)) if keys else {}
    async with AsyncSimpleProducer(namesrv, "bench-producer", timeout_s=30.0, **credentials) as producer:
        queues = await producer.fetch_publish_message_queues(TOPIC)
        await producer.send(Message(TOPIC, body), queues[0])  # connect and route outside the timing
        sem = asyncio.Semaphore(inflight)

        async def one(i: int) -> None:
            async with sem:
                await producer.send(Message(TOPIC, body), queues[i % len(queues)])

        start = time.perf_counter()
        if inflight == 1:
            for i in range(n):
                await producer.send(Message(TOPIC, body), queues[i % len(queues)])
        else:
            await asyncio.gather(*(one(i) for i in range(n)))
        return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=3000, help="messages per round")
    ap.add_argument("--rounds", type=int, default=8, help="rounds per setting and row (alternating off/on)")
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--inflight", type=int, default=64)
    args = ap.parse_args()
    body = os.urandom(args.size)
    rates: dict[tuple[str, str], list[float]] = {}
    cpu: dict[tuple[str, str], list[tuple[float, float]]] = {}  # (broker, client) CPU microseconds per message
    with ExitStack() as stack:
        settings = {"off": stack.enter_context(cluster(acl=False)), "on": stack.enter_context(cluster(acl=True))}
        for label, inflight in (
            ("single sends, one at a time", 1),
            (f"single sends, {args.inflight} in flight", args.inflight),
        ):
            for round_no in range(args.rounds):
                # ABBA: each setting goes first in every other round, so what one round leaves behind (the
                # other broker's background flush of what it just stored) weighs on both settings alike
                for acl in ("off", "on") if round_no % 2 == 0 else ("on", "off"):
                    namesrv, keys, broker_pid = settings[acl]
                    broker_cpu, client_cpu = cpu_seconds(broker_pid), time.process_time()
                    seconds = asyncio.run(produce(namesrv, keys, args.messages, body, inflight))
                    rates.setdefault((label, acl), []).append(args.messages / seconds)
                    cpu.setdefault((label, acl), []).append(
                        (
                            (cpu_seconds(broker_pid) - broker_cpu) * 1e6 / args.messages,
                            (time.process_time() - client_cpu) * 1e6 / args.messages,
                        )
                    )
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{args.rounds} rounds of {args.messages} messages of {args.size} B per row and setting"
    )
    print(
        "| operation | ACL | best msgs/s | median msgs/s | cost of the ACL (median) | broker CPU µs/msg | client CPU µs/msg |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for label in dict.fromkeys(k[0] for k in rates):
        off, on = statistics.median(rates[(label, "off")]), statistics.median(rates[(label, "on")])
        for acl in ("off", "on"):
            values = rates[(label, acl)]
            cost = "" if acl == "off" else f"{(off - on) / off:+.1%}"
            broker_us = statistics.median(b for b, _ in cpu[(label, acl)])
            client_us = statistics.median(c for _, c in cpu[(label, acl)])
            print(
                f"| {label} | {acl} | {max(values):,.0f} | {statistics.median(values):,.0f} | {cost} | {broker_us:.0f} | {client_us:.0f} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
