"""Per-queue deltas: what happened to a queue between two consecutive samples.

A broker's counters only tell totals (``max_offset``: messages ever written; ``put_bytes``: bytes
put since the broker started). Rates come from the differences between consecutive samples of
the same queue, ordered by ``ts`` (a window ``lag`` over ``broker, topic, queue_id``; no UDF).

Resets are dropped, not counted: ``put_bytes`` restarts at 0 with its broker, ``max_offset`` goes
backwards when a topic is deleted and recreated. A pair with a negative delta in either counter,
or with ``dt_s <= 0`` (a repeated sample), yields no row; the queue's rate in that window then
comes from its other intervals.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from analytics.jobs.schema import DELTAS_COLUMNS, QUEUE_KEY


def interval_seconds(ts: Column, previous_ts: Column) -> Column:
    """Return the seconds (double, microsecond-exact) between two timestamps."""
    return (F.unix_micros(ts) - F.unix_micros(previous_ts)) / F.lit(1_000_000.0)


def queue_deltas(queue_samples: DataFrame) -> DataFrame:
    """Return one row per consecutive pair of samples of a queue, resets and repeats dropped.

    Columns: ``broker, topic, queue_id, ts`` (the later sample), ``dt_s`` (double), ``messages``
    (bigint, the ``max_offset`` delta) and ``bytes`` (bigint, the ``put_bytes`` delta; null when
    either sample's ``put_bytes`` is null).

    Worked example, samples of queue 0 of ``orders`` on ``broker-a``::

        ts        max_offset  put_bytes
        14:00:00      100        1000     first sample: no row
        14:00:10      150        6000     -> dt_s 10.0, messages 50, bytes 5000
        14:00:20      170         200     put_bytes went back (broker restart): dropped
        14:00:30      190        2200     -> dt_s 10.0, messages 20, bytes 2000
        14:00:40      190        null     -> dt_s 10.0, messages 0,  bytes null
        14:00:40      190        null     same ts again (dt_s 0): dropped
    """
    by_queue = Window.partitionBy(*QUEUE_KEY).orderBy("ts")
    pairs = queue_samples.select(
        *QUEUE_KEY,
        "ts",
        interval_seconds(F.col("ts"), F.lag("ts").over(by_queue)).alias("dt_s"),
        (F.col("max_offset") - F.lag("max_offset").over(by_queue)).alias("messages"),
        (F.col("put_bytes") - F.lag("put_bytes").over(by_queue)).alias("bytes"),
    )
    kept = pairs.where(
        (F.col("dt_s") > 0)  # null for a queue's first sample, so that row goes too
        & (F.col("messages") >= 0)
        & (F.col("bytes").isNull() | (F.col("bytes") >= 0))
    )
    return kept.select(*DELTAS_COLUMNS)
