"""throughput: rates per window at queue, topic and broker level, at 1m and 1h."""

from __future__ import annotations

from datetime import datetime

import pytest
from pyspark.testing import assertDataFrameEqual

from analytics.jobs import throughput
from analytics.jobs.schema import THROUGHPUT_SCHEMA
from tests.analytics.jobs._frames import at, queue_samples

A, B = "broker-a", "broker-b"

# broker-a orders 0: 60 msgs/s and 6,000 B/s until 14:00:40, then slower.
# broker-a orders 1: sampled twice only (joined late), 10 msgs/s.
# broker-b audit 0: a broker that does not report put_bytes.
SAMPLES = [
    ("14:00:00", A, "orders", 0, 0, 0),
    ("14:00:20", A, "orders", 0, 1200, 120_000),
    ("14:00:40", A, "orders", 0, 2400, 240_000),
    ("14:01:00", A, "orders", 0, 3000, 300_000),
    ("14:01:30", A, "orders", 0, 3300, 330_000),
    ("14:00:10", A, "orders", 1, 0, 0),
    ("14:00:50", A, "orders", 1, 400, 4000),
    ("14:00:00", B, "audit", 0, 0, None),
    ("14:00:30", B, "audit", 0, 300, None),
]

EXPECTED = {
    ("1m", "queue"): [
        ("14:00", A, "orders", 0, 2400, 60.0, 6000.0),
        ("14:01", A, "orders", 0, 900, 18.0, 1800.0),  # 900 messages over 20 s + 30 s
        ("14:00", A, "orders", 1, 400, 10.0, 100.0),
        ("14:00", B, "audit", 0, 300, 10.0, None),
    ],
    ("1m", "topic"): [
        ("14:00", None, "orders", None, 2800, 70.0, 6100.0),  # 60 + 10: not 2800 / 80 s
        ("14:01", None, "orders", None, 900, 18.0, 1800.0),
        ("14:00", None, "audit", None, 300, 10.0, None),
    ],
    ("1m", "broker"): [
        ("14:00", A, None, None, 2800, 70.0, 6100.0),
        ("14:01", A, None, None, 900, 18.0, 1800.0),
        ("14:00", B, None, None, 300, 10.0, None),
    ],
    ("1h", "queue"): [
        ("14:00", A, "orders", 0, 3300, 3300 / 90, 330_000 / 90),
        ("14:00", A, "orders", 1, 400, 10.0, 100.0),
        ("14:00", B, "audit", 0, 300, 10.0, None),
    ],
    ("1h", "topic"): [
        ("14:00", None, "orders", None, 3700, 3300 / 90 + 10.0, 330_000 / 90 + 100.0),
        ("14:00", None, "audit", None, 300, 10.0, None),
    ],
    ("1h", "broker"): [
        ("14:00", A, None, None, 3700, 3300 / 90 + 10.0, 330_000 / 90 + 100.0),
        ("14:00", B, None, None, 300, 10.0, None),
    ],
}


def expected_frame(spark, resolution: str, level: str, rows):
    return spark.createDataFrame(
        [(at(start), resolution, level, *rest) for start, *rest in rows],
        THROUGHPUT_SCHEMA,
    )


@pytest.mark.parametrize(("resolution", "level"), list(EXPECTED))
def test_rates_per_resolution_and_level(spark, resolution: str, level: str) -> None:
    result = throughput(queue_samples(spark, SAMPLES), resolution=resolution, level=level)
    assertDataFrameEqual(result, expected_frame(spark, resolution, level, EXPECTED[resolution, level]))
    assert result.columns == THROUGHPUT_SCHEMA.fieldNames()


def test_partial_window_is_not_diluted_docstring_example(spark) -> None:
    queue_0 = [(f"14:00:{s:02d}", A, "orders", 0, 60 * s, None) for s in range(0, 60, 10)]
    queue_1 = [("14:00:30", A, "orders", 1, 0, None), ("14:00:50", A, "orders", 1, 40, None)]
    result = throughput(queue_samples(spark, queue_0 + queue_1), resolution="1m", level="topic")
    assertDataFrameEqual(
        result, expected_frame(spark, "1m", "topic", [("14:00", None, "orders", None, 3040, 62.0, None)])
    )


def test_a_delta_belongs_to_the_window_where_it_ends(spark) -> None:
    samples = [("13:59:50", A, "t", 0, 0, 0), ("14:00:10", A, "t", 0, 200, 400), ("14:59:59", A, "t", 0, 200, 400)]
    result = throughput(queue_samples(spark, samples), resolution="1h", level="queue")
    # 13:59:50 -> 14:00:10 (20 s, 200) and 14:00:10 -> 14:59:59 (3589 s, 0), both end in 14:00.
    assertDataFrameEqual(
        result, expected_frame(spark, "1h", "queue", [("14:00", A, "t", 0, 200, 200 / 3609, 400 / 3609)])
    )


def test_counter_resets_are_dropped_not_counted_negative(spark) -> None:
    samples = [
        ("14:00:00", A, "orders", 0, 1000, 5000),
        ("14:00:10", A, "orders", 0, 1100, 6000),
        ("14:00:20", A, "orders", 0, 1200, 100),  # broker restarted: put_bytes reset
        ("14:00:30", A, "orders", 0, 1300, 1100),
        ("14:00:00", A, "orders", 1, 500, None),
        ("14:00:10", A, "orders", 1, 20, None),  # topic deleted and recreated
        ("14:00:20", A, "orders", 1, 40, None),
    ]
    result = throughput(queue_samples(spark, samples), resolution="1m", level="queue")
    expected = [
        ("14:00", A, "orders", 0, 200, 10.0, 100.0),  # two 10 s intervals of 100 messages, 1000 B
        ("14:00", A, "orders", 1, 20, 2.0, None),
    ]
    assertDataFrameEqual(result, expected_frame(spark, "1m", "queue", expected))


def test_null_put_bytes(spark) -> None:
    samples = [
        ("14:00:00", A, "orders", 0, 0, 0),
        ("14:00:10", A, "orders", 0, 100, 1000),
        ("14:00:20", A, "orders", 0, 200, None),  # unknown for this round
        ("14:00:30", A, "orders", 0, 300, None),
        ("14:00:40", A, "orders", 0, 400, 4000),
        ("14:00:00", B, "orders", 0, 0, None),  # never known on broker-b
        ("14:00:40", B, "orders", 0, 40, None),
    ]
    frame = queue_samples(spark, samples)
    by_queue = [
        ("14:00", A, "orders", 0, 400, 10.0, 100.0),  # bytes over the one interval that knows them
        ("14:00", B, "orders", 0, 40, 1.0, None),
    ]
    assertDataFrameEqual(
        throughput(frame, resolution="1m", level="queue"), expected_frame(spark, "1m", "queue", by_queue)
    )
    by_topic = [("14:00", None, "orders", None, 440, 11.0, None)]  # one queue unknown: no total
    assertDataFrameEqual(
        throughput(frame, resolution="1m", level="topic"), expected_frame(spark, "1m", "topic", by_topic)
    )
    by_broker = [("14:00", A, None, None, 400, 10.0, 100.0), ("14:00", B, None, None, 40, 1.0, None)]
    assertDataFrameEqual(
        throughput(frame, resolution="1m", level="broker"), expected_frame(spark, "1m", "broker", by_broker)
    )


EMIT_SAMPLES = [
    (clock, A, "t", 0, offset, None)
    for clock, offset in [("14:00:00", 0), ("14:00:30", 30), ("14:01:00", 90), ("14:01:30", 150), ("14:02:00", 240)]
]


@pytest.mark.parametrize(
    ("emit_from", "expected"),
    [
        # The 14:01 window still gets its first delta (14:00:30 -> 14:01:00) from the earlier sample.
        (at("14:01"), [("14:01", A, "t", 0, 120, 2.0, None), ("14:02", A, "t", 0, 90, 3.0, None)]),
        (datetime(2026, 11, 22, 14, 1), [("14:01", A, "t", 0, 120, 2.0, None), ("14:02", A, "t", 0, 90, 3.0, None)]),
        (at("14:01:30"), [("14:02", A, "t", 0, 90, 3.0, None)]),  # 14:01 starts before it
        (at("14:03"), []),
        (
            None,
            [
                ("14:00", A, "t", 0, 30, 1.0, None),
                ("14:01", A, "t", 0, 120, 2.0, None),
                ("14:02", A, "t", 0, 90, 3.0, None),
            ],
        ),
    ],
    ids=["aligned", "naive-is-utc", "unaligned", "after-the-data", "none"],
)
def test_emit_from_trims_earlier_windows(spark, emit_from, expected) -> None:
    result = throughput(queue_samples(spark, EMIT_SAMPLES), resolution="1m", level="queue", emit_from=emit_from)
    assertDataFrameEqual(result, expected_frame(spark, "1m", "queue", expected))


@pytest.mark.parametrize(("resolution", "level"), [("5m", "queue"), ("1m", "group")])
def test_rejects_unknown_resolution_or_level(spark, resolution: str, level: str) -> None:
    with pytest.raises(ValueError):
        throughput(queue_samples(spark, EMIT_SAMPLES), resolution=resolution, level=level)
