"""backlog_trend: slope over the lookback, growing/draining/steady, and time to drain."""

from __future__ import annotations

import pytest
from pyspark.testing import assertDataFrameEqual

from analytics.jobs import backlog_trend
from analytics.jobs.schema import TREND_SCHEMA
from tests.analytics.jobs._frames import at, group_samples

A, B = "broker-a", "broker-b"
NOW = at("14:10:00")


def samples_of(group: str, queue_id: int, points, broker: str = A, topic: str = "orders"):
    """``points``: (clock, committed_offset, max_offset)."""
    return [(clock, broker, group, topic, queue_id, committed, max_offset) for clock, committed, max_offset in points]


SAMPLES = [
    # billing: the module docstring's example; growing although it consumes (net -0.1333 msgs/s).
    *samples_of("billing", 0, [("14:00", 900, 1000), ("14:05", 1150, 1300), ("14:10", 1400, 1600)]),  # 100, 150, 200
    *samples_of("billing", 1, [("14:00", 1950, 2000), ("14:05", 2020, 2060), ("14:10", 2090, 2120)]),  # 50, 40, 30
    # cleaner: drained to 0 by now.
    *samples_of("cleaner", 0, [("14:00", 400, 1000), ("14:05", 700, 1000), ("14:10", 1000, 1000)]),  # 600, 300, 0
    # reports: draining at a net 1 msg/s from 300 left; on two brokers, whose clocks differ by 2 s.
    *samples_of("reports", 0, [("14:00", 100, 1000), ("14:05", 430, 1030), ("14:10", 760, 1060)]),  # 900, 600, 300
    *samples_of("reports", 0, [("13:59:58", 5, 5), ("14:04:58", 5, 5), ("14:09:58", 5, 5)], broker=B),
    # steady: wobbles around 10, consumes as fast as it is produced to; stale samples are ignored.
    *samples_of("steady", 0, [("13:59", 0, 99_999), ("14:00", 90, 100), ("14:05", 188, 200), ("14:10", 290, 300)]),
    *samples_of("steady", 0, [("14:10:10", 0, 99_999)]),  # after now
    # lonely: a single sample in the lookback.
    *samples_of("lonely", 0, [("14:07", 10, 15)]),
    # blip: 0 -> 4 in the last 20 s, 0.2/s: steep, but a batch in flight, not a trend.
    *samples_of("blip", 0, [("14:09:40", 100, 100), ("14:09:50", 100, 102), ("14:10", 100, 104)]),
    # idle: no backlog at all: nothing to drain.
    *samples_of("idle", 0, [("14:00", 50, 50), ("14:10", 50, 50)]),
]

EXPECTED = [
    ("billing", "orders", 230, 50 / 300 - 10 / 300, "growing", 500 / 600 + 140 / 600, 600 / 600 + 120 / 600, None),
    ("cleaner", "orders", 0, -1.0, "draining", 1.0, 0.0, 0.0),
    ("reports", "orders", 300, -1.0, "draining", 1.1, 0.1, 300.0),
    ("steady", "orders", 10, 0.0, "steady", 200 / 600, 200 / 600, None),
    ("lonely", "orders", 5, None, "steady", None, None, None),
    ("blip", "orders", 4, 0.2, "steady", 0.0, 0.2, None),
    ("idle", "orders", 0, 0.0, "steady", 0.0, 0.0, 0.0),
]


def test_trend_slope_and_time_to_drain(spark) -> None:
    result = backlog_trend(group_samples(spark, SAMPLES), now=NOW)
    assertDataFrameEqual(result, spark.createDataFrame(EXPECTED, TREND_SCHEMA))
    assert result.columns == TREND_SCHEMA.fieldNames()


@pytest.mark.parametrize(
    ("steady_epsilon", "trend"), [(0.1, "growing"), (0.2, "steady")], ids=["over-epsilon", "under-epsilon"]
)
def test_steady_epsilon_is_the_threshold(spark, steady_epsilon: float, trend: str) -> None:
    billing = [row for row in SAMPLES if row[2] == "billing"]
    result = backlog_trend(group_samples(spark, billing), now=NOW, steady_epsilon=steady_epsilon)
    assert [row.trend for row in result.collect()] == [trend]


def test_lookback_limits_the_samples(spark) -> None:
    # Over the last 5 minutes billing's queues move +50 and -10: the same slope, a shorter fit;
    # the rates come from the one interval left.
    billing = [row for row in SAMPLES if row[2] == "billing"]
    result = backlog_trend(group_samples(spark, billing), now=NOW, lookback_s=300)
    expected = [("billing", "orders", 230, 40 / 300, "growing", 320 / 300, 360 / 300, None)]
    assertDataFrameEqual(result, spark.createDataFrame(expected, TREND_SCHEMA))


def test_rejects_a_lookback_that_is_not_positive(spark) -> None:
    with pytest.raises(ValueError):
        backlog_trend(group_samples(spark, SAMPLES), now=NOW, lookback_s=0)


@pytest.mark.parametrize(("rise_per_5min", "trend"), [(600, "steady"), (1800, "growing")], ids=["2-per-s", "6-per-s"])
def test_a_busy_group_trends_only_past_a_fraction_of_its_produce_rate(spark, rise_per_5min: int, trend: str) -> None:
    # produced at 100 msgs/s: a backlog rising 2 msgs/s is within 5 % (steady), 6 msgs/s is not
    points = [
        ("14:00", 0, 1000),
        ("14:05", 30_000 - rise_per_5min, 31_000),
        ("14:10", 60_000 - 2 * rise_per_5min, 61_000),
    ]
    result = backlog_trend(group_samples(spark, samples_of("busy", 0, points)), now=NOW)
    assert [row.trend for row in result.collect()] == [trend]
