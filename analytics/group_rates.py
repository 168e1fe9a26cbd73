"""Each consumer group's consume rate now, from the metrics sampler's two newest rounds.

The sampler (:mod:`analytics.sampler`) writes every group's committed offsets into the lake at
each round, one file per broker (``part-<epoch_ms>-<broker>-<uuid8>.parquet``, all rows at the
broker's own instant). A group's consume TPS is, per broker, what its committed offsets moved
between that broker's two newest rounds, divided by the time between them, summed over brokers;
a queue committed backwards (an offset reset) counts 0. Nothing is written: a page asking for
the rate reads the lake, and two page views never share state.

A group with no two rounds on any broker yet, or whose newest round is older than
:func:`max_age_s` (the sampler is not running), has no rate: the pages then show "no data yet",
as they show any unknown figure. Hours the refresh compacted (one merged file per hour) are not
read: the rate is the last minute's, and the current hour is never compacted.

Listed in ``settings.GANTRY_GROUP_TPS_SOURCE``: the group list takes its TPS from there.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from analytics.lake import GROUP_SAMPLES, lake_dir, partitions

log = logging.getLogger(__name__)

COLUMNS = ["group", "topic", "queue_id", "committed_offset"]
ROUNDS_OF_AGE = 3  # a newest round older than this many sampler periods is stale ...
MIN_AGE_S = 60.0  # ... and never less than this (a slow round or a restarting beat is not "no data")


@dataclass(frozen=True)
class SampleFile:
    """One broker's round in the lake, as its file name tells."""

    path: Path
    ts_ms: int
    broker: str


def max_age_s() -> float:
    """How old the newest round may be for its rate to count (ROUNDS_OF_AGE sampler periods, at least MIN_AGE_S)."""
    from django.conf import settings

    return max(MIN_AGE_S, ROUNDS_OF_AGE * float(settings.GANTRY_ANALYTICS.get("SAMPLE_INTERVAL_S", 10)))


def _sample_file(path: Path) -> SampleFile | None:
    """``part-<epoch_ms>-<broker>-<uuid8>.parquet``; None for a compacted or foreign name."""
    if path.suffix != ".parquet" or path.name.startswith((".", "_")):
        return None
    parts = path.stem.split("-", 2)
    if len(parts) != 3 or parts[0] != "part" or not parts[1].isdigit():
        return None
    broker = parts[2].rsplit("-", 1)[0]
    if broker == "compacted":
        return None
    return SampleFile(path, int(parts[1]), broker)


def newest_rounds(root: Path, hours: int = 2) -> dict[str, tuple[SampleFile, SampleFile]]:
    """Broker -> its two newest rounds (older, newer) in the last ``hours`` partitions of the group samples."""
    by_broker: dict[str, dict[int, SampleFile]] = {}
    for partition in partitions(root, GROUP_SAMPLES)[-hours:]:
        for path in partition.path.iterdir():
            found = _sample_file(path)
            if found is not None:
                by_broker.setdefault(found.broker, {})[found.ts_ms] = found
    out = {}
    for broker, rounds in by_broker.items():
        if len(rounds) >= 2:
            older, newer = sorted(rounds)[-2:]
            out[broker] = (rounds[older], rounds[newer])
    return out


def _committed(path: Path) -> dict[tuple[str, str, int], int]:
    table = pq.read_table(path, columns=COLUMNS).to_pydict()
    return {(g, t, q): o for g, t, q, o in zip(table["group"], table["topic"], table["queue_id"], table["committed_offset"])}


def group_consume_tps(*, root: Path | None = None, now_ms: int | None = None) -> dict[str, float]:
    """Group -> messages consumed per second between the newest two sampler rounds (groups without a rate left out)."""
    root = lake_dir() if root is None else Path(root)
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms  # wall clock: the rounds carry the brokers' wall clocks
    oldest_ms = now_ms - max_age_s() * 1000
    rates: dict[str, float] = {}
    try:
        for older, newer in newest_rounds(root).values():
            if newer.ts_ms < oldest_ms:
                continue
            before, after = _committed(older.path), _committed(newer.path)
            seconds = (newer.ts_ms - older.ts_ms) / 1000
            moved: dict[str, int] = {}
            for key, offset in after.items():
                if key in before:
                    moved[key[0]] = moved.get(key[0], 0) + max(offset - before[key], 0)
            for group, count in moved.items():
                rates[group] = rates.get(group, 0.0) + count / seconds
    except (OSError, ValueError) as exc:  # a damaged or vanishing file (a prune, a compaction): no rate this time
        log.warning("group rates: the lake at %s could not be read: %s", root, exc)
        return {}
    return rates
