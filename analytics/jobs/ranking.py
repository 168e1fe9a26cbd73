"""The dashboards' top-n lists: busiest topics and most backlogged consumer groups.

Both return ``rank, name, value`` with ``rank`` 1..n and no two rows sharing a rank: equal values
are ordered by name, so the same input always gives the same list (a dashboard that reshuffles
tied rows on every refresh looks broken).
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from analytics.jobs.schema import RANKING_COLUMNS

# Ten rows fit the dashboard card without scrolling.
DEFAULT_TOP_N = 10


def rank_by_value(values: DataFrame, *, n: int) -> DataFrame:
    """Return the ``n`` rows of a ``name, value`` frame with the largest values, ranked.

    The frame is small (one row per topic or group), so a window over all of it is cheap.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, not {n!r}")
    order = Window.orderBy(F.col("value").desc_nulls_last(), F.col("name").asc())
    ranked = values.select(F.row_number().over(order).cast("int").alias("rank"), "name", "value")
    return ranked.where(F.col("rank") <= n).select(*RANKING_COLUMNS)


def top_topics(throughput_df: DataFrame, *, n: int = DEFAULT_TOP_N) -> DataFrame:
    """Rank topics by their mean ``msgs_per_s`` over the windows of a throughput frame.

    The mean is over every window present in the frame, so a topic idle in some of them ranks
    below one as busy all the time. Queue-level frames work too (the queues of a topic add up);
    rows without a topic (broker level) are ignored.

    Worked example, topic-level frame over windows 14:00 and 14:01::

        14:00 orders 30.0   14:01 orders 10.0   14:00 audit 25.0   (audit idle at 14:01)
        -> rank 1 orders 20.0, rank 2 audit 12.5
    """
    rows = throughput_df.where(F.col("topic").isNotNull())
    windows = rows.agg(F.count_distinct("window_start").alias("_windows"))
    per_topic = rows.groupBy("topic").agg(F.sum("msgs_per_s").alias("_sum"))
    values = per_topic.crossJoin(windows).select(
        F.col("topic").alias("name"),
        (F.col("_sum") / F.col("_windows")).cast("double").alias("value"),
    )
    return rank_by_value(values, n=n)


def top_groups(trend_df: DataFrame, *, n: int = DEFAULT_TOP_N) -> DataFrame:
    """Rank consumer groups by backlog, summed over the topics of a ``backlog_trend`` frame.

    A group's retry topic (``%RETRY%<group>``) counts towards it, as it is work the group owes.

    Worked example::

        billing orders 500   billing %RETRY%billing 20   audit orders 520
        -> rank 1 audit 520.0, rank 2 billing 520.0 (tie: by name), n=1 keeps only audit
    """
    values = trend_df.groupBy("group").agg(F.sum("backlog").cast("double").alias("value"))
    return rank_by_value(values.select(F.col("group").alias("name"), "value"), n=n)
