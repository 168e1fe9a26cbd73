"""queue_deltas: consecutive pairs per queue; resets, repeats and first samples yield no row."""

from __future__ import annotations

from datetime import timedelta

from pyspark.testing import assertDataFrameEqual

from analytics.jobs import QUEUE_SAMPLES_SCHEMA, queue_deltas
from analytics.jobs.schema import DELTAS_SCHEMA
from tests.analytics.jobs._frames import at, queue_samples


def test_docstring_example(spark) -> None:
    samples = queue_samples(
        spark,
        [
            ("14:00:00", "broker-a", "orders", 0, 100, 1000),
            ("14:00:10", "broker-a", "orders", 0, 150, 6000),
            ("14:00:20", "broker-a", "orders", 0, 170, 200),  # broker restart: put_bytes back to ~0
            ("14:00:30", "broker-a", "orders", 0, 190, 2200),
            ("14:00:40", "broker-a", "orders", 0, 190, None),
            ("14:00:40", "broker-a", "orders", 0, 190, None),  # the same sample twice
        ],
    )
    expected = spark.createDataFrame(
        [
            ("broker-a", "orders", 0, at("14:00:10"), 10.0, 50, 5000),
            ("broker-a", "orders", 0, at("14:00:30"), 10.0, 20, 2000),
            ("broker-a", "orders", 0, at("14:00:40"), 10.0, 0, None),
        ],
        DELTAS_SCHEMA,
    )
    assertDataFrameEqual(queue_deltas(samples), expected)


def test_queues_are_paired_separately_and_max_offset_resets_are_dropped(spark) -> None:
    samples = queue_samples(
        spark,
        [
            ("14:00:00", "broker-a", "orders", 0, 500, None),
            ("14:00:00", "broker-b", "orders", 0, 7, None),  # same topic and queue id, other broker
            ("14:00:10", "broker-a", "orders", 0, 20, None),  # topic recreated: max_offset back
            ("14:00:15", "broker-b", "orders", 0, 9, None),
            ("14:00:20", "broker-a", "orders", 0, 40, None),
        ],
    )
    expected = spark.createDataFrame(
        [
            ("broker-a", "orders", 0, at("14:00:20"), 10.0, 20, None),
            ("broker-b", "orders", 0, at("14:00:15"), 15.0, 2, None),
        ],
        DELTAS_SCHEMA,
    )
    assertDataFrameEqual(queue_deltas(samples), expected)


def test_intervals_keep_the_brokers_millisecond_precision(spark) -> None:
    later = at("14:00:10") + timedelta(milliseconds=1, microseconds=500)
    samples = spark.createDataFrame(
        [
            (at("14:00:00"), "broker-a", "t", 0, 0, 0, None, "2026-11-22", 14),
            (later, "broker-a", "t", 0, 0, 3, None, "2026-11-22", 14),
        ],
        QUEUE_SAMPLES_SCHEMA,
    )
    assert [row.dt_s for row in queue_deltas(samples).collect()] == [10.0015]
