"""backlog: the lag at the end of each window and the consume/produce rates, per queue or group."""

from __future__ import annotations

import pytest
from pyspark.testing import assertDataFrameEqual

from analytics.jobs import backlog
from analytics.jobs.schema import BACKLOG_SCHEMA
from tests.analytics.jobs._frames import at, group_samples

A, B = "broker-a", "broker-b"

# (clock, broker, group, topic, queue_id, committed_offset, max_offset)
SAMPLES = [
    ("14:00:50", A, "billing", "orders", 0, 100, 100),
    ("14:01:00", A, "billing", "orders", 0, 100, 160),
    ("14:01:10", A, "billing", "orders", 0, 130, 220),
    ("14:00:40", B, "billing", "orders", 0, 0, 50),
    ("14:01:00", B, "billing", "orders", 0, 40, 90),
    ("14:01:20", B, "billing", "orders", 0, 100, 100),
]

EXPECTED = {
    ("1m", "queue"): [
        ("14:00", "billing", "orders", A, 0, 0, None, None),  # a queue's first sample: no rates yet
        ("14:01", "billing", "orders", A, 0, 90, 1.5, 6.0),  # the docstring example
        ("14:00", "billing", "orders", B, 0, 50, None, None),
        ("14:01", "billing", "orders", B, 0, 0, 2.5, 1.25),  # backlog of the window's last sample
    ],
    ("1m", "group"): [
        ("14:00", "billing", "orders", None, None, 50, None, None),
        ("14:01", "billing", "orders", None, None, 90, 4.0, 7.25),
    ],
    ("1h", "queue"): [
        ("14:00", "billing", "orders", A, 0, 90, 1.5, 6.0),
        ("14:00", "billing", "orders", B, 0, 0, 2.5, 1.25),
    ],
    ("1h", "group"): [
        ("14:00", "billing", "orders", None, None, 90, 4.0, 7.25),
    ],
}


def expected_frame(spark, resolution: str, level: str, rows):
    return spark.createDataFrame([(at(start), resolution, level, *rest) for start, *rest in rows], BACKLOG_SCHEMA)


@pytest.mark.parametrize(("resolution", "level"), list(EXPECTED))
def test_backlog_per_resolution_and_level(spark, resolution: str, level: str) -> None:
    result = backlog(group_samples(spark, SAMPLES), resolution=resolution, level=level)
    assertDataFrameEqual(result, expected_frame(spark, resolution, level, EXPECTED[resolution, level]))
    assert result.columns == BACKLOG_SCHEMA.fieldNames()


def test_groups_and_topics_stay_apart_at_group_level(spark) -> None:
    samples = [
        ("14:00:00", A, "billing", "orders", 0, 0, 10),
        ("14:00:00", A, "billing", "%RETRY%billing", 0, 0, 3),
        ("14:00:00", A, "audit", "orders", 0, 10, 10),
    ]
    result = backlog(group_samples(spark, samples), resolution="1m", level="group")
    expected = [
        ("14:00", "billing", "orders", None, None, 10, None, None),
        ("14:00", "billing", "%RETRY%billing", None, None, 3, None, None),
        ("14:00", "audit", "orders", None, None, 0, None, None),
    ]
    assertDataFrameEqual(result, expected_frame(spark, "1m", "group", expected))


def test_offset_resets_are_dropped_and_backlog_is_never_negative(spark) -> None:
    samples = [
        ("14:00:00", A, "billing", "orders", 0, 100, 200),
        ("14:00:10", A, "billing", "orders", 0, 50, 210),  # offset reset backwards: interval dropped
        ("14:00:20", A, "billing", "orders", 0, 60, 220),
        ("14:00:00", A, "billing", "orders", 1, 500, 500),
        ("14:00:10", A, "billing", "orders", 1, 500, 10),  # topic recreated: committed past the end
    ]
    result = backlog(group_samples(spark, samples), resolution="1m", level="queue")
    expected = [
        ("14:00", "billing", "orders", A, 0, 160, 1.0, 1.0),  # only 14:00:10 -> 14:00:20 counts
        ("14:00", "billing", "orders", A, 1, 0, None, None),
    ]
    assertDataFrameEqual(result, expected_frame(spark, "1m", "queue", expected))


def test_emit_from_trims_earlier_windows_but_keeps_their_samples_for_rates(spark) -> None:
    result = backlog(group_samples(spark, SAMPLES), resolution="1m", level="queue", emit_from=at("14:01"))
    assertDataFrameEqual(result, expected_frame(spark, "1m", "queue", EXPECTED["1m", "queue"][1::2]))


@pytest.mark.parametrize(("resolution", "level"), [("1d", "queue"), ("1m", "topic")])
def test_rejects_unknown_resolution_or_level(spark, resolution: str, level: str) -> None:
    with pytest.raises(ValueError):
        backlog(group_samples(spark, SAMPLES), resolution=resolution, level=level)
