"""The broker rows of the performance goals (rows 5–10): Gantry's broker against Redis Streams
through redis-py + hiredis, and against the minimal asyncio broker (the ceiling), 1 KB messages on loopback.

The name server and the brokers run as subprocesses (bench/user_api_cluster.py), redis-server
privately with AOF on (bench/baselines.py), the minimal broker as bench/minimal_broker.py; the
clients are this process: Gantry's internal ``AsyncSimpleProducer`` / ``AsyncPullClient`` (for
Gantry and the minimal broker alike) and ``redis.asyncio`` (hiredis parser; the bench refuses to
run without hiredis and prints ``redis.utils.HIREDIS_AVAILABLE`` in its header).

Rows (each ``--runs`` times, alternating which system goes first, ``--messages`` per run;
/proc/loadavg before every run; medians with min–max; ratios per run):

- 5: produce single, ASYNC_FLUSH, ``--inflight`` sends in flight  vs  ``XADD``, AOF ``everysec``;
- 6: produce batch of ``--batch``, ASYNC_FLUSH, ``--inflight / --batch`` batches in flight  vs
  pipelines (``transaction=False``) of as many ``XADD``s, AOF ``everysec``;
- 7: the same batches with SYNC_FLUSH (group commit)  vs  pipelines with AOF ``always``;
- 8: consume, ``--pull`` per pull (one pull in flight per queue, 4 queues)  vs  ``XRANGE`` count
  ``--pull`` one request at a time; and Gantry's consume against its own batch produce (row 6),
  run by run;
- 9: CPU per message of the broker (``/proc/<pid>/stat``) and of the client (``os.times``) in
  row 5's Gantry runs;
- 10: row 6's batches to Gantry  vs  to the minimal asyncio broker, same client, same harness.

    .venv/bin/python bench/broker_bench.py [--messages 50000] [--size 1024] [--batch 32] [--inflight 64]
                                           [--pull 32] [--extra-pull N] [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from baselines import batches_in_flight, redis_server  # noqa: E402
from bench_common import Meter, Row, alternate, machine_header, med, print_loads, print_table, require_hiredis  # noqa: E402
from broker_workloads import consume, minimal_broker, produce, redis_consume, redis_fill, redis_pid, redis_produce  # noqa: E402
from user_api_cluster import gantry_cluster  # noqa: E402

SEND_TOPIC = "BenchTopic"
CONSUME_TOPIC = "BenchConsume"
STREAM, CONSUME_STREAM = "bench", "bench-consume"
QUEUES = 4


def async_rows(args: argparse.Namespace, body: bytes) -> tuple[list[Row], list[Row], list[Row]]:
    """Rows 5 and 6, rows 8 (against Redis, AOF everysec), and row 10 (against the minimal broker)."""
    n, batch, inflight = args.messages, args.batch, args.inflight
    batches = batches_in_flight(inflight, batch)
    produce_rows, consume_rows, vs_minimal = [], [], []
    with (
        gantry_cluster((SEND_TOPIC, CONSUME_TOPIC), flush="async", queues=QUEUES) as (namesrv, broker),
        redis_server("everysec") as port,
        minimal_broker(QUEUES) as (minimal, minimal_pid),
    ):
        rpid = redis_pid(port)
        g, r, m = Meter(broker), Meter(rpid), Meter(minimal_pid)

        row = Row(f"5 produce single, ASYNC_FLUSH, {inflight} in flight  vs  `XADD` (AOF everysec)", "≥ 1.5×")
        alternate(
            row,
            args.runs,
            lambda i: produce(g, namesrv, SEND_TOPIC, n, body, 1, inflight),
            lambda i: redis_produce(r, port, STREAM, n, body, 1, inflight),
        )
        produce_rows.append(row)

        row = Row(
            f"6 produce batch {batch}, ASYNC_FLUSH, {batches} in flight  vs  pipelines of {batch} (AOF everysec)",
            "≥ 2×",
        )
        alternate(
            row,
            args.runs,
            lambda i: produce(g, namesrv, SEND_TOPIC, n, body, batch, batches),
            lambda i: redis_produce(r, port, STREAM, n, body, batch, batches),
        )
        produce_rows.append(row)

        # the consume rows' data, outside any measurement: the same messages in both systems
        produce(g, namesrv, CONSUME_TOPIC, n, body, batch, batches)
        redis_fill(port, CONSUME_STREAM, n, body)
        for pull in (args.pull, args.extra_pull) if args.extra_pull else (args.pull,):
            row = Row(f"8 consume, {pull} per pull  vs  `XRANGE` count {pull}", "≥ 3×" if pull == args.pull else "–")
            alternate(
                row,
                args.runs,
                lambda i, p=pull: consume(g, namesrv, CONSUME_TOPIC, n, p),
                lambda i, p=pull: redis_consume(r, port, CONSUME_STREAM, n, p),
            )
            consume_rows.append(row)

        row = Row(
            f"10 produce batch {batch}, ASYNC_FLUSH, {batches} in flight  vs  the minimal asyncio broker", "≥ 0.6×"
        )
        alternate(
            row,
            args.runs,
            lambda i: produce(g, namesrv, SEND_TOPIC, n, body, batch, batches),
            lambda i: produce(m, minimal, SEND_TOPIC, n, body, batch, batches),
            other_name="minimal",
        )
        vs_minimal.append(row)
    return produce_rows, consume_rows, vs_minimal


def sync_row(args: argparse.Namespace, body: bytes) -> Row:
    """Row 7: batches with SYNC_FLUSH (group commit) against pipelines with AOF ``always``."""
    n, batch = args.messages, args.batch
    batches = batches_in_flight(args.inflight, batch)
    with (
        gantry_cluster((SEND_TOPIC,), flush="sync", queues=QUEUES) as (namesrv, broker),
        redis_server("always") as port,
    ):
        g, r = Meter(broker), Meter(redis_pid(port))
        row = Row(
            f"7 produce batch {batch}, SYNC_FLUSH (group commit)  vs  pipelines of {batch} (AOF always)", "≥ 1.5×"
        )
        alternate(
            row,
            args.runs,
            lambda i: produce(g, namesrv, SEND_TOPIC, n, body, batch, batches),
            lambda i: redis_produce(r, port, STREAM, n, body, batch, batches),
        )
    return row


def print_own(single: Row, batch: Row, consume_row: Row) -> None:
    """Row 8's second goal (consume against Gantry's own batch produce, run by run) and row 9 (CPU
    per message of row 5's Gantry runs)."""
    ratios = [c.rate / b.rate for c, b in zip(consume_row.gantry, batch.gantry)]
    broker_us = [r.server_cpu / r.messages * 1e6 for r in single.gantry]
    client_us = [r.client_cpu / r.messages * 1e6 for r in single.gantry]
    print("\n| row | goal | measured, median (min–max) |")
    print("| --- | --- | ---: |")
    print(
        f"| 8 consume (row 8's Gantry runs)  vs  Gantry's own batch produce (row 6's), "
        f"run by run | ≥ 2× | **{statistics.median(ratios):.2f}×** ({min(ratios):.2f}–{max(ratios):.2f}) |"
    )
    print(
        f"| 9 CPU per message, broker, single send (row 5's Gantry runs, /proc/<pid>/stat) | ≤ 50 µs | {med(broker_us, '.0f')} µs |"
    )
    print(
        f"| 9 CPU per message, client, single send (row 5's Gantry runs, os.times) | ≤ 50 µs | {med(client_us, '.0f')} µs |"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=50_000, help="messages per run")
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--inflight", type=int, default=64, help="concurrent single sends (batches: inflight/batch)")
    ap.add_argument("--pull", type=int, default=32, help="messages per pull / XRANGE count")
    ap.add_argument(
        "--extra-pull", type=int, default=0, metavar="N", help="also consume with N messages per pull / XRANGE"
    )
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    header = machine_header(f"{require_hiredis()}, {args.messages} messages of {args.size} B per run, {args.runs} runs")
    body = os.urandom(args.size)
    produce_rows, consume_rows, vs_minimal = async_rows(args, body)
    vs_redis = [*produce_rows, sync_row(args, body), *consume_rows]
    print("\n" + header + "\n")
    print_table(vs_redis)
    print_own(produce_rows[0], produce_rows[1], consume_rows[0])
    print()
    print_table(vs_minimal, other="minimal", other_server="minimal broker")
    print_loads(vs_redis)
    print_loads(vs_minimal, other="minimal")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
