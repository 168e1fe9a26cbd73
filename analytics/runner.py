"""The dashboard refresh: metrics lake -> jobs -> result rows, replacing windows atomically.

**Incremental.** The last good run left a watermark (its "now"). The next run recomputes the
hour windows from the start of the watermark's hour on (``emit_from``: that hour was partial
then) and the minute windows from :data:`LATE_SAMPLES` before the watermark on (samples written
late land there; older minutes are final), and reads the lake from one sample
margin (two sample intervals) before that, so the first recomputed window's first interval has
the sample before it. It also reads as far back as the top list (the last hour) and the backlog
trend (its lookback) need. Only the partition directories since then are listed and read
(:func:`analytics.lake.partitions_since`); the ``ts`` filter does the rest. The first run, with no
watermark, reads at most :data:`BACKFILL` (the longest dashboard range and a day).

**Atomic.** Spark's results are small (a point per window and key), so they are collected into
the worker and written in one database transaction that deletes the recomputed windows' rows
(``window_start >= emit_from``; rows past the retention go too), inserts the new ones, replaces
the trends and top lists, moves the watermark, clears ``stale_since`` and marks the run
succeeded. A run that dies before that transaction commits has changed nothing: the previous
result stays, and the run is recorded failed (by itself, or as lost when its heartbeat stops,
analytics.runs), which marks the dashboards stale. The next good run starts from the last good
watermark, so it recomputes everything the failed one would have.

A run that was declared lost while it was in fact only stalled finds itself no longer running
when it commits, and writes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone as dj_timezone

from analytics import lake
from analytics.models import BacklogPoint, BacklogTrend, DashboardState, Ranking, RefreshRun, ThroughputPoint
from analytics.runs import Heartbeat, RefreshRunInfo, run_fail, run_info, run_open, run_start, runs_prune

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

log = logging.getLogger(__name__)

HOUR = timedelta(hours=1)
# The first run reads a week and a day: the longest range a dashboard shows, plus margin.
BACKFILL = timedelta(days=8)
# Result rows older than this are deleted by every good run: minutes for the hour and day
# ranges (a day and an hour, so "day" at 1m is whole), hours for the week range (and a day).
RETAIN = {"1m": timedelta(days=1, hours=1), "1h": timedelta(days=8)}
THROUGHPUT_LEVELS = ("queue", "topic", "broker")
BACKLOG_LEVELS = ("queue", "group")
TOP_WINDOW = HOUR  # the top topics are the last hour's
# A sample arrives at most this late (a broker's clock behind, a slow sampler round): minute windows
# that ended this long before the last good run are not recomputed (hour windows always are, from
# the start of that run's hour).
LATE_SAMPLES = timedelta(minutes=5)
DEFAULT_TREND_LOOKBACK_S = 600
DEFAULT_TOP_N = 10
DEFAULT_LAKE_RETENTION_DAYS = 14  # raw samples kept for recomputation; the dashboards need 8 days


class RunLost(Exception):
    """The run was recorded failed (lost) while it computed: its results must not be written."""


def _floor(instant: datetime, seconds: int) -> datetime:
    epoch = int(instant.timestamp())
    return datetime.fromtimestamp(epoch - epoch % seconds, tz=timezone.utc)


def _option(name: str, default: Any) -> Any:
    return settings.GANTRY_ANALYTICS.get(name, default)


@dataclass(frozen=True)
class RefreshPlan:
    """What a run reads and which windows it replaces."""

    as_of: datetime  # the run's "now"
    emit_from: dict[str, datetime]  # per resolution: windows starting here or later are replaced
    read_from: datetime  # samples at or after this are read
    trend_lookback_s: int


def refresh_plan(
    *,
    as_of: datetime,
    watermark: datetime | None,
    sample_interval_s: float,
    trend_lookback_s: int = DEFAULT_TREND_LOOKBACK_S,
) -> RefreshPlan:
    """Plan a run at ``as_of`` after a last good run at ``watermark`` (None: no good run yet).

    >>> from datetime import datetime, timezone
    >>> p = refresh_plan(as_of=datetime(2026, 11, 22, 14, 20, tzinfo=timezone.utc),
    ...                  watermark=datetime(2026, 11, 22, 14, 5, tzinfo=timezone.utc), sample_interval_s=10)
    >>> p.emit_from["1h"].isoformat(), p.emit_from["1m"].isoformat(), p.read_from.isoformat()
    ('2026-11-22T14:00:00+00:00', '2026-11-22T14:00:00+00:00', '2026-11-22T13:19:40+00:00')
    >>> live = refresh_plan(as_of=datetime(2026, 11, 22, 14, 21, tzinfo=timezone.utc),
    ...                     watermark=datetime(2026, 11, 22, 14, 20, 1, tzinfo=timezone.utc), sample_interval_s=10)
    >>> live.emit_from["1h"].isoformat(), live.emit_from["1m"].isoformat()
    ('2026-11-22T14:00:00+00:00', '2026-11-22T14:15:00+00:00')
    """
    base = as_of - BACKFILL if watermark is None else min(watermark, as_of)
    base = _floor(base, 3600)
    emit_from = {"1h": base, "1m": max(base, _floor(as_of - RETAIN["1m"], 60))}
    if (
        watermark is not None
    ):  # minutes settled LATE_SAMPLES before the last run are final: the live run's minutes are few
        emit_from["1m"] = max(emit_from["1m"], _floor(min(watermark, as_of) - LATE_SAMPLES, 60))
    needed = min(base, _floor(as_of, 60) - TOP_WINDOW, as_of - timedelta(seconds=trend_lookback_s))
    read_from = needed - timedelta(seconds=2 * sample_interval_s)
    return RefreshPlan(as_of=as_of, emit_from=emit_from, read_from=read_from, trend_lookback_s=trend_lookback_s)


@dataclass
class Results:
    throughput: list[dict] = field(default_factory=list)
    backlog: list[dict] = field(default_factory=list)
    trends: list[dict] = field(default_factory=list)
    top_topics: list[dict] = field(default_factory=list)
    top_groups: list[dict] = field(default_factory=list)
    rows_read: int = 0
    data_until: datetime | None = None


# -- reading and collecting ---------------------------------------------------------------------------


def _micros(instant: datetime) -> int:
    delta = instant - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _from_micros(us: int) -> datetime:
    return datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=us)


def read_samples(spark: SparkSession, root: Path, dataset: str, *, since: datetime) -> DataFrame:
    """The samples of ``dataset`` at or after ``since``, reading only the partitions that may hold them."""
    from pyspark.sql import functions as F

    from analytics.jobs import GROUP_SAMPLES_SCHEMA, QUEUE_SAMPLES_SCHEMA

    schema = QUEUE_SAMPLES_SCHEMA if dataset == lake.QUEUE_SAMPLES else GROUP_SAMPLES_SCHEMA
    paths = lake.partitions_since(root, dataset, since)
    if not paths:
        return spark.createDataFrame([], schema)
    frame = spark.read.schema(schema).option("basePath", str(Path(root) / dataset)).parquet(*(str(p) for p in paths))
    return frame.where(F.col("ts") >= F.timestamp_micros(F.lit(_micros(since))))


def collect(frame: DataFrame) -> list[dict]:
    """The rows of a (small) job result as dicts, timestamps as aware UTC datetimes.

    Timestamps travel as epoch microseconds: Spark hands timestamps to Python in the Python
    process's local time zone, which a worker host need not have set to UTC.
    """
    from pyspark.sql import functions as F
    from pyspark.sql.types import TimestampType

    stamps = {f.name for f in frame.schema.fields if isinstance(f.dataType, TimestampType)}
    columns = [
        F.unix_micros(F.col(f"`{name}`")).alias(name) if name in stamps else F.col(f"`{name}`")
        for name in frame.columns
    ]
    rows = []
    for row in frame.select(*columns).collect():
        item = row.asDict()
        for name in stamps:
            if item[name] is not None:
                item[name] = _from_micros(item[name])
        rows.append(item)
    return rows


def _union(frames: Iterable[DataFrame]) -> DataFrame:
    frames = list(frames)
    united = frames[0]
    for frame in frames[1:]:
        united = united.unionByName(frame)
    return united


def compute(
    spark: SparkSession, root: Path, plan: RefreshPlan, *, progress=lambda text: None, top_n: int = DEFAULT_TOP_N
) -> Results:
    """Run every job over the lake as the plan says; the collected rows."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    from analytics.jobs import backlog, backlog_trend, throughput, top_groups, top_topics

    progress(f"reading the lake since {plan.read_from:%Y-%m-%d %H:%M:%S} UTC")
    queues = read_samples(spark, root, lake.QUEUE_SAMPLES, since=plan.read_from).persist(StorageLevel.MEMORY_AND_DISK)
    groups = read_samples(spark, root, lake.GROUP_SAMPLES, since=plan.read_from).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        out = Results()
        stats = collect(
            queues.select(F.count(F.lit(1)).alias("n"), F.max("ts").alias("until")).unionByName(
                groups.select(F.count(F.lit(1)).alias("n"), F.max("ts").alias("until"))
            )
        )
        out.rows_read = sum(r["n"] for r in stats)
        out.data_until = max((r["until"] for r in stats if r["until"] is not None), default=None)
        # One Spark job per result table and resolution: every level of it in one union.
        for resolution, emit_from in plan.emit_from.items():
            progress(f"throughput {resolution}")
            out.throughput += collect(
                _union(
                    throughput(queues, resolution=resolution, level=level, emit_from=emit_from)
                    for level in THROUGHPUT_LEVELS
                )
            )
            progress(f"backlog {resolution}")
            out.backlog += collect(
                _union(
                    backlog(groups, resolution=resolution, level=level, emit_from=emit_from) for level in BACKLOG_LEVELS
                )
            )
        progress("backlog trends")
        trend = backlog_trend(groups, now=plan.as_of, lookback_s=plan.trend_lookback_s)
        out.trends = collect(trend)
        progress("top lists")
        last_hour = throughput(queues, resolution="1m", level="topic", emit_from=_floor(plan.as_of, 60) - TOP_WINDOW)
        out.top_topics = collect(top_topics(last_hour, n=top_n))
        out.top_groups = collect(top_groups(trend, n=top_n))
        return out
    finally:
        queues.unpersist()
        groups.unpersist()


# -- writing ------------------------------------------------------------------------------------------


def _points(model, rows: Iterable[dict], tier: str) -> list:
    return [model(**row, namesrv_set=tier) for row in rows]


def commit(run_id: int, plan: RefreshPlan, results: Results, *, now: datetime | None = None) -> RefreshRun:
    """Replace the recomputed windows and mark the run succeeded, all in one transaction."""
    now = now or dj_timezone.now()
    with transaction.atomic():
        tier = RefreshRun.objects.values_list("namesrv_set", flat=True).get(
            pk=run_id
        )  # the results are this set's only
        state = DashboardState.load(tier, for_update=True)
        run = RefreshRun.objects.select_for_update().get(pk=run_id)
        if run.status != RefreshRun.Status.RUNNING:
            raise RunLost(f"refresh run {run_id} is {run.status} ({run.error or 'no reason'}); its results are dropped")
        for model in (ThroughputPoint, BacklogPoint):
            for resolution, emit_from in plan.emit_from.items():
                model.objects.filter(namesrv_set=tier, resolution=resolution, window_start__gte=emit_from).delete()
                model.objects.filter(
                    namesrv_set=tier, resolution=resolution, window_start__lt=plan.as_of - RETAIN[resolution]
                ).delete()
        ThroughputPoint.objects.bulk_create(_points(ThroughputPoint, results.throughput, tier), batch_size=1000)
        BacklogPoint.objects.bulk_create(_points(BacklogPoint, results.backlog, tier), batch_size=1000)
        BacklogTrend.objects.filter(namesrv_set=tier).delete()
        BacklogTrend.objects.bulk_create(
            [BacklogTrend(**row, namesrv_set=tier, as_of=plan.as_of) for row in results.trends], batch_size=1000
        )
        Ranking.objects.filter(namesrv_set=tier).delete()
        Ranking.objects.bulk_create(
            [Ranking(kind=Ranking.Kind.TOPICS, namesrv_set=tier, as_of=plan.as_of, **row) for row in results.top_topics]
            + [
                Ranking(kind=Ranking.Kind.GROUPS, namesrv_set=tier, as_of=plan.as_of, **row)
                for row in results.top_groups
            ]
        )
        state.last_good_run = run
        state.watermark = plan.as_of
        state.data_until = results.data_until or state.data_until
        state.stale_since = None
        state.save()
        RefreshRun.finish(
            run_id,
            RefreshRun.Status.SUCCEEDED,
            now=now,
            rows_read=results.rows_read,
            window_from=min(plan.emit_from.values()),
            window_to=plan.as_of,
            progress=(
                f"done: {len(results.throughput)} throughput and {len(results.backlog)} backlog points "
                f"from {results.rows_read} samples"
            ),
        )
        run.refresh_from_db()
    return run


# -- the run ------------------------------------------------------------------------------------------


def dashboard_refresh(
    *,
    run_id: int | None = None,
    trigger: str = RefreshRun.Trigger.NIGHTLY,
    requested_by: str = "beat",
    spark: SparkSession | None = None,
    as_of: datetime | None = None,
    root: Path | None = None,
    namesrv_set: str | None = None,
) -> RefreshRunInfo:
    """Run refresh ``run_id`` (None: open one for ``trigger`` in ``namesrv_set``, unless one is active) and return it.

    Idempotent: a run that already finished is returned unchanged. ``spark`` defaults to the
    process's session (analytics.spark), ``as_of`` to now, ``namesrv_set`` to the current set (a
    given run's is its own), ``root`` to that set's lake (analytics.lake.lake_dir).
    A failure is recorded on the run (and logged), not raised; an interrupt is recorded and raised.
    """
    if run_id is None:
        run, opened = run_open(trigger=trigger, requested_by=requested_by, namesrv_set=namesrv_set or _current_set())
        if not opened:
            log.info("refresh (%s): run %s is already %s; not starting another", trigger, run.pk, run.status)
            return run_info(run)
        run_id = run.pk
    started = run_start(run_id)
    if started is None:
        gone = RefreshRun.objects.filter(pk=run_id).first()
        if gone is None:
            raise RefreshRun.DoesNotExist(f"refresh run {run_id} does not exist")
        log.info("refresh run %s is %s already: nothing to do", run_id, gone.status)
        return run_info(gone)
    tier = started.namesrv_set
    root = Path(root) if root is not None else lake.lake_dir(tier)

    own_session = spark is None
    with Heartbeat(run_id) as beat:
        try:
            beat.progress("starting Spark")
            if spark is None:  # own_session
                from analytics.spark import spark_session

                spark = spark_session()
            state = DashboardState.load(tier)
            plan = refresh_plan(
                as_of=as_of or dj_timezone.now(),
                watermark=state.watermark,
                sample_interval_s=float(_option("SAMPLE_INTERVAL_S", 10.0)),
                trend_lookback_s=int(_option("TREND_LOOKBACK_S", DEFAULT_TREND_LOOKBACK_S)),
            )
            results = compute(spark, root, plan, progress=beat.progress, top_n=int(_option("TOP_N", DEFAULT_TOP_N)))
            beat.progress("writing results")
            commit(run_id, plan, results)
        except RunLost as exc:
            log.warning("%s", exc)
        except Exception as exc:  # the run records every failure; the worker goes on
            log.exception("refresh run %s failed", run_id)
            run_fail(run_id, failure_reason(exc))
            if own_session:
                from analytics.spark import is_gateway_failure, spark_stop

                if is_gateway_failure(exc):
                    spark_stop()  # the next run starts a new JVM
        except BaseException as exc:  # interrupted (worker shutdown): record it, then let it go on
            run_fail(run_id, f"interrupted: {type(exc).__name__}")
            raise
    _prune_lake(root, as_of)
    _compact_lake(root, as_of)
    runs_prune()
    return run_info(RefreshRun.objects.get(pk=run_id))


def _current_set() -> str:
    from console import namesrv_scope

    return namesrv_scope.current_name()


def new_samples(root: Path | None = None, namesrv_set: str | None = None) -> bool:
    """Whether the set's lake (None: the current set's) holds a sample newer than its last good run read (a live run has work)."""
    namesrv_set = namesrv_set or _current_set()
    state = DashboardState.objects.filter(namesrv_set=namesrv_set).first()
    if state is None or state.data_until is None or state.stale_since is not None:
        return True
    try:
        newest = lake.newest_sample(Path(root) if root is not None else lake.lake_dir(namesrv_set))
    except OSError:
        return True  # let the run find out and say so
    return newest is not None and newest > state.data_until


def failure_reason(exc: BaseException) -> str:
    """What a failed run shows: the exception's first line (Spark's carry a JVM stack trace)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return f"{type(exc).__name__}: {lines[0] if lines else 'no message'}"[:500]


COMPACT_SETTLE = timedelta(minutes=5)  # samples older than this have all arrived: their files are merged


def _compact_lake(root: Path, as_of: datetime | None) -> None:
    try:
        merged = lake.lake_compact(Path(root), before=(as_of or dj_timezone.now()) - COMPACT_SETTLE)
        if merged:
            log.info("lake: merged the files of %s hour partitions", merged)
    except (OSError, ValueError) as exc:  # pyarrow's errors are ValueError/OSError subclasses
        log.warning("lake: compaction failed: %s", exc)


def _prune_lake(root: Path, as_of: datetime | None) -> None:
    days = float(_option("LAKE_RETENTION_DAYS", DEFAULT_LAKE_RETENTION_DAYS))
    if days <= 0:
        return
    try:
        removed = lake.lake_prune(Path(root), before=(as_of or dj_timezone.now()) - timedelta(days=days))
        if removed:
            log.info("lake: removed %s partitions older than %s days", removed, days)
    except OSError as exc:
        log.warning("lake: pruning failed: %s", exc)
