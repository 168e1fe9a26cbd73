"""Generate a synthetic metrics lake (docs/analytics.md section 1) for the analytics benchmark.

Run from the repository root::

    .venv/bin/python bench/analytics_gen.py                                  # 50M rows, /tmp/gantry-bench-lake
    .venv/bin/python bench/analytics_gen.py /tmp/lake --rows 1000000         # a small lake
    .venv/bin/python bench/analytics_gen.py /tmp/lake --append-fraction 0.01 # +1 % in new partitions

The cluster: ``--brokers`` brokers (20), ``--topics`` topics (100), each on ``--brokers-per-topic``
brokers (10) with ``--queues`` queues on each (5): 5,000 queues, sampled every ``--interval``
seconds (10, the sampler's default). ``--rows`` queue_samples rows make ``rows / queues`` sampler
rounds (50M rows: 10,000 rounds, 27.8 hours), ending at 2026-11-22T00:00Z. Every even topic has a
consumer group on all its queues, so group_samples holds half as many rows again.

What the counters do, so the jobs meet every case:

- topic rates follow a Zipf law (the busiest topic 2,000 msgs/s) and a day/night cycle; each
  round's messages per queue are Poisson draws; bodies are 100..2,000 bytes per queue;
- the last two brokers are plain RocketMQ ones: ``put_bytes`` is null;
- broker 3 restarts halfway: its ``put_bytes`` start again from 0;
- topic 5 is deleted and recreated a third of the way in: its ``max_offset`` restarts at 0;
- groups keep up (60 %), fall behind (20 %, consume 80 % of the rate) or drain a backlog they
  start with (20 %); ``committed_offset`` never passes ``max_offset``.

Layout: Hive partitions ``date=YYYY-MM-DD/hour=H`` as the sampler writes them, but one file per
broker per hour (``part-<epoch_ms>-<broker>-<uuid8>.parquet``) rather than one per sampler round:
360 files of 250 rows per broker-hour would measure file listing, not the jobs. Files are
written to a ``.tmp`` name and renamed. ``_gen_state.npz`` at the lake root keeps the counters,
so ``--append-fraction`` continues them in later rounds (new hour partitions) and records where
the appended data starts (``appended_from``, epoch seconds) for the benchmark's incremental run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

END = datetime(2026, 11, 22, tzinfo=timezone.utc)  # the base lake's data ends here (an hour boundary)
ROUNDS_PER_CHUNK_MAX = 360  # one hour of 10 s rounds: the generator's memory is one chunk
STATE_FILE = "_gen_state.npz"  # readers ignore names starting with "_"


@dataclass(frozen=True)
class Cluster:
    """The synthetic cluster's shape; everything else derives from it and the seed."""

    brokers: int = 20
    topics: int = 100
    brokers_per_topic: int = 10
    queues: int = 5
    interval: int = 10
    seed: int = 42

    def queue_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return (broker index, topic index, queue id) of every queue, sorted by broker."""
        rows = [
            ((t * 7 + k) % self.brokers, t, q)
            for t in range(self.topics)
            for k in range(self.brokers_per_topic)
            for q in range(self.queues)
        ]
        rows.sort()
        table = np.array(rows, dtype=np.int64)
        return table[:, 0], table[:, 1], table[:, 2].astype(np.int32)


def broker_name(b: int) -> str:
    return f"broker-{b:02d}"


def topic_name(t: int) -> str:
    return f"topic-{t:03d}"


class Generator:
    """Counters of every queue and group, advanced one chunk of sampler rounds at a time."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        c = cluster
        self.q_broker, self.q_topic, self.q_id = c.queue_table()
        n_queues = len(self.q_broker)
        rng = np.random.default_rng([c.seed, 0])
        topic_rate = 2000.0 / (np.arange(c.topics) + 1.0) ** 1.1  # msgs/s, Zipf over topics
        weight = rng.uniform(0.5, 1.5, n_queues)
        share = weight / np.bincount(self.q_topic, weights=weight)[self.q_topic]
        self.rate = topic_rate[self.q_topic] * share  # msgs/s per queue at the daily mean
        self.body = rng.integers(100, 2001, n_queues)  # bytes per message
        self.has_bytes = self.q_broker < c.brokers - 2  # the last two brokers are RocketMQ's
        self.g_cols = np.flatnonzero(self.q_topic % 2 == 0)  # queues with a consumer group
        kind = rng.choice(3, size=c.topics, p=[0.6, 0.2, 0.2])  # keep up, fall behind, drain
        g_kind = kind[self.q_topic[self.g_cols]]
        self.g_factor = np.array([1.3, 0.8, 1.6])[g_kind]
        self.phase = rng.uniform(0, 86400, c.topics)[self.q_topic]
        # Counters at the start of round 0.
        self.max_offset = rng.integers(0, 10_000_000, n_queues)
        self.min_offset = self.max_offset // 2
        self.put_bytes = self.max_offset * self.body
        start_backlog = np.where(g_kind == 2, (self.rate[self.g_cols] * 3600).astype(np.int64), 0)
        self.committed = self.max_offset[self.g_cols] - start_backlog
        self.start = 0.0  # epoch seconds of round 0, set by generate()

    @property
    def n_queues(self) -> int:
        return len(self.q_broker)

    def state(self) -> dict[str, np.ndarray]:
        return {
            "max_offset": self.max_offset,
            "min_offset": self.min_offset,
            "put_bytes": self.put_bytes,
            "committed": self.committed,
        }

    def restore(self, saved: dict[str, np.ndarray]) -> None:
        for name, value in saved.items():
            setattr(self, name, value.copy())

    def chunk(self, first_round: int, rounds: int, *, restart_round: int, recreate_round: int):
        """Advance ``rounds`` rounds from ``first_round``; return per-round arrays (rounds x queues)."""
        c = self.cluster
        rng = np.random.default_rng([c.seed, 1, first_round])
        t_round = self.start + np.arange(first_round, first_round + rounds) * c.interval  # epoch s
        day = 1.0 + 0.5 * np.sin(2 * np.pi * (t_round[:, None] - self.phase[None, :]) / 86400.0)
        expected = self.rate[None, :] * day * c.interval
        msgs = rng.poisson(expected).astype(np.int64)
        noise = rng.integers(0, 64, msgs.shape)
        byte_inc = msgs * self.body[None, :] + np.where(msgs > 0, noise, 0)

        max_offset = self.max_offset[None, :] + np.cumsum(msgs, axis=0)
        put_bytes = self.put_bytes[None, :] + np.cumsum(byte_inc, axis=0)
        min_offset = np.broadcast_to(self.min_offset, msgs.shape).copy()
        if first_round <= recreate_round < first_round + rounds:  # topic 5 deleted and recreated
            i, cols = recreate_round - first_round, self.q_topic == 5
            before = max_offset[i, cols] - msgs[i, cols]
            max_offset[i:, cols] -= before
            min_offset[i:, cols] = 0
        if first_round <= restart_round < first_round + rounds:  # broker 3 restarts
            i, cols = restart_round - first_round, self.q_broker == 3
            before = put_bytes[i, cols] - byte_inc[i, cols]
            put_bytes[i:, cols] -= before

        g = self.g_cols
        consume = rng.poisson(expected[:, g] * self.g_factor[None, :]).astype(np.int64)
        reach = self.committed[None, :] + np.cumsum(consume, axis=0)
        # committed_r = min(committed_{r-1} + consume_r, max_offset_r), without a Python loop.
        committed = reach + np.minimum(0, np.minimum.accumulate(max_offset[:, g] - reach, axis=0))

        self.max_offset, self.min_offset = max_offset[-1].copy(), min_offset[-1].copy()
        self.put_bytes, self.committed = put_bytes[-1].copy(), committed[-1].copy()
        return t_round, max_offset, min_offset, put_bytes, committed


class LakeWriter:
    """Write one file per (dataset, broker, hour) under Hive partitions, via a .tmp rename."""

    def __init__(self, lake: Path, gen: Generator, rng: np.random.Generator) -> None:
        self.lake, self.gen, self.rng = lake, gen, rng
        c = gen.cluster
        self.brokers = pa.array([broker_name(b) for b in range(c.brokers)])
        self.topics = pa.array([topic_name(t) for t in range(c.topics)])
        self.groups = pa.array([f"{topic_name(t)}-consumer" for t in range(c.topics)])
        self.skew_ms = rng.integers(0, 900, c.brokers)  # each broker's clock is its own
        self.rows = {"queue_samples": 0, "group_samples": 0}

    def write(self, t_round, max_offset, min_offset, put_bytes, committed) -> None:
        gen = self.gen
        hour = datetime.fromtimestamp(float(t_round[0]), tz=timezone.utc)
        part = f"date={hour:%Y-%m-%d}/hour={hour.hour}"
        rounds = len(t_round)
        g_broker = gen.q_broker[gen.g_cols]
        for b in range(gen.cluster.brokers):
            cols = np.flatnonzero(gen.q_broker == b)
            if len(cols) == 0:
                continue
            jitter = self.rng.integers(0, 50, rounds)
            ts_us = (t_round * 1000 + self.skew_ms[b] + jitter).astype(np.int64) * 1000
            n = len(cols)
            ts = pa.array(np.repeat(ts_us, n), type=pa.timestamp("us", tz="UTC"))
            tag = f"{int(ts_us[0] // 1000)}-{broker_name(b)}-{self.rng.bytes(4).hex()}"
            pb = put_bytes[:, cols].ravel()
            table = pa.table(
                {
                    "ts": ts,
                    "broker": self.brokers.take(pa.array(np.full(rounds * n, b))),
                    "topic": self.topics.take(pa.array(np.tile(gen.q_topic[cols], rounds))),
                    "queue_id": pa.array(np.tile(gen.q_id[cols], rounds), type=pa.int32()),
                    "min_offset": pa.array(min_offset[:, cols].ravel()),
                    "max_offset": pa.array(max_offset[:, cols].ravel()),
                    "put_bytes": pa.array(pb, mask=np.full(len(pb), not gen.has_bytes[cols[0]])),
                }
            )
            self._write("queue_samples", part, tag, table)

            gcols = np.flatnonzero(g_broker == b)
            if len(gcols) == 0:
                continue
            qcols = gen.g_cols[gcols]
            m = len(gcols)
            table = pa.table(
                {
                    "ts": pa.array(np.repeat(ts_us, m), type=pa.timestamp("us", tz="UTC")),
                    "broker": self.brokers.take(pa.array(np.full(rounds * m, b))),
                    "group": self.groups.take(pa.array(np.tile(gen.q_topic[qcols], rounds))),
                    "topic": self.topics.take(pa.array(np.tile(gen.q_topic[qcols], rounds))),
                    "queue_id": pa.array(np.tile(gen.q_id[qcols], rounds), type=pa.int32()),
                    "committed_offset": pa.array(committed[:, gcols].ravel()),
                    "max_offset": pa.array(max_offset[:, qcols].ravel()),
                }
            )
            self._write("group_samples", part, tag, table)

    def _write(self, dataset: str, part: str, tag: str, table: pa.Table) -> None:
        directory = self.lake / dataset / part
        directory.mkdir(parents=True, exist_ok=True)
        final = directory / f"part-{tag}.parquet"
        tmp = directory / f".part-{tag}.parquet.tmp"
        pq.write_table(table, tmp)
        os.replace(tmp, final)
        self.rows[dataset] += table.num_rows


def generate(lake: Path, cluster: Cluster, *, rows: int | None, append_fraction: float | None) -> dict:
    """Write the base lake (``rows``) or append ``append_fraction`` of it; return a summary."""
    gen = Generator(cluster)
    state_path = lake / STATE_FILE
    if append_fraction is None:
        if lake.exists():
            shutil.rmtree(lake)
        lake.mkdir(parents=True)
        base_rounds = math.ceil(rows / gen.n_queues)
        first_round, rounds = 0, base_rounds
        gen.start = END.timestamp() - base_rounds * cluster.interval
        appended_from = None
    else:
        saved = dict(np.load(state_path))
        meta = json.loads(str(saved.pop("meta")))
        if meta["cluster"] != asdict(cluster):
            raise SystemExit(f"the lake was generated with {meta['cluster']}, not {asdict(cluster)}")
        gen.restore(saved)
        gen.start = meta["start"]
        base_rounds = meta["base_rounds"]
        first_round = meta["next_round"]
        rounds = max(1, math.ceil(append_fraction * base_rounds))
        appended_from = gen.start + first_round * cluster.interval
    restart_round, recreate_round = base_rounds // 2, base_rounds // 3

    writer = LakeWriter(lake, gen, np.random.default_rng([cluster.seed, 2, first_round]))
    started = time.perf_counter()
    r, end = first_round, first_round + rounds
    while r < end:
        t = gen.start + r * cluster.interval
        to_hour_end = int((3600 - t % 3600) // cluster.interval) or 1
        n = min(end - r, to_hour_end, ROUNDS_PER_CHUNK_MAX)
        writer.write(*gen.chunk(r, n, restart_round=restart_round, recreate_round=recreate_round))
        r += n
    elapsed = time.perf_counter() - started

    meta = {
        "cluster": asdict(cluster),
        "start": gen.start,
        "base_rounds": base_rounds,
        "next_round": end,
        "appended_from": appended_from,
    }
    np.savez(state_path, meta=np.array(json.dumps(meta)), **gen.state())
    summary = {
        "lake": str(lake),
        "queues": gen.n_queues,
        "groups_queues": int(len(gen.g_cols)),
        "rounds": rounds,
        "from": datetime.fromtimestamp(gen.start + first_round * cluster.interval, tz=timezone.utc).isoformat(),
        "to": datetime.fromtimestamp(gen.start + end * cluster.interval, tz=timezone.utc).isoformat(),
        "rows": writer.rows,
        "seconds": round(elapsed, 1),
        "appended_from": appended_from,
    }
    return summary


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("lake", nargs="?", default="/tmp/gantry-bench-lake", type=Path)
    ap.add_argument("--rows", type=int, default=50_000_000, help="queue_samples rows of the base lake")
    ap.add_argument(
        "--append-fraction",
        type=float,
        default=None,
        help="append this fraction of the base lake's rounds in new, later partitions",
    )
    ap.add_argument("--brokers", type=int, default=20)
    ap.add_argument("--topics", type=int, default=100)
    ap.add_argument("--brokers-per-topic", type=int, default=10)
    ap.add_argument("--queues", type=int, default=5, help="queues per topic per broker")
    ap.add_argument("--interval", type=int, default=10, help="seconds between sampler rounds")
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args(argv)
    cluster = Cluster(args.brokers, args.topics, args.brokers_per_topic, args.queues, args.interval, args.seed)
    summary = generate(args.lake, cluster, rows=args.rows, append_fraction=args.append_fraction)
    json.dump(summary, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
