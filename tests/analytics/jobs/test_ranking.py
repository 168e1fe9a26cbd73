"""top_topics and top_groups: rank 1..n, ties broken by name, the same list every time."""

from __future__ import annotations

import pytest
from pyspark.testing import assertDataFrameEqual

from analytics.jobs import top_groups, top_topics
from analytics.jobs.schema import RANKING_SCHEMA, THROUGHPUT_SCHEMA, TREND_SCHEMA
from tests.analytics.jobs._frames import at


def topic_rates(spark, rows, level: str = "topic"):
    """Rows ``(clock, topic, queue_id, msgs_per_s)`` as a 1m throughput frame."""
    return spark.createDataFrame(
        [(at(clock), "1m", level, None, topic, queue_id, 0, rate, None) for clock, topic, queue_id, rate in rows],
        THROUGHPUT_SCHEMA,
    )


TOPIC_ROWS = [
    ("14:00", "orders", None, 30.0),
    ("14:01", "orders", None, 10.0),
    ("14:00", "audit", None, 25.0),  # idle at 14:01: mean 12.5, not 25
    ("14:00", "zeta", None, 15.0),
    ("14:01", "zeta", None, 5.0),
    ("14:01", "alpha", None, 20.0),  # ties with zeta at 10.0: alpha first
]


def ranking(spark, rows):
    return spark.createDataFrame(rows, RANKING_SCHEMA)


def test_top_topics_ranks_by_mean_rate_over_the_windows(spark) -> None:
    result = top_topics(topic_rates(spark, TOPIC_ROWS))
    expected = [(1, "orders", 20.0), (2, "audit", 12.5), (3, "alpha", 10.0), (4, "zeta", 10.0)]
    assertDataFrameEqual(result, ranking(spark, expected))
    assert result.columns == ["rank", "name", "value"]


@pytest.mark.parametrize("order", [TOPIC_ROWS, TOPIC_ROWS[::-1]], ids=["as-given", "reversed"])
def test_top_n_cuts_ties_the_same_way_whatever_the_input_order(spark, order) -> None:
    result = top_topics(topic_rates(spark, order).repartition(3), n=3)
    assertDataFrameEqual(result, ranking(spark, [(1, "orders", 20.0), (2, "audit", 12.5), (3, "alpha", 10.0)]))


def test_top_topics_adds_up_a_queue_level_frame(spark) -> None:
    rows = [("14:00", "orders", 0, 3.0), ("14:00", "orders", 1, 4.0), ("14:00", "audit", 0, 5.0)]
    result = top_topics(topic_rates(spark, rows, level="queue"))
    assertDataFrameEqual(result, ranking(spark, [(1, "orders", 7.0), (2, "audit", 5.0)]))


def test_top_groups_sums_a_groups_topics_and_breaks_ties_by_name(spark) -> None:
    trends = spark.createDataFrame(
        [
            ("billing", "orders", 500, 0.0, "steady", 1.0, 1.0, None),
            ("billing", "%RETRY%billing", 20, 0.0, "steady", 0.0, 0.0, None),
            ("audit", "orders", 520, 0.0, "steady", 1.0, 1.0, None),
            ("idle", "orders", 0, 0.0, "steady", 1.0, 1.0, 0.0),
        ],
        TREND_SCHEMA,
    )
    expected = [(1, "audit", 520.0), (2, "billing", 520.0), (3, "idle", 0.0)]
    assertDataFrameEqual(top_groups(trends), ranking(spark, expected))
    assertDataFrameEqual(top_groups(trends, n=1), ranking(spark, expected[:1]))


def test_rejects_n_below_one(spark) -> None:
    with pytest.raises(ValueError):
        top_topics(topic_rates(spark, TOPIC_ROWS), n=0)
