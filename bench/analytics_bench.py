"""Benchmark: the analytics jobs in Spark against the same aggregation in DuckDB and in pandas.

Run from the repository root, on a lake made by ``bench/analytics_gen.py``::

    .venv/bin/python bench/analytics_gen.py                        # 50M queue rows, 25M group rows
    .venv/bin/python bench/analytics_bench.py                      # full run: Spark, DuckDB, pandas
    .venv/bin/python bench/analytics_gen.py --append-fraction 0.01 # 1 % more, in new partitions
    .venv/bin/python bench/analytics_bench.py --incremental        # Spark: incremental vs full

Full run: every engine computes every job of JOBS from the Parquet lake and writes the result
as Parquet under ``--out`` (read, compute and write are all timed; the Spark session's start is
reported apart). Spark runs ``analytics.jobs`` (``local[*]``); DuckDB runs SQL over the files;
pandas reads the dataset with pyarrow and uses ``sort_values``/``diff``/``groupby``. The three
implement docs/analytics.md section 2 the same way: lag per queue, negative deltas and
``dt_s <= 0`` dropped, rates per queue as ``sum / sum(dt_s)`` summed to topics and groups.
Afterwards DuckDB joins the three outputs of each job on their keys: every row must be in all
three and every value equal (doubles to a relative 1e-9), or the run fails.

``--incremental`` (after ``--append-fraction``): Spark runs every job over the whole lake, then
again as the runner does after new data, reading only the partitions from one window before the
new data (``date``/``hour`` pruning plus a ``ts`` filter) with ``emit_from`` = the start of the
first window holding new data; the incremental output must equal the full output's windows from
``emit_from`` on. Reported: both times, their ratio and the rows each one read.

rows/s is input rows (queue_samples for throughput, group_samples for backlog) per wall second.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

STATE_FILE = "_gen_state.npz"


@dataclass(frozen=True)
class Job:
    kind: str  # "throughput" over queue_samples, "backlog" over group_samples
    resolution: str
    level: str

    @property
    def name(self) -> str:
        return f"{self.kind} {self.resolution} {self.level}"

    @property
    def slug(self) -> str:
        return f"{self.kind}-{self.resolution}-{self.level}"

    @property
    def seconds(self) -> int:
        return {"1m": 60, "1h": 3600}[self.resolution]

    @property
    def dataset(self) -> str:
        return "queue_samples" if self.kind == "throughput" else "group_samples"

    @property
    def keys(self) -> tuple[str, ...]:
        return {
            ("throughput", "queue"): ("broker", "topic", "queue_id"),
            ("throughput", "topic"): ("topic",),
            ("throughput", "broker"): ("broker",),
            ("backlog", "queue"): ("group", "topic", "broker", "queue_id"),
            ("backlog", "group"): ("group", "topic"),
        }[self.kind, self.level]

    @property
    def values(self) -> tuple[str, ...]:
        if self.kind == "throughput":
            return ("messages", "msgs_per_s", "bytes_per_s")
        return ("backlog", "consume_rate", "produce_rate")


JOBS = (
    Job("throughput", "1m", "queue"),
    Job("throughput", "1m", "topic"),
    Job("throughput", "1h", "queue"),
    Job("throughput", "1h", "topic"),
    Job("backlog", "1m", "queue"),
    Job("backlog", "1m", "group"),
    Job("backlog", "1h", "group"),
)


# -- Spark -------------------------------------------------------------------------------------------


class SparkEngine:
    name = "spark"

    def __init__(self, lake: Path, *, driver_memory: str, shuffle_partitions: int, window_buffer_rows: int) -> None:
        started = time.perf_counter()
        from pyspark.sql import SparkSession

        self.spark = (
            SparkSession.builder.master("local[*]")
            .appName("gantry-analytics-bench")
            .config("spark.driver.memory", driver_memory)
            .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
            .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
            # A window's lag buffers each queue's rows; past 4,096 (the default) Spark moves them
            # into a slower spillable structure. The full run has 10,000 samples per queue.
            .config("spark.sql.windowExec.buffer.in.memory.threshold", str(window_buffer_rows))
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.driver.host", "127.0.0.1")
            .getOrCreate()
        )
        self.spark.sparkContext.setLogLevel("ERROR")
        self.lake = lake
        self.startup_s = time.perf_counter() - started

    def read(self, job: Job, since_s: float | None = None):
        from pyspark.sql import functions as F

        from analytics.jobs import GROUP_SAMPLES_SCHEMA, QUEUE_SAMPLES_SCHEMA

        schema = QUEUE_SAMPLES_SCHEMA if job.kind == "throughput" else GROUP_SAMPLES_SCHEMA
        frame = self.spark.read.schema(schema).parquet(str(self.lake / job.dataset))
        if since_s is not None:  # what the runner reads: partitions from since_s on, then ts
            since = dt.datetime.fromtimestamp(since_s, tz=dt.timezone.utc)
            day = since.strftime("%Y-%m-%d")
            frame = frame.where((F.col("date") > day) | ((F.col("date") == day) & (F.col("hour") >= since.hour))).where(
                F.col("ts") >= F.lit(since)
            )
        return frame

    def run(self, job: Job, out: Path, *, since_s: float | None = None, emit_from_s: float | None = None) -> None:
        from pyspark.sql import functions as F

        from analytics.jobs import backlog, throughput

        emit_from = None if emit_from_s is None else dt.datetime.fromtimestamp(emit_from_s, tz=dt.timezone.utc)
        frame = self.read(job, since_s)
        if job.kind == "throughput":
            result = throughput(frame, resolution=job.resolution, level=job.level, emit_from=emit_from)
        else:
            result = backlog(frame, resolution=job.resolution, level=job.level, emit_from=emit_from)
        result = result.select(F.unix_seconds("window_start").alias("win"), *job.keys, *job.values)
        result.write.mode("overwrite").parquet(str(out))

    def input_rows(self, job: Job, since_s: float | None = None) -> int:
        return self.read(job, since_s).count()

    def partition_rows(self, job: Job, since_s: float) -> int:
        """Rows in the partitions an incremental run opens (before its ``ts`` filter)."""
        from pyspark.sql import functions as F

        since = dt.datetime.fromtimestamp(since_s, tz=dt.timezone.utc)
        day = since.strftime("%Y-%m-%d")
        frame = self.read(job)
        return frame.where((F.col("date") > day) | ((F.col("date") == day) & (F.col("hour") >= since.hour))).count()

    def close(self) -> None:
        self.spark.stop()


# -- DuckDB ------------------------------------------------------------------------------------------


THROUGHPUT_SQL = """
WITH pairs AS (
    SELECT broker, topic, queue_id, ts,
           (epoch_us(ts) - epoch_us(lag(ts) OVER w)) / 1e6 AS dt_s,
           max_offset - lag(max_offset) OVER w AS messages,
           put_bytes - lag(put_bytes) OVER w AS bytes
    FROM read_parquet('{files}', hive_partitioning = false)
    WINDOW w AS (PARTITION BY broker, topic, queue_id ORDER BY ts)
), deltas AS (
    SELECT *, epoch_us(ts) // 1000000 - (epoch_us(ts) // 1000000) % {seconds} AS win
    FROM pairs
    WHERE dt_s > 0 AND messages >= 0 AND (bytes IS NULL OR bytes >= 0)
), per_queue AS (
    SELECT win, broker, topic, queue_id,
           sum(messages)::BIGINT AS messages,
           sum(messages) / sum(dt_s) AS msgs_per_s,
           CASE WHEN sum(CASE WHEN bytes IS NOT NULL THEN dt_s END) > 0
                THEN sum(bytes) / sum(CASE WHEN bytes IS NOT NULL THEN dt_s END) END AS bytes_per_s
    FROM deltas GROUP BY win, broker, topic, queue_id
)
"""

BACKLOG_SQL = """
WITH pairs AS (
    SELECT broker, "group", topic, queue_id, ts,
           greatest(max_offset - committed_offset, 0) AS backlog,
           (epoch_us(ts) - epoch_us(lag(ts) OVER w)) / 1e6 AS dt_s,
           committed_offset - lag(committed_offset) OVER w AS consumed,
           max_offset - lag(max_offset) OVER w AS produced
    FROM read_parquet('{files}', hive_partitioning = false)
    WINDOW w AS (PARTITION BY broker, "group", topic, queue_id ORDER BY ts)
), intervals AS (
    SELECT *, epoch_us(ts) // 1000000 - (epoch_us(ts) // 1000000) % {seconds} AS win,
           dt_s > 0 AND consumed >= 0 AND produced >= 0 AS counts
    FROM pairs
), per_queue AS (
    SELECT win, broker, "group", topic, queue_id,
           arg_max(backlog, ts) AS backlog,
           sum(CASE WHEN counts THEN consumed END) AS consumed,
           sum(CASE WHEN counts THEN produced END) AS produced,
           sum(CASE WHEN counts THEN dt_s END) AS dt_s
    FROM intervals GROUP BY win, broker, "group", topic, queue_id
), rates AS (
    SELECT win, broker, "group", topic, queue_id, backlog,
           CASE WHEN dt_s > 0 THEN consumed / dt_s END AS consume_rate,
           CASE WHEN dt_s > 0 THEN produced / dt_s END AS produce_rate
    FROM per_queue
)
"""


def duckdb_sql(job: Job, files: str) -> str:
    if job.kind == "throughput":
        head = THROUGHPUT_SQL.format(files=files, seconds=job.seconds)
        if job.level == "queue":
            return head + "SELECT win, broker, topic, queue_id, messages, msgs_per_s, bytes_per_s FROM per_queue"
        key = job.keys[0]
        return head + (
            f"SELECT win, {key}, sum(messages)::BIGINT AS messages, sum(msgs_per_s) AS msgs_per_s, "
            "CASE WHEN count(bytes_per_s) = count(*) THEN sum(bytes_per_s) END AS bytes_per_s "
            f"FROM per_queue GROUP BY win, {key}"
        )
    head = BACKLOG_SQL.format(files=files, seconds=job.seconds)
    if job.level == "queue":
        return head + 'SELECT win, "group", topic, broker, queue_id, backlog, consume_rate, produce_rate FROM rates'
    return head + (
        'SELECT win, "group", topic, sum(backlog)::BIGINT AS backlog, sum(consume_rate) AS consume_rate, '
        'sum(produce_rate) AS produce_rate FROM rates GROUP BY win, "group", topic'
    )


class DuckDBEngine:
    name = "duckdb"

    def __init__(self, lake: Path, *, temp_dir: Path) -> None:
        import duckdb

        self.lake = lake
        self.con = duckdb.connect()
        self.con.execute("SET preserve_insertion_order = false")
        self.con.execute(f"SET temp_directory = '{temp_dir}'")
        self.startup_s = 0.0

    def run(self, job: Job, out: Path) -> None:
        files = f"{self.lake / job.dataset}/*/*/*.parquet"
        self.con.execute(f"COPY ({duckdb_sql(job, files)}) TO '{out}' (FORMAT parquet)")

    def close(self) -> None:
        self.con.close()


# -- pandas ------------------------------------------------------------------------------------------


class PandasEngine:
    name = "pandas"

    def __init__(self, lake: Path) -> None:
        self.lake = lake
        self.startup_s = 0.0

    def read(self, job: Job, columns: list[str]):
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.dataset as pads

        table = pads.dataset(self.lake / job.dataset, format="parquet", partitioning="hive").to_table(columns=columns)
        table = table.set_column(0, "ts", pc.cast(table["ts"], pa.int64()))  # epoch microseconds
        frame = table.to_pandas(strings_to_categorical=True, self_destruct=True, split_blocks=True)
        del table
        pa.default_memory_pool().release_unused()  # hand Arrow's freed buffers back for numpy
        return frame

    @staticmethod
    def pairs(df, keys: list[str], counters: list[str], seconds: int):
        """Sort by queue and ts, turn counters into deltas (in place, to bound memory).

        Return the queue table (``keys`` by queue number ``q``) and ``df`` with ``q``, ``ts``,
        ``dt_s``, the counters' deltas (NaN on a queue's first sample) and ``win``.
        """
        by_queue = df.groupby(keys, observed=True, sort=True)
        queues = by_queue.size().reset_index()[keys]
        df["q"] = by_queue.ngroup().astype(np.int32)
        df.drop(columns=keys, inplace=True)
        df.sort_values(["q", "ts"], inplace=True, ignore_index=True)
        q = df["q"].to_numpy()
        first = np.r_[True, q[1:] != q[:-1]]
        for name in counters:
            df[name] = df[name].diff().mask(first)
        df["dt_s"] = (df["ts"].diff() / 1e6).mask(first)
        secs = df["ts"].to_numpy() // 1_000_000
        df["win"] = secs - secs % seconds
        return queues, df

    def run(self, job: Job, out: Path) -> None:
        import pandas as pd

        if job.kind == "throughput":
            keys = ["broker", "topic", "queue_id"]
            df = self.read(job, ["ts", *keys, "max_offset", "put_bytes"])
            queues, d = self.pairs(df, keys, ["max_offset", "put_bytes"], job.seconds)
            del df  # the same frame as d: let d.loc below free it
            keep = (d["dt_s"] > 0) & (d["max_offset"] >= 0) & ~(d["put_bytes"] < 0)
            d["bytes_dt"] = d["dt_s"].where(d["put_bytes"].notna(), 0.0)
            d = d.loc[keep, ["q", "win", "max_offset", "dt_s", "put_bytes", "bytes_dt"]]
            per = (
                d.groupby(["q", "win"], sort=False)
                .agg(
                    messages=("max_offset", "sum"),
                    dt_s=("dt_s", "sum"),
                    bytes=("put_bytes", "sum"),
                    bytes_dt=("bytes_dt", "sum"),
                )
                .reset_index()
            )
            del d
            per["msgs_per_s"] = per["messages"] / per["dt_s"]
            per["bytes_per_s"] = (per["bytes"] / per["bytes_dt"]).where(per["bytes_dt"] > 0)
            per["messages"] = per["messages"].astype(np.int64)
            per = per.join(queues, on="q")
            if job.level == "queue":
                result = per[["win", *keys, "messages", "msgs_per_s", "bytes_per_s"]]
            else:
                key = job.keys[0]
                grouped = per.groupby(["win", key], observed=True, sort=False)
                result = grouped.agg(
                    messages=("messages", "sum"),
                    msgs_per_s=("msgs_per_s", "sum"),
                    bytes_sum=("bytes_per_s", "sum"),
                    bytes_known=("bytes_per_s", "count"),
                    queues=("msgs_per_s", "size"),
                ).reset_index()
                result["bytes_per_s"] = result["bytes_sum"].where(result["bytes_known"] == result["queues"])
                result = result[["win", key, "messages", "msgs_per_s", "bytes_per_s"]]
        else:
            keys = ["broker", "group", "topic", "queue_id"]
            df = self.read(job, ["ts", *keys, "committed_offset", "max_offset"])
            df["backlog"] = (df["max_offset"] - df["committed_offset"]).clip(lower=0)
            queues, d = self.pairs(df, keys, ["committed_offset", "max_offset"], job.seconds)
            del df
            counts = (d["dt_s"] > 0) & (d["committed_offset"] >= 0) & (d["max_offset"] >= 0)
            for name in ("dt_s", "committed_offset", "max_offset"):
                d[name] = d[name].where(counts)
            per = (
                d.groupby(["q", "win"], sort=False)
                .agg(  # sorted by ts: "last" is the latest sample
                    backlog=("backlog", "last"),
                    consumed=("committed_offset", "sum"),
                    produced=("max_offset", "sum"),
                    dt_s=("dt_s", "sum"),
                )
                .reset_index()
            )
            del d
            per["consume_rate"] = (per["consumed"] / per["dt_s"]).where(per["dt_s"] > 0)
            per["produce_rate"] = (per["produced"] / per["dt_s"]).where(per["dt_s"] > 0)
            per = per.join(queues, on="q")
            if job.level == "queue":
                result = per[["win", "group", "topic", "broker", "queue_id", "backlog", "consume_rate", "produce_rate"]]
            else:
                grouped = per.groupby(["win", "group", "topic"], observed=True, sort=False)
                result = grouped.agg(
                    backlog=("backlog", "sum"),
                    consume_rate=("consume_rate", "sum"),
                    produce_rate=("produce_rate", "sum"),
                    known=("consume_rate", "count"),
                ).reset_index()
                for name in ("consume_rate", "produce_rate"):  # null, not 0, when no queue had a rate
                    result[name] = result[name].where(result["known"] > 0)
                result = result[["win", "group", "topic", "backlog", "consume_rate", "produce_rate"]]
        result = pd.DataFrame(result)
        for column in ("broker", "topic", "group"):
            if column in result:
                result[column] = result[column].astype(str)
        result.to_parquet(out, index=False)

    def close(self) -> None:
        pass


# -- comparing outputs -------------------------------------------------------------------------------


def parquet_glob(path: Path) -> str:
    return f"{path}/*.parquet" if path.is_dir() else str(path)


def compare(job: Job, outputs: dict[str, Path], *, where: str = "true") -> dict:
    """Join every engine's output with the first one's on the job's keys; count disagreements."""
    import duckdb

    con = duckdb.connect()
    names = list(outputs)
    base = names[0]
    keys = ["win", *job.keys]
    report: dict = {}
    for name in names:
        row = con.execute(
            f"SELECT count(*), sum({job.values[0]}), sum({job.values[1]}), sum({job.values[2]}) "
            f"FROM read_parquet('{parquet_glob(outputs[name])}') WHERE {where}"
        ).fetchone()
        report[name] = {
            "rows": row[0],
            f"sum_{job.values[0]}": int(row[1] or 0),
            f"sum_{job.values[1]}": row[2],
            f"sum_{job.values[2]}": row[3],
        }
    mismatches = {}
    for other in names[1:]:
        on = " AND ".join(f'a."{k}" IS NOT DISTINCT FROM b."{k}"' for k in keys)
        differs = " OR ".join(
            f'(a."{v}" IS NULL) <> (b."{v}" IS NULL) OR abs(a."{v}" - b."{v}") > 1e-9 * greatest(1, abs(a."{v}"))'
            for v in job.values
        )
        count = con.execute(
            f"SELECT count(*) FROM (SELECT * FROM read_parquet('{parquet_glob(outputs[base])}') WHERE {where}) a "
            f"FULL OUTER JOIN (SELECT * FROM read_parquet('{parquet_glob(outputs[other])}') WHERE {where}) b ON {on} "
            f"WHERE a.win IS NULL OR b.win IS NULL OR {differs}"
        ).fetchone()[0]
        mismatches[f"{base}-vs-{other}"] = count
    con.close()
    report["mismatched_rows"] = mismatches
    report["agree"] = all(count == 0 for count in mismatches.values())
    return report


# -- phases ------------------------------------------------------------------------------------------


def lake_rows(lake: Path) -> dict[str, int]:
    import pyarrow.dataset as pads

    return {
        name: pads.dataset(lake / name, format="parquet").count_rows() for name in ("queue_samples", "group_samples")
    }


def timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def full_phase(args, rows: dict[str, int]) -> dict:
    results: dict = {"jobs": {}, "engines": {}}
    outputs: dict[str, dict[str, Path]] = {job.slug: {} for job in JOBS}
    for engine_name in args.engines:
        if engine_name == "spark":
            engine = SparkEngine(
                args.lake,
                driver_memory=args.driver_memory,
                shuffle_partitions=args.shuffle_partitions,
                window_buffer_rows=args.window_buffer_rows,
            )
            engine.input_rows(JOBS[0])  # warm-up, untimed: the JVM's first query
        elif engine_name == "duckdb":
            engine = DuckDBEngine(args.lake, temp_dir=args.out / "duckdb-tmp")
        else:
            engine = PandasEngine(args.lake)
        results["engines"][engine_name] = {"startup_s": round(engine.startup_s, 2)}
        total = 0.0
        for job in JOBS:
            out = args.out / engine_name / (job.slug + ("" if engine_name == "spark" else ".parquet"))
            seconds = timed(lambda: engine.run(job, out))
            total += seconds
            outputs[job.slug][engine_name] = out
            entry = results["jobs"].setdefault(job.slug, {"job": job.name, "input_rows": rows[job.dataset]})
            entry[engine_name] = {"seconds": round(seconds, 2), "rows_per_s": round(rows[job.dataset] / seconds)}
            print(
                f"{engine_name:7s} {job.name:24s} {seconds:8.2f} s  {rows[job.dataset] / seconds:14,.0f} rows/s",
                flush=True,
            )
        results["engines"][engine_name]["total_s"] = round(total, 2)
        engine.close()
    if len(args.engines) > 1:
        for job in JOBS:
            check = compare(job, outputs[job.slug])
            results["jobs"][job.slug]["check"] = check
            print(f"check   {job.name:24s} agree={check['agree']} {check['mismatched_rows']}", flush=True)
    return results


def incremental_phase(args, rows: dict[str, int]) -> dict:
    saved = np.load(args.lake / STATE_FILE)
    meta = json.loads(str(saved["meta"]))
    appended_from = meta.get("appended_from")
    if appended_from is None:
        raise SystemExit("no appended data: run bench/analytics_gen.py --append-fraction 0.01 first")
    engine = SparkEngine(
        args.lake,
        driver_memory=args.driver_memory,
        shuffle_partitions=args.shuffle_partitions,
        window_buffer_rows=args.window_buffer_rows,
    )
    engine.input_rows(JOBS[0])  # warm-up, untimed
    results: dict = {
        "appended_from": dt.datetime.fromtimestamp(appended_from, tz=dt.timezone.utc).isoformat(),
        "spark_startup_s": round(engine.startup_s, 2),
        "jobs": {},
    }
    totals = {"full": 0.0, "incremental": 0.0}
    for job in JOBS:
        emit_from = appended_from - appended_from % job.seconds
        since = emit_from - job.seconds  # one window before: the first emitted delta's earlier sample
        full_out = args.out / "spark-full" / job.slug
        inc_out = args.out / "spark-incremental" / job.slug
        full_s = timed(lambda: engine.run(job, full_out))
        inc_s = timed(lambda: engine.run(job, inc_out, since_s=since, emit_from_s=emit_from))
        totals["full"] += full_s
        totals["incremental"] += inc_s
        inc_rows = engine.input_rows(job, since)
        partition_rows = engine.partition_rows(job, since)
        check = compare(job, {"full": full_out, "incremental": inc_out}, where=f"win >= {int(emit_from)}")
        results["jobs"][job.slug] = {
            "job": job.name,
            "full": {"seconds": round(full_s, 2), "input_rows": rows[job.dataset]},
            "incremental": {
                "seconds": round(inc_s, 2),
                "input_rows": inc_rows,
                "partition_rows": partition_rows,
                "emit_from": dt.datetime.fromtimestamp(emit_from, tz=dt.timezone.utc).isoformat(),
            },
            "time_ratio": round(inc_s / full_s, 4),
            "rows_ratio": round(inc_rows / rows[job.dataset], 4),
            "check": check,
        }
        print(
            f"spark   {job.name:24s} full {full_s:7.2f} s  incremental {inc_s:6.2f} s "
            f"({inc_s / full_s:6.1%} of the time, {inc_rows / rows[job.dataset]:6.1%} of the rows, "
            f"{partition_rows / rows[job.dataset]:6.1%} in its partitions) "
            f"agree={check['agree']}",
            flush=True,
        )
    results["total"] = {k: round(v, 2) for k, v in totals.items()}
    results["total"]["time_ratio"] = round(totals["incremental"] / totals["full"], 4)
    engine.close()
    return results


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lake", nargs="?", default="/tmp/gantry-bench-lake", type=Path)
    ap.add_argument("--out", default="/tmp/gantry-bench-out", type=Path, help="where results are written")
    ap.add_argument("--engines", default="spark,duckdb,pandas", type=lambda s: s.split(","))
    ap.add_argument("--incremental", action="store_true", help="Spark incremental refresh vs full run")
    ap.add_argument("--driver-memory", default="8g")
    ap.add_argument("--shuffle-partitions", default=2 * (os.cpu_count() or 1), type=int)
    ap.add_argument(
        "--window-buffer-rows",
        default=32768,
        type=int,
        help="spark.sql.windowExec.buffer.in.memory.threshold (Spark's default: 4096)",
    )
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args(argv)
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    for engine in args.engines:
        (args.out / engine).mkdir(exist_ok=True)

    rows = lake_rows(args.lake)
    header = {
        "date": dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}",
        "lake": str(args.lake),
        "lake_rows": rows,
    }
    print(json.dumps(header), flush=True)
    phase = incremental_phase(args, rows) if args.incremental else full_phase(args, rows)
    results = {**header, "phase": "incremental" if args.incremental else "full", **phase}
    if not args.incremental and "spark" in args.engines and "duckdb" in args.engines:
        spark_total = results["engines"]["spark"]["total_s"]
        duck_total = results["engines"]["duckdb"]["total_s"]
        results["spark_over_duckdb"] = round(spark_total / duck_total, 2)
        print(f"spark/duckdb total time: {spark_total / duck_total:.2f}x", flush=True)
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    checks = [job["check"]["agree"] for job in results["jobs"].values() if "check" in job]
    if not all(checks):
        raise SystemExit("engines disagree: see mismatched_rows above")


if __name__ == "__main__":
    main()
