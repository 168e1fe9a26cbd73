"""Every row of the performance goals (docs/benchmarks.md) in one command (``make bench`` runs
this): each step's script with the parameters the row needs, one after another, the long ones last.

    .venv/bin/python bench/run_all.py [--quick] [--only user_api,broker,latency,console,allocation,analytics]

Steps (row numbers are the goals table's, top to bottom):

- user_api   rows 1–4   bench/user_api_bench.py
- broker     rows 5–10  bench/broker_bench.py
- latency    row 11     bench/client_bench.py --latency-only --rates 1000,5000 --size 1024
- console    row 12     bench/console_bench.py --goal-ms 200
- allocation row 13     bench/allocation_bench.py
- analytics  row 14     bench/analytics_gen.py (a fresh 50M-row lake, ~30 s and ~0.9 GiB in
                        /tmp/gantry-bench-lake, when it is missing or already appended to), then
                        bench/analytics_bench.py --engines spark,duckdb (full run), then
                        bench/analytics_gen.py --append-fraction 0.01 and
                        bench/analytics_bench.py --incremental; the last ~25 minutes of the run.

``--quick`` (``make bench BENCH_QUICK=1``) passes small parameters to every script (a few seconds
each, a 250,000-row lake of its own): a smoke test of the whole path, its figures meaningless.
Each step's output is printed as it comes, after a line with its command and /proc/loadavg; the end
lists every step's exit status and wall time, and the exit status is 1 when any step failed.
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
LAKE, QUICK_LAKE = Path("/tmp/gantry-bench-lake"), Path("/tmp/gantry-bench-lake-quick")
LAKE_ROWS, QUICK_LAKE_ROWS = 50_000_000, 250_000
LAKE_QUEUES = 5_000  # analytics_gen's default cluster: 100 topics x 10 brokers each x 5 queues

# step -> (full arguments, quick arguments); the analytics step is built in analytics_steps()
STEPS: dict[str, tuple[str, list[str], list[str]]] = {
    "codec": ("codec_bench.py", [], []),
    "user_api": ("user_api_bench.py", [], ["--seconds", "0.3", "--consume-messages", "2000"]),
    "broker": ("broker_bench.py", [], ["--messages", "2000"]),
    "latency": (
        "client_bench.py",
        ["--latency-only", "--rates", "1000,5000", "--size", "1024", "--seconds", "10"],
        ["--latency-only", "--rates", "200,500", "--size", "1024", "--seconds", "1"],
    ),
    "console": (
        "console_bench.py",
        ["--goal-ms", "200"],
        ["--goal-ms", "200", "--topics", "200", "--groups", "200", "--runs", "3"],
    ),
    "allocation": (
        "allocation_bench.py",
        [],
        ["--queues", "1000", "--consumers", "100", "--repeat", "2", "--budget", "0.2"],
    ),
    "metadata_drill": ("metadata_drill.py", ["--cycles", "20"], ["--cycles", "2", "--messages", "50"]),
}


def loadavg() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def run(argv: list[str]) -> int:
    """Run one step; a SIGTERM to this process is passed on to the step (which stops its servers,
    bench/processes.py), and this process exits once the step has, instead of killing it outright."""
    print(f"\n$ {' '.join(argv)}    (/proc/loadavg {loadavg()})", flush=True)
    proc = subprocess.Popen(argv, cwd=ROOT)
    terminated: list[int] = []

    def forward(signum: int, _frame) -> None:  # no wait() here: the interrupted wait() below holds its lock
        terminated.append(signum)
        proc.send_signal(signum)

    previous = signal.signal(signal.SIGTERM, forward)
    try:
        code = proc.wait()
    finally:
        signal.signal(signal.SIGTERM, previous)
    if terminated:
        raise SystemExit(128 + terminated[0])
    return code


def lake_state(lake: Path) -> dict | None:
    """The generator's metadata of ``lake``, or None when there is no lake."""
    state = lake / "_gen_state.npz"
    if not state.exists():
        return None
    import numpy as np

    return json.loads(str(np.load(state)["meta"]))


def analytics_steps(py: str, quick: bool, out: Path) -> list[list[str]]:
    """Row 14's commands: the lake (fresh unless a base lake of the right size is there), the full
    run, 1 % appended, the incremental run."""
    lake, rows = (QUICK_LAKE, QUICK_LAKE_ROWS) if quick else (LAKE, LAKE_ROWS)
    meta = lake_state(lake)
    fresh = (
        meta is not None
        and meta.get("appended_from") is None
        and meta.get("base_rounds") == math.ceil(rows / LAKE_QUEUES)
    )
    memory = ["--driver-memory", "2g"] if quick else []
    steps = [] if fresh else [[py, str(BENCH / "analytics_gen.py"), str(lake), "--rows", str(rows)]]
    return steps + [
        [
            py,
            str(BENCH / "analytics_bench.py"),
            str(lake),
            "--engines",
            "spark,duckdb",
            "--json",
            str(out / "full.json"),
            *memory,
        ],
        [py, str(BENCH / "analytics_gen.py"), str(lake), "--append-fraction", "0.01"],
        [
            py,
            str(BENCH / "analytics_bench.py"),
            str(lake),
            "--incremental",
            "--json",
            str(out / "incremental.json"),
            *memory,
        ],
    ]


def print_analytics(out: Path) -> None:
    """Row 14's table from the two JSON results: Spark / DuckDB per job, incremental / full per job."""
    full_path, inc_path = out / "full.json", out / "incremental.json"
    if not full_path.exists() or not inc_path.exists():
        print("\nrow 14: no results (a step failed)")
        return
    full, inc = json.loads(full_path.read_text()), json.loads(inc_path.read_text())
    rows = full["lake_rows"]
    print(
        f"\nrow 14 (lake {full['lake']}: {rows['queue_samples']:,} queue_samples, {rows['group_samples']:,} group_samples "
        f"rows; incremental: +1 %):\n"
    )
    print(
        "| job | Spark s | DuckDB s | Spark / DuckDB (goal ≤ 3×) | incremental s | full s | incremental / full (goal ≤ 3 %) |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for slug, job in full["jobs"].items():
        spark, duck = job["spark"]["seconds"], job["duckdb"]["seconds"]
        i = inc["jobs"].get(slug, {})
        print(
            f"| {job['job']} | {spark:.2f} | {duck:.2f} | **{spark / duck:.2f}×** | {i.get('incremental', {}).get('seconds', '–')} | "
            f"{i.get('full', {}).get('seconds', '–')} | **{i.get('time_ratio', float('nan')):.1%}** |"
        )
    print(
        f"| all jobs | {full['engines']['spark']['total_s']:.2f} | {full['engines']['duckdb']['total_s']:.2f} | "
        f"**{full['spark_over_duckdb']:.2f}×** | {inc['total']['incremental']:.2f} | {inc['total']['full']:.2f} | "
        f"**{inc['total']['time_ratio']:.1%}** |"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small parameters everywhere: a smoke test")
    ap.add_argument("--only", default=",".join([*STEPS, "analytics"]), help="comma-separated steps to run")
    ap.add_argument("--out", type=Path, default=Path("/tmp/gantry-bench-results"), help="row 14's JSON results")
    args = ap.parse_args()
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = [s for s in only if s not in STEPS and s != "analytics"]
    if unknown:
        ap.error(f"--only: unknown steps {unknown}; known: {', '.join([*STEPS, 'analytics'])}")
    py = sys.executable
    summary: list[tuple[str, int, float]] = []
    started = time.perf_counter()
    for name in [s for s in STEPS if s in only]:
        script, full, quick = STEPS[name]
        t0 = time.perf_counter()
        code = run([py, str(BENCH / script), *(quick if args.quick else full)])
        summary.append((name, code, time.perf_counter() - t0))
    if "analytics" in only:
        args.out.mkdir(parents=True, exist_ok=True)
        for f in ("full.json", "incremental.json"):
            (args.out / f).unlink(missing_ok=True)
        t0, code = time.perf_counter(), 0
        for argv in analytics_steps(py, args.quick, args.out):
            code = run(argv)
            if code:
                break
        summary.append(("analytics", code, time.perf_counter() - t0))
        print_analytics(args.out)
    print(f"\n# bench/run_all.py{' --quick' if args.quick else ''}: {time.perf_counter() - started:.0f} s in all")
    for name, code, seconds in summary:
        print(f"- {name}: exit {code}, {seconds:.0f} s")
    return 1 if any(code for _, code, _ in summary) else 0


if __name__ == "__main__":
    raise SystemExit(main())
