"""The metrics lake: broker samples as Parquet files, partitioned by the UTC date and hour.

Layout (docs/analytics.md section 1)::

    <lake>/queue_samples/date=2026-11-22/hour=14/part-<epoch_ms>-<broker>-<uuid8>.parquet
    <lake>/group_samples/date=2026-11-22/hour=14/part-<epoch_ms>-<broker>-<uuid8>.parquet

A file holds the rows of one broker's answer (one ``ts``), so a sampler round adds at most one
file per dataset per broker. Files are written under a ``.``-prefixed temporary name in their
final directory, flushed to disk and renamed: Spark and pyarrow ignore names starting with ``.``
or ``_``, so a reader never sees a half-written file, and a crashed writer leaves only a hidden
``.tmp`` that :func:`lake_prune` removes with its partition.

The partition columns ``date`` (string ``YYYY-MM-DD``) and ``hour`` (int, not zero-padded) live
in the directory names only (Hive style); :func:`partitions_since` lists the partition
directories a refresh needs, so it reads the hours since its watermark and no others.
"""

from __future__ import annotations

import logging
import os
import shutil
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

log = logging.getLogger(__name__)

QUEUE_SAMPLES = "queue_samples"
GROUP_SAMPLES = "group_samples"
DATASETS = (QUEUE_SAMPLES, GROUP_SAMPLES)

_TS = pa.timestamp("us", tz="UTC")  # Spark reads TIMESTAMP(us, UTC) as its (UTC-adjusted) timestamp

# The columns stored in the files; ``date`` and ``hour`` are the directories.
SCHEMAS: Mapping[str, pa.Schema] = {
    QUEUE_SAMPLES: pa.schema(
        [
            pa.field("ts", _TS, nullable=False),
            pa.field("broker", pa.string(), nullable=False),
            pa.field("topic", pa.string(), nullable=False),
            pa.field("queue_id", pa.int32(), nullable=False),
            pa.field("min_offset", pa.int64(), nullable=False),
            pa.field("max_offset", pa.int64(), nullable=False),
            pa.field("put_bytes", pa.int64(), nullable=True),
        ]
    ),
    GROUP_SAMPLES: pa.schema(
        [
            pa.field("ts", _TS, nullable=False),
            pa.field("broker", pa.string(), nullable=False),
            pa.field("group", pa.string(), nullable=False),
            pa.field("topic", pa.string(), nullable=False),
            pa.field("queue_id", pa.int32(), nullable=False),
            pa.field("committed_offset", pa.int64(), nullable=False),
            pa.field("max_offset", pa.int64(), nullable=False),
        ]
    ),
}


SETS_DIR = "sets"  # the other name-server sets' lakes: <LAKE_DIR>/sets/<set>/ (not beside the datasets, whose names a set could take)


def lake_dir(namesrv_set: str | None = None) -> Path:
    """The lake root of a name-server set (None: the current one), read from settings when called.

    ``default``'s lake is ``settings.GANTRY_ANALYTICS["LAKE_DIR"]`` itself (where it was before sets had
    dashboards); another set's is ``LAKE_DIR/sets/<set>`` (set names are ``[A-Za-z0-9][A-Za-z0-9_-]*``).
    """
    from django.conf import settings

    if namesrv_set is None:
        from console import namesrv_scope

        namesrv_set = namesrv_scope.current_name()
    root = Path(settings.GANTRY_ANALYTICS["LAKE_DIR"])
    if namesrv_set == "default":
        return root
    if not namesrv_set or "/" in namesrv_set or namesrv_set.startswith("."):
        raise ValueError(f"not a name-server set name: {namesrv_set!r}")
    return root / SETS_DIR / namesrv_set


def utc_from_ms(ms: int) -> datetime:
    return datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=ms)


def partition_name(instant: datetime) -> tuple[str, str]:
    """The ``date=...`` and ``hour=...`` directory names of an instant (UTC)."""
    instant = instant.astimezone(timezone.utc)
    return f"date={instant:%Y-%m-%d}", f"hour={instant.hour}"


def partition_dir(root: Path, dataset: str, instant: datetime) -> Path:
    date_part, hour_part = partition_name(instant)
    return Path(root) / dataset / date_part / hour_part


@dataclass(frozen=True)
class Partition:
    """One ``date=/hour=`` directory of a dataset; ``start`` is the UTC hour it holds."""

    path: Path
    start: datetime


def _safe(name: str) -> str:
    """A broker name fit for a file name (broker names are ASCII, but be sure)."""
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name) or "broker"


def write_samples(root: Path, dataset: str, *, ts_ms: int, broker: str, columns: Mapping[str, Sequence]) -> Path | None:
    """Write one broker's rows of ``dataset`` sampled at ``ts_ms``; the file's path (None: no rows).

    ``columns`` maps the schema's column names except ``ts`` (every row has the same ``ts``) to
    equally long sequences.
    """
    schema = SCHEMAS[dataset]
    names = [f.name for f in schema if f.name != "ts"]
    lengths = {len(columns[n]) for n in names}
    if len(lengths) != 1:
        raise ValueError(f"columns of {dataset} differ in length: {sorted(lengths)}")
    count = lengths.pop()
    if count == 0:
        return None
    when = utc_from_ms(ts_ms)
    arrays = [pa.array([when] * count, type=_TS)] + [
        pa.array(list(columns[n]), type=schema.field(n).type) for n in names
    ]
    table = pa.Table.from_arrays(arrays, schema=schema)
    directory = partition_dir(root, dataset, when)
    directory.mkdir(parents=True, exist_ok=True)
    final = directory / f"part-{ts_ms}-{_safe(broker)}-{uuid.uuid4().hex[:8]}.parquet"
    tmp = directory / f".{final.name}.tmp"
    try:
        with open(tmp, "wb") as out:
            pq.write_table(table, out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return final


def partitions(root: Path, dataset: str) -> list[Partition]:
    """Every partition directory of ``dataset``, oldest first (names that do not parse are skipped)."""
    base = Path(root) / dataset
    found: list[Partition] = []
    if not base.is_dir():
        return found
    for date_dir in base.iterdir():
        if not date_dir.is_dir() or not date_dir.name.startswith("date="):
            continue
        try:
            day = datetime.strptime(date_dir.name[5:], "%Y-%m-%d").replace(tzinfo=timezone.utc)
        except ValueError:
            continue
        for hour_dir in date_dir.iterdir():
            if not hour_dir.is_dir() or not hour_dir.name.startswith("hour="):
                continue
            try:
                hour = int(hour_dir.name[5:])
            except ValueError:
                continue
            if 0 <= hour <= 23:
                found.append(Partition(hour_dir, day + timedelta(hours=hour)))
    return sorted(found, key=lambda p: p.start)


def partitions_since(root: Path, dataset: str, since: datetime | None) -> list[Path]:
    """The partition directories of ``dataset`` that may hold samples at or after ``since``
    (all of them when ``since`` is None), oldest first: what an incremental refresh reads."""
    if since is None:
        return [p.path for p in partitions(root, dataset)]
    hour_start = since.astimezone(timezone.utc).replace(minute=0, second=0, microsecond=0)
    return [p.path for p in partitions(root, dataset) if p.start >= hour_start]


def _visible_files(directory: Path) -> list[Path]:
    return sorted(f for f in directory.iterdir() if f.suffix == ".parquet" and not f.name.startswith((".", "_")))


def _file_ms(path: Path) -> int | None:
    """The sample time in a file's name (``part-<epoch_ms>-...``; a merged file: its first row's)."""
    try:
        return int(path.name.split("-")[1])
    except (IndexError, ValueError):
        return None


def newest_sample(root: Path) -> datetime | None:
    """The time of the newest sample file in the lake (from the names in the newest partitions), or None."""
    newest: int | None = None
    for dataset in DATASETS:
        for p in reversed(partitions(root, dataset)):
            stamps = [ms for ms in (_file_ms(f) for f in _visible_files(p.path)) if ms is not None]
            if stamps:
                newest = max(newest or 0, max(stamps))
                break
    return None if newest is None else utc_from_ms(newest)


def lake_compact(root: Path, *, before: datetime) -> int:
    """Merge each closed hour's files (partitions whose hour ends before ``before``) into one file
    per dataset, and in the open hour the files of samples taken before ``before``; how many
    partitions were merged.

    The open hour matters since the live refresh (every minute) reads it every time: merged up to
    a few minutes ago, it is a couple of files instead of one per broker every 10 s.

    The sampler writes a file per broker every few seconds (thousands an hour); Spark pays per
    file, so hours it has done with become one file each. The merged file is written hidden, renamed
    into place, then the small files are deleted: a crash in between leaves rows twice, which
    the next compaction removes (it keeps unique rows) and which the jobs ignore meanwhile (a repeated
    sample is an interval of 0 s, dropped). Run by the refresh task on the ``analytics`` queue, whose
    single worker never reads the lake at the same time.
    """
    merged = 0
    before_ms = int(before.timestamp() * 1000)
    for dataset in DATASETS:
        schema = SCHEMAS[dataset]
        for p in partitions(root, dataset):
            if p.start >= before:
                continue
            files = _visible_files(p.path)
            if p.start + timedelta(hours=1) > before:  # the open hour: only samples old enough to have all arrived
                files = [f for f in files if (_file_ms(f) or before_ms) < before_ms]
            if len(files) < 2:
                continue
            try:
                table = pa.concat_tables(pq.read_table(f, schema=schema) for f in files)
            except (OSError, ValueError) as exc:  # a damaged file: leave the hour as it is, for a person to look at
                log.warning("lake: not compacting %s: %s", p.path, exc)
                continue
            names = [f.name for f in schema]
            table = (
                table.group_by(names, use_threads=False)
                .aggregate([])
                .select(names)
                .sort_by([("ts", "ascending"), ("broker", "ascending")])
            )
            first_ms = int(table.column("ts")[0].value // 1000) if table.num_rows else 0
            final = p.path / f"part-{first_ms}-compacted-{uuid.uuid4().hex[:8]}.parquet"
            tmp = p.path / f".{final.name}.tmp"
            try:
                with open(tmp, "wb") as out:
                    pq.write_table(table.cast(schema), out)
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(tmp, final)
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
            for f in files:
                f.unlink(missing_ok=True)
            merged += 1
    return merged


def lake_prune(root: Path, *, before: datetime) -> int:
    """Delete the partitions whose whole hour ends before ``before``; how many were deleted."""
    removed = 0
    for dataset in DATASETS:
        for p in partitions(root, dataset):
            if p.start + timedelta(hours=1) <= before:
                shutil.rmtree(p.path, ignore_errors=True)
                removed += 1
        base = Path(root) / dataset
        if base.is_dir():
            for date_dir in base.iterdir():
                if date_dir.is_dir() and date_dir.name.startswith("date=") and not any(date_dir.iterdir()):
                    date_dir.rmdir()
    return removed
