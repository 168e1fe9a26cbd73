"""Benchmark: what beat's live dashboard refresh (every minute, incremental) costs in CPU per hour.

Run from the repository root::

    .venv/bin/python bench/live_refresh_bench.py                 # 2 brokers, 10 topics x 8 queues, 5 groups
    .venv/bin/python bench/live_refresh_bench.py --runs 20 --history-min 240

It does what the analytics worker does, in one process with a scratch database and lake: writes
``--history-min`` minutes of sampler rounds (every ``--interval-s``, as analytics.sampler writes
them), runs one refresh (the first: a backfill, and the Spark session's start), then ``--runs``
times writes one more minute of samples and runs the live refresh (``analytics.runner.dashboard_refresh``
with trigger ``live``, ``as_of`` one minute later each time, the worker's own Spark settings:
``SPARK_MASTER``, 4 shuffle partitions). CPU is this process's and its descendants' (the Spark
JVM) user + system time from /proc, per run; per hour = the mean per run x runs per hour.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

TICK = os.sysconf("SC_CLK_TCK")


def _tree_cpu_s(root_pid: int) -> float:
    """User + system CPU seconds of ``root_pid`` and every live descendant (the JVM is a grandchild)."""
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        parents[int(entry)] = int(fields[1])
        times[int(entry)] = (int(fields[11]) + int(fields[12])) / TICK
    wanted, frontier = {root_pid}, [root_pid]
    while frontier:
        pid = frontier.pop()
        for child, parent in parents.items():
            if parent == pid and child not in wanted:
                wanted.add(child)
                frontier.append(child)
    return sum(times.get(pid, 0.0) for pid in wanted)


def _own_cpu_s() -> float:
    t = os.times()
    return t.user + t.system


def _round(root: Path, when: datetime, args, counters: dict) -> None:
    from analytics.lake import GROUP_SAMPLES, QUEUE_SAMPLES, write_samples

    ts_ms = int(when.timestamp() * 1000)
    for b in range(args.brokers):
        broker = f"broker-{b}"
        keys = [(f"topic-{t}", q) for t in range(args.topics) for q in range(args.queues)]
        for key in keys:
            counters[(broker, *key)] = counters.get((broker, *key), 0) + int(
                args.interval_s * (5 + (7 * int(key[0][6:]) + 3 * key[1]) % 20)
            )
        write_samples(
            root,
            QUEUE_SAMPLES,
            ts_ms=ts_ms,
            broker=broker,
            columns={
                "broker": [broker] * len(keys),
                "topic": [k[0] for k in keys],
                "queue_id": [k[1] for k in keys],
                "min_offset": [0] * len(keys),
                "max_offset": [counters[(broker, *k)] for k in keys],
                "put_bytes": [counters[(broker, *k)] * 200 for k in keys],
            },
        )
        subs = [
            (f"group-{g}", f"topic-{(g + i) % args.topics}", q)
            for g in range(args.groups)
            for i in range(2)
            for q in range(args.queues)
        ]
        write_samples(
            root,
            GROUP_SAMPLES,
            ts_ms=ts_ms,
            broker=broker,
            columns={
                "broker": [broker] * len(subs),
                "group": [s[0] for s in subs],
                "topic": [s[1] for s in subs],
                "queue_id": [s[2] for s in subs],
                "committed_offset": [max(0, counters[(broker, s[1], s[2])] - 40) for s in subs],
                "max_offset": [counters[(broker, s[1], s[2])] for s in subs],
            },
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--brokers", type=int, default=2)
    parser.add_argument("--topics", type=int, default=10)
    parser.add_argument("--queues", type=int, default=8, help="per topic per broker")
    parser.add_argument("--groups", type=int, default=5, help="each consumes two topics")
    parser.add_argument("--history-min", type=int, default=120)
    parser.add_argument("--interval-s", type=float, default=10.0, help="the sampler's period")
    parser.add_argument("--every-s", type=float, default=60.0, help="the live refresh's period (LIVE_REFRESH_S)")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument(
        "--spark-conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting added to GANTRY_ANALYTICS['SPARK_CONF'] (to compare settings)",
    )
    args = parser.parse_args()

    scratch = Path(tempfile.mkdtemp(prefix="live-refresh-bench-"))
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "console.settings",
            "DATABASE_URL": f"sqlite:///{scratch / 'db.sqlite3'}",
            "GANTRY_LAKE_DIR": str(scratch / "lake"),
            "GANTRY_SAMPLE_INTERVAL_S": str(args.interval_s),
            "LOG_LEVEL": "WARNING",
        }
    )
    import django

    django.setup()
    from django.core.management import call_command

    from django.conf import settings

    from analytics.runner import dashboard_refresh

    extra = dict(item.split("=", 1) for item in args.spark_conf)
    settings.GANTRY_ANALYTICS = {
        **settings.GANTRY_ANALYTICS,
        "SPARK_CONF": {**settings.GANTRY_ANALYTICS.get("SPARK_CONF", {}), **extra},
    }

    call_command("migrate", verbosity=0)
    lake = scratch / "lake"
    step = timedelta(seconds=args.interval_s)
    now = (datetime.now(timezone.utc) - timedelta(minutes=5)).replace(second=0, microsecond=0)
    when = now - timedelta(minutes=args.history_min)
    counters: dict = {}
    while when <= now:
        _round(lake, when, args, counters)
        when += step
    per_round = args.brokers * args.queues * args.topics
    print(
        f"spark: {settings.SPARK_MASTER}, extra settings {extra or 'none'}; os.cpu_count() = {os.cpu_count()}",
        flush=True,
    )
    print(
        f"lake: {args.history_min} min of samples, {per_round} queue rows + {2 * args.groups * args.queues * args.brokers} "
        f"group rows per round every {args.interval_s:g} s",
        flush=True,
    )

    me = os.getpid()
    cpu0, wall0 = _tree_cpu_s(me), time.monotonic()
    first = dashboard_refresh(trigger="live", as_of=now + timedelta(seconds=1))
    print(
        f"first refresh (backfill + Spark start): {_tree_cpu_s(me) - cpu0:6.2f} s CPU, {time.monotonic() - wall0:6.2f} s wall, "
        f"{first.rows_read} samples read, {first.status}",
        flush=True,
    )
    cpus, walls, pys = [], [], []
    as_of = now
    for i in range(args.runs):
        target = as_of + timedelta(seconds=args.every_s)
        while when <= target:
            _round(lake, when, args, counters)
            when += step
        as_of = target
        cpu0, py0, wall0 = _tree_cpu_s(me), _own_cpu_s(), time.monotonic()
        run = dashboard_refresh(trigger="live", as_of=as_of + timedelta(seconds=1))
        cpus.append(_tree_cpu_s(me) - cpu0)
        pys.append(_own_cpu_s() - py0)
        walls.append(time.monotonic() - wall0)
        assert run.status == "succeeded", run.error
        print(
            f"live run {i + 1:2d}: {cpus[-1]:5.2f} s CPU (Python {pys[-1]:5.2f}, JVM {cpus[-1] - pys[-1]:5.2f}), "
            f"{walls[-1]:5.2f} s wall, {run.rows_read} samples read",
            flush=True,
        )
    per_run = sum(cpus) / len(cpus)
    runs_per_hour = 3600 / args.every_s
    print(
        f"mean per live run: {per_run:.2f} s CPU, {sum(walls) / len(walls):.2f} s wall; "
        f"per hour ({runs_per_hour:g} runs): {per_run * runs_per_hour:.0f} CPU s = {per_run * runs_per_hour / 36:.1f} % of one core",
        flush=True,
    )
    os._exit(0)  # the Spark JVM goes with the process


if __name__ == "__main__":
    main()
