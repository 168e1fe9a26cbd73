"""Throughput per window: messages and bytes per second at queue, topic or broker level.

A queue's rate in a window is ``sum(messages) / sum(dt_s)`` over its deltas that *end* in the
window (see ``deltas.py``): a time-weighted mean, so a missed sample or a dropped reset interval
does not dilute it. A topic's or broker's rate is the sum of its queues' rates, so a window
where only some queues were sampled (the newest, still partial window; a broker that joined
late) is not dragged down by the others.

``bytes_per_s`` of a queue is computed over the intervals where both samples know
``put_bytes``; a topic's or broker's is the sum of its queues' only when every one of them knows
it, otherwise null (a topic spread over a Gantry broker and a RocketMQ one has no honest total).
"""

from __future__ import annotations

from datetime import datetime

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from analytics.jobs.deltas import queue_deltas
from analytics.jobs.schema import QUEUE_KEY, THROUGHPUT_COLUMNS
from analytics.jobs.windows import epoch_seconds, resolution_seconds, window_seconds, window_timestamp

THROUGHPUT_LEVELS = ("queue", "topic", "broker")


def throughput(
    queue_samples: DataFrame,
    *,
    resolution: str = "1m",
    level: str = "queue",
    emit_from: datetime | None = None,
) -> DataFrame:
    """Return the message and byte rates per tumbling window at one level.

    Columns: ``window_start, resolution, level, broker`` (null at topic level), ``topic`` (null at
    broker level), ``queue_id`` (null unless queue level), ``messages`` (bigint), ``msgs_per_s``,
    ``bytes_per_s`` (double; null when unknown). Windows starting before ``emit_from`` are not
    emitted: the runner reads one window more than it emits, so the first emitted window's
    first delta has the sample before it.

    Worked example at ``resolution="1m"``; queue 0 of ``orders`` is sampled every 10 s and gets
    60 msgs/s, queue 1 was sampled only at 14:00:30 and 14:00:50 with 40 messages in between::

        queue 0: deltas ending 14:00:10 .. 14:00:50, 5 x (10 s, 600)  -> 3000 / 50 s = 60.0
        queue 1: one delta ending 14:00:50, (20 s, 40)                 ->   40 / 20 s =  2.0
        level="topic": 14:00  orders  messages 3040  msgs_per_s 62.0  (not 3040 / 70 s)
    """
    seconds = resolution_seconds(resolution)
    if level not in THROUGHPUT_LEVELS:
        raise ValueError(f"level must be one of {THROUGHPUT_LEVELS}, not {level!r}")

    deltas = queue_deltas(queue_samples).withColumn("_window", window_seconds(F.col("ts"), seconds))
    if emit_from is not None:
        deltas = deltas.where(F.col("_window") >= F.lit(epoch_seconds(emit_from)))

    known_bytes_dt = F.when(F.col("bytes").isNotNull(), F.col("dt_s"))
    per_queue = deltas.groupBy("_window", *QUEUE_KEY).agg(
        F.sum("messages").alias("messages"),
        F.sum("dt_s").alias("_dt_s"),
        F.sum("bytes").alias("_bytes"),
        F.sum(known_bytes_dt).alias("_bytes_dt_s"),
    )
    per_queue = per_queue.select(
        "_window",
        *QUEUE_KEY,
        "messages",
        (F.col("messages") / F.col("_dt_s")).alias("msgs_per_s"),
        F.when(F.col("_bytes_dt_s") > 0, F.col("_bytes") / F.col("_bytes_dt_s")).alias("bytes_per_s"),
    )

    if level == "queue":
        rows = per_queue
    else:
        key = "topic" if level == "topic" else "broker"
        every_queue_knows_bytes = F.count("bytes_per_s") == F.count(F.lit(1))
        rows = per_queue.groupBy("_window", key).agg(
            F.sum("messages").alias("messages"),
            F.sum("msgs_per_s").alias("msgs_per_s"),
            F.when(every_queue_knows_bytes, F.sum("bytes_per_s")).alias("bytes_per_s"),
        )

    return rows.select(
        window_timestamp(F.col("_window")).alias("window_start"),
        F.lit(resolution).alias("resolution"),
        F.lit(level).alias("level"),
        (F.col("broker") if level != "topic" else F.lit(None).cast("string")).alias("broker"),
        (F.col("topic") if level != "broker" else F.lit(None).cast("string")).alias("topic"),
        (F.col("queue_id") if level == "queue" else F.lit(None).cast("int")).alias("queue_id"),
        F.col("messages").cast("bigint").alias("messages"),
        F.col("msgs_per_s").cast("double").alias("msgs_per_s"),
        F.col("bytes_per_s").cast("double").alias("bytes_per_s"),
    ).select(*THROUGHPUT_COLUMNS)
