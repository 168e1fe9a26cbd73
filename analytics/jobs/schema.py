"""The metrics lake's two datasets and the jobs' output columns, as Spark types.

The lake schemas are docs/analytics.md section 1, partition columns included: a reader that
passes them (``spark.read.schema(QUEUE_SAMPLES_SCHEMA).parquet(<lake>/queue_samples)``) gets
``date`` as a string and ``hour`` as an int whatever the partition type inference says. The jobs
select only the columns they need, so frames without ``date``/``hour`` (tests) work too.

The output schemas are section 2: the runner writes these columns to the console database in
this order.
"""

from __future__ import annotations

from pyspark.sql.types import (
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

QUEUE_SAMPLES_SCHEMA = StructType(
    [
        StructField("ts", TimestampType(), False),
        StructField("broker", StringType(), False),
        StructField("topic", StringType(), False),
        StructField("queue_id", IntegerType(), False),
        StructField("min_offset", LongType(), False),
        StructField("max_offset", LongType(), False),
        StructField("put_bytes", LongType(), True),
        StructField("date", StringType(), True),
        StructField("hour", IntegerType(), True),
    ]
)

GROUP_SAMPLES_SCHEMA = StructType(
    [
        StructField("ts", TimestampType(), False),
        StructField("broker", StringType(), False),
        StructField("group", StringType(), False),
        StructField("topic", StringType(), False),
        StructField("queue_id", IntegerType(), False),
        StructField("committed_offset", LongType(), False),
        StructField("max_offset", LongType(), False),
        StructField("date", StringType(), True),
        StructField("hour", IntegerType(), True),
    ]
)

PARTITION_COLUMNS = ("date", "hour")

QUEUE_KEY = ("broker", "topic", "queue_id")
GROUP_QUEUE_KEY = ("broker", "group", "topic", "queue_id")

DELTAS_SCHEMA = StructType(
    [
        StructField("broker", StringType(), True),
        StructField("topic", StringType(), True),
        StructField("queue_id", IntegerType(), True),
        StructField("ts", TimestampType(), True),
        StructField("dt_s", DoubleType(), True),
        StructField("messages", LongType(), True),
        StructField("bytes", LongType(), True),
    ]
)

THROUGHPUT_SCHEMA = StructType(
    [
        StructField("window_start", TimestampType(), True),
        StructField("resolution", StringType(), True),
        StructField("level", StringType(), True),
        StructField("broker", StringType(), True),
        StructField("topic", StringType(), True),
        StructField("queue_id", IntegerType(), True),
        StructField("messages", LongType(), True),
        StructField("msgs_per_s", DoubleType(), True),
        StructField("bytes_per_s", DoubleType(), True),
    ]
)

BACKLOG_SCHEMA = StructType(
    [
        StructField("window_start", TimestampType(), True),
        StructField("resolution", StringType(), True),
        StructField("level", StringType(), True),
        StructField("group", StringType(), True),
        StructField("topic", StringType(), True),
        StructField("broker", StringType(), True),
        StructField("queue_id", IntegerType(), True),
        StructField("backlog", LongType(), True),
        StructField("consume_rate", DoubleType(), True),
        StructField("produce_rate", DoubleType(), True),
    ]
)

TREND_SCHEMA = StructType(
    [
        StructField("group", StringType(), True),
        StructField("topic", StringType(), True),
        StructField("backlog", LongType(), True),
        StructField("slope_per_s", DoubleType(), True),
        StructField("trend", StringType(), True),
        StructField("consume_rate", DoubleType(), True),
        StructField("produce_rate", DoubleType(), True),
        StructField("time_to_drain_s", DoubleType(), True),
    ]
)

RANKING_SCHEMA = StructType(
    [
        StructField("rank", IntegerType(), True),
        StructField("name", StringType(), True),
        StructField("value", DoubleType(), True),
    ]
)

DELTAS_COLUMNS = tuple(DELTAS_SCHEMA.fieldNames())
THROUGHPUT_COLUMNS = tuple(THROUGHPUT_SCHEMA.fieldNames())
BACKLOG_COLUMNS = tuple(BACKLOG_SCHEMA.fieldNames())
TREND_COLUMNS = tuple(TREND_SCHEMA.fieldNames())
RANKING_COLUMNS = tuple(RANKING_SCHEMA.fieldNames())
