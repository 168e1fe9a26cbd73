"""Where each group's backlog is heading: growing, draining or steady, and when it will be empty.

Over the lookback ``[now - lookback_s, now]`` the job fits a least-squares line to the backlog of
every (broker, group, topic, queue) against time and adds the slopes up per (group, topic). When
the queues are sampled at the same instants (one sampler round asks a broker for all its queues
at once) the sum of the slopes *is* the slope of the total backlog, since a least-squares slope
is linear in the values; fitting queue by queue also keeps two brokers' clocks, which never
agree to the millisecond, from scattering the total into a saw-tooth.

Worked example, ``now = 14:10:00``, ``lookback_s = 600``, ``steady_epsilon = 0.1``, group
``billing`` on two queues of ``orders`` sampled at 14:00:00, 14:05:00 and 14:10:00::

    queue 0 backlog  100, 150, 200   slope  50/300 s = 0.1667/s
    queue 1 backlog   50,  40,  30   slope -10/300 s = -0.0333/s
    total            150, 190, 230   slope 0.1333/s > 0.1  -> "growing", backlog 230

The trend must be a real change (analytics.jobs.trend_rule states the rule): over the 10 minutes
the fit adds up to +80 messages (0.1333/s x 600 s), above the minimum change (20) and 10 % of the
backlog, so "growing" stands; a backlog of 0 -> 4 would be steady however steep.

``time_to_drain_s`` is 0 when the backlog is 0; ``backlog / (consume_rate - produce_rate)`` when the
group consumes faster than its topic is produced to; else ``backlog / -slope`` when the backlog
is draining; else null (not draining). The rates are the lookback's, computed as ``backlog`` does.
"""

from __future__ import annotations

from datetime import datetime

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from analytics.jobs.backlog import group_intervals, rate
from analytics.jobs.schema import GROUP_QUEUE_KEY, TREND_COLUMNS
from analytics.jobs.trend_rule import (
    DEFAULT_MIN_CHANGE,
    DEFAULT_MIN_RELATIVE_CHANGE,
    DEFAULT_STEADY_EPSILON,
    DEFAULT_STEADY_FRACTION,
    DRAINING,
    GROWING,
    STEADY,
)
from analytics.jobs.windows import epoch_seconds, seconds_since

# Ten minutes: 60 samples at the default 10 s interval, enough to see through a rebalance.
DEFAULT_LOOKBACK_S = 600


def backlog_trend(
    group_samples: DataFrame,
    *,
    now: datetime,
    lookback_s: int = DEFAULT_LOOKBACK_S,
    steady_epsilon: float = DEFAULT_STEADY_EPSILON,
    steady_fraction: float = DEFAULT_STEADY_FRACTION,
    min_change: float = DEFAULT_MIN_CHANGE,
    min_relative_change: float = DEFAULT_MIN_RELATIVE_CHANGE,
) -> DataFrame:
    """Return one row per (group, topic) seen in the lookback, with its backlog trend.

    Columns: ``group, topic, backlog`` (bigint, the sum of each queue's latest backlog),
    ``slope_per_s`` (double; null when no queue has two samples at different instants),
    ``trend`` (``growing`` / ``draining`` / ``steady`` by :func:`analytics.jobs.trend_rule.trend_of`:
    past the noise threshold and a real change), ``consume_rate``, ``produce_rate`` (double msgs/s over the lookback, null when no
    interval counted) and ``time_to_drain_s`` (double, see the module docstring).
    """
    if lookback_s <= 0:
        raise ValueError(f"lookback_s must be positive, not {lookback_s!r}")
    now_s = epoch_seconds(now)
    intervals = (
        group_intervals(group_samples.where(seconds_since(F.col("ts"), now_s).between(-lookback_s, 0)))
        .withColumn("_x", seconds_since(F.col("ts"), now_s))
        .withColumn("_y", F.col("backlog").cast("double"))
    )
    per_queue = intervals.groupBy(*GROUP_QUEUE_KEY).agg(
        F.max_by("backlog", "ts").alias("backlog"),
        F.covar_pop("_x", "_y").alias("_covar"),
        F.var_pop("_x").alias("_var"),
        (F.max("_x") - F.min("_x")).alias("_span"),
        F.sum("consumed").alias("_consumed"),
        F.sum("produced").alias("_produced"),
        F.sum("dt_s").alias("_dt_s"),
    )
    per_queue = per_queue.select(
        "group",
        "topic",
        "backlog",
        F.when(F.col("_var") > 0, F.col("_covar") / F.col("_var")).alias("slope_per_s"),
        F.when(F.col("_var") > 0, F.col("_covar") / F.col("_var") * F.col("_span")).alias("_change"),
        rate("_consumed", "_dt_s").alias("consume_rate"),
        rate("_produced", "_dt_s").alias("produce_rate"),
    )
    per_group = per_queue.groupBy("group", "topic").agg(
        F.sum("backlog").cast("bigint").alias("backlog"),
        F.sum("slope_per_s").alias("slope_per_s"),
        F.sum("_change").alias("_change"),
        F.sum("consume_rate").alias("consume_rate"),
        F.sum("produce_rate").alias("produce_rate"),
    )

    slope = F.col("slope_per_s")
    threshold = F.greatest(
        F.lit(float(steady_epsilon)), F.coalesce(F.col("produce_rate"), F.lit(0.0)) * float(steady_fraction)
    )
    change = F.col("_change")
    reference = F.greatest(F.col("backlog").cast("double"), F.col("backlog") - change)
    real = (F.abs(change) >= float(min_change)) & (F.abs(change) >= float(min_relative_change) * reference)
    net_drain = F.col("consume_rate") - F.col("produce_rate")
    with_trend = per_group.withColumn(
        "trend",
        F.when(real & (slope > threshold), GROWING).when(real & (slope < -threshold), DRAINING).otherwise(STEADY),
    )
    return with_trend.select(
        "group",
        "topic",
        "backlog",
        slope.cast("double").alias("slope_per_s"),
        "trend",
        F.col("consume_rate").cast("double").alias("consume_rate"),
        F.col("produce_rate").cast("double").alias("produce_rate"),
        F.when(F.col("backlog") == 0, F.lit(0.0))
        .when(net_drain > 0, F.col("backlog") / net_drain)
        .when((F.col("trend") == DRAINING) & (slope < 0), F.col("backlog") / -slope)
        .cast("double")
        .alias("time_to_drain_s"),
    ).select(*TREND_COLUMNS)
