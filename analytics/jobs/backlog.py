"""Consumer group backlog per window, at queue or group level, with consume and produce rates.

A queue's backlog (its lag) at an instant is ``max_offset - committed_offset`` of one group
sample, floored at 0 (a committed offset past the end is what a recreated topic leaves behind;
it means "nothing to consume", not a negative lag). A window reports the backlog of its *last*
sample, so the value is the state at the end of the window, like a gauge.

The rates come from consecutive samples of the same (broker, group, topic, queue), as throughput
does: ``consume_rate`` from committed-offset deltas, ``produce_rate`` from max-offset deltas, each
``sum(delta) / sum(dt_s)`` over the intervals ending in the window. An interval where either
counter went backwards (an offset reset, a recreated topic) or ``dt_s <= 0`` is dropped for
both rates, so they are always measured over the same time.
"""

from __future__ import annotations

from datetime import datetime

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from analytics.jobs.deltas import interval_seconds
from analytics.jobs.schema import BACKLOG_COLUMNS, GROUP_QUEUE_KEY
from analytics.jobs.windows import epoch_seconds, resolution_seconds, window_seconds, window_timestamp

BACKLOG_LEVELS = ("queue", "group")


def sample_backlog() -> Column:
    """Return one group sample's backlog: ``max_offset - committed_offset``, at least 0."""
    return F.greatest(F.col("max_offset") - F.col("committed_offset"), F.lit(0).cast("bigint"))


def group_intervals(group_samples: DataFrame) -> DataFrame:
    """Return every group sample with its backlog and the interval since the previous sample.

    Columns: the queue key ``broker, group, topic, queue_id``, ``ts``, ``backlog`` and, for
    intervals that count (see the module docstring; null otherwise), ``dt_s``, ``consumed`` and
    ``produced``. Unlike ``queue_deltas`` every sample stays: the first one still has a backlog.
    """
    by_queue = Window.partitionBy(*GROUP_QUEUE_KEY).orderBy("ts")
    pairs = group_samples.select(
        *GROUP_QUEUE_KEY,
        "ts",
        sample_backlog().alias("backlog"),
        interval_seconds(F.col("ts"), F.lag("ts").over(by_queue)).alias("dt_s"),
        (F.col("committed_offset") - F.lag("committed_offset").over(by_queue)).alias("consumed"),
        (F.col("max_offset") - F.lag("max_offset").over(by_queue)).alias("produced"),
    )
    counts = (F.col("dt_s") > 0) & (F.col("consumed") >= 0) & (F.col("produced") >= 0)
    return pairs.select(
        *GROUP_QUEUE_KEY,
        "ts",
        "backlog",
        F.when(counts, F.col("dt_s")).alias("dt_s"),
        F.when(counts, F.col("consumed")).alias("consumed"),
        F.when(counts, F.col("produced")).alias("produced"),
    )


def rate(amount: str, seconds: str) -> Column:
    """Return ``amount / seconds``, null when no interval counted."""
    return F.when(F.col(seconds) > 0, F.col(amount) / F.col(seconds))


def backlog(
    group_samples: DataFrame,
    *,
    resolution: str = "1m",
    level: str = "queue",
    emit_from: datetime | None = None,
) -> DataFrame:
    """Return backlog, consume rate and produce rate per tumbling window at one level.

    Columns: ``window_start, resolution, level, group, topic, broker`` (null at group level),
    ``queue_id`` (null at group level), ``backlog`` (bigint), ``consume_rate``, ``produce_rate``
    (double msgs/s; null for a window with no interval that counts, such as a queue's first).
    At group level one row per (window, group, topic): backlogs and rates summed over the
    group's queues on every broker. Windows starting before ``emit_from`` are not emitted.

    Worked example at ``resolution="1m"``, group ``billing`` on queue 0 of ``orders``::

        ts        committed  max   backlog
        14:00:50     100     100      0     (window 14:00: backlog 0, rates null)
        14:01:00     100     160     60
        14:01:10     130     220     90     (window 14:01: backlog 90 at its last sample,
                                             consume 30 / 20 s = 1.5, produce 120 / 20 s = 6.0)
    """
    seconds = resolution_seconds(resolution)
    if level not in BACKLOG_LEVELS:
        raise ValueError(f"level must be one of {BACKLOG_LEVELS}, not {level!r}")

    intervals = group_intervals(group_samples).withColumn("_window", window_seconds(F.col("ts"), seconds))
    if emit_from is not None:
        intervals = intervals.where(F.col("_window") >= F.lit(epoch_seconds(emit_from)))

    per_queue = intervals.groupBy("_window", *GROUP_QUEUE_KEY).agg(
        F.max_by("backlog", "ts").alias("backlog"),
        F.sum("consumed").alias("_consumed"),
        F.sum("produced").alias("_produced"),
        F.sum("dt_s").alias("_dt_s"),
    )
    per_queue = per_queue.select(
        "_window",
        *GROUP_QUEUE_KEY,
        "backlog",
        rate("_consumed", "_dt_s").alias("consume_rate"),
        rate("_produced", "_dt_s").alias("produce_rate"),
    )

    if level == "queue":
        rows = per_queue
    else:
        rows = per_queue.groupBy("_window", "group", "topic").agg(
            F.sum("backlog").alias("backlog"),
            F.sum("consume_rate").alias("consume_rate"),
            F.sum("produce_rate").alias("produce_rate"),
        )

    queue_level = level == "queue"
    return rows.select(
        window_timestamp(F.col("_window")).alias("window_start"),
        F.lit(resolution).alias("resolution"),
        F.lit(level).alias("level"),
        "group",
        "topic",
        (F.col("broker") if queue_level else F.lit(None).cast("string")).alias("broker"),
        (F.col("queue_id") if queue_level else F.lit(None).cast("int")).alias("queue_id"),
        F.col("backlog").cast("bigint").alias("backlog"),
        F.col("consume_rate").cast("double").alias("consume_rate"),
        F.col("produce_rate").cast("double").alias("produce_rate"),
    ).select(*BACKLOG_COLUMNS)
