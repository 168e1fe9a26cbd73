"""The trend rule (analytics.jobs.trend_rule): a trend needs a real change; time to drain says
"nothing to drain" (0), gives an estimate for a shrinking backlog and none for a steady one."""

from __future__ import annotations

import pytest

from analytics.jobs.trend_rule import DRAINING, GROWING, STEADY, time_to_drain_s, trend_of


def _slope_and_change(values: list[float], step_s: float = 10.0) -> tuple[float, float]:
    """Least-squares slope of evenly spaced samples, and the change it adds up to over their span."""
    n = len(values)
    xs = [i * step_s for i in range(n)]
    mx, my = sum(xs) / n, sum(values) / n
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, values)) / sum((x - mx) ** 2 for x in xs)
    return slope, slope * (xs[-1] - xs[0])


@pytest.mark.parametrize(
    ("values", "produce_rate", "trend"),
    [
        ([0, 0, 1, 2, 4], 1.0, STEADY),  # a backlog of 4: a batch in flight, however steep (was "growing")
        ([0, 1, 0, 1, 0, 1], 1.0, STEADY),  # flickering between 0 and 1
        ([3, 3, 3, 3, 3, 3], 0.0, STEADY),  # flat
        ([10_000, 10_020, 10_040, 10_060, 10_080, 10_100], 1.0, STEADY),  # +100 on 10,000: 1 %, noise
        ([150, 170, 190, 210, 230], 1.2, GROWING),  # +80 on 230 (the job's worked example)
        ([0, 500, 1000, 1500, 2000], 50.0, GROWING),  # a real pile-up
        ([900, 750, 600, 450, 300], 0.1, DRAINING),
        ([40, 30, 20, 10, 0], 0.0, DRAINING),  # a small backlog that really went away
    ],
    ids=["4-in-flight", "flicker", "flat", "1pct-of-large", "worked-example", "pile-up", "draining", "small-drained"],
)
def test_a_trend_needs_a_real_change(values, produce_rate, trend) -> None:
    slope, change = _slope_and_change(values)
    assert trend_of(slope_per_s=slope, change=change, backlog=int(values[-1]), produce_rate=produce_rate) == trend


def test_a_busy_topic_raises_the_noise_threshold() -> None:
    # +2 msgs/s on a topic produced at 100 msgs/s is within 5 %; at 10 msgs/s it is a trend
    assert trend_of(slope_per_s=2.0, change=1200, backlog=5000, produce_rate=100.0) == STEADY
    assert trend_of(slope_per_s=2.0, change=1200, backlog=5000, produce_rate=10.0) == GROWING


def test_no_slope_is_steady() -> None:
    assert trend_of(slope_per_s=None, change=None, backlog=7, produce_rate=None) == STEADY


@pytest.mark.parametrize(
    ("backlog", "trend", "slope", "consume", "produce", "expected"),
    [
        (0, STEADY, 0.0, 5.0, 5.0, 0.0),  # healthy: nothing to drain (was shown as "never")
        (0, STEADY, None, None, None, 0.0),
        (300, DRAINING, -1.0, 1.1, 0.1, 300.0),  # consumes 1 msg/s faster than produced
        (300, DRAINING, -2.0, None, None, 150.0),  # rates unknown: the slope says when
        (10, STEADY, 0.0, 5.0, 5.0, None),  # steady: not draining
        (230, GROWING, 0.13, 1.0, 1.2, None),
    ],
    ids=["zero", "zero-no-rates", "net-drain", "slope-drain", "steady", "growing"],
)
def test_time_to_drain(backlog, trend, slope, consume, produce, expected) -> None:
    got = time_to_drain_s(backlog=backlog, trend=trend, slope_per_s=slope, consume_rate=consume, produce_rate=produce)
    assert got == (pytest.approx(expected) if expected is not None else None)
