"""When a backlog is growing or draining, and how long it takes to drain: the rule, in plain Python.

:func:`analytics.jobs.trend.backlog_trend` applies this same rule as Spark column expressions
(built from these constants); this module states it once, readable and testable without a JVM.

A trend needs a *real* change over the samples in the lookback, three tests at once:

- the slope beats the noise threshold: ``|slope| > max(steady_epsilon, steady_fraction x produce_rate)``
  (a busy group's backlog wobbles by a few batches between samples);
- the change it adds up to over the samples' span (``slope x span``, per queue, summed) is at
  least ``min_change`` messages: a backlog of 0 -> 4 is a batch in flight, not a trend;
- and at least ``min_relative_change`` of the larger of the backlog at the start and at the end:
  10,000 -> 10,100 is noise on a big backlog.

Time to drain: 0 with no backlog ("nothing to drain"); with the group consuming faster than its
topic is produced to, ``backlog / (consume_rate - produce_rate)``; else, when the backlog is
draining, ``backlog / -slope``; else none ("not draining").
"""

from __future__ import annotations

DEFAULT_STEADY_EPSILON = 0.1  # msgs/s: changes slower than 6 messages a minute are noise
DEFAULT_STEADY_FRACTION = 0.05  # ... and so are changes under 5 % of the topic's produce rate
DEFAULT_MIN_CHANGE = 20  # messages over the samples' span: a few batches in flight are no trend
DEFAULT_MIN_RELATIVE_CHANGE = 0.1  # of the larger of the start and end backlog

GROWING, DRAINING, STEADY = "growing", "draining", "steady"


def trend_of(
    *,
    slope_per_s: float | None,
    change: float | None,
    backlog: int,
    produce_rate: float | None,
    steady_epsilon: float = DEFAULT_STEADY_EPSILON,
    steady_fraction: float = DEFAULT_STEADY_FRACTION,
    min_change: float = DEFAULT_MIN_CHANGE,
    min_relative_change: float = DEFAULT_MIN_RELATIVE_CHANGE,
) -> str:
    """``growing``, ``draining`` or ``steady``; ``change`` is the fitted change over the samples' span.

    >>> trend_of(slope_per_s=0.2, change=4, backlog=4, produce_rate=1.0)
    'steady'
    >>> trend_of(slope_per_s=0.1333, change=80, backlog=230, produce_rate=1.2)
    'growing'
    """
    if slope_per_s is None or change is None:
        return STEADY
    threshold = max(steady_epsilon, steady_fraction * (produce_rate or 0.0))
    reference = max(backlog, backlog - change)
    real = abs(change) >= min_change and abs(change) >= min_relative_change * reference
    if real and slope_per_s > threshold:
        return GROWING
    if real and slope_per_s < -threshold:
        return DRAINING
    return STEADY


def time_to_drain_s(
    *, backlog: int, trend: str, slope_per_s: float | None, consume_rate: float | None, produce_rate: float | None
) -> float | None:
    """Seconds until the backlog is gone at the current pace; 0 when there is none; None when it is not draining.

    >>> time_to_drain_s(backlog=0, trend="steady", slope_per_s=0.0, consume_rate=5.0, produce_rate=5.0)
    0.0
    >>> time_to_drain_s(backlog=10, trend="steady", slope_per_s=0.0, consume_rate=5.0, produce_rate=5.0) is None
    True
    """
    if backlog == 0:
        return 0.0
    if consume_rate is not None and produce_rate is not None and consume_rate - produce_rate > 0:
        return backlog / (consume_rate - produce_rate)
    if trend == DRAINING and slope_per_s is not None and slope_per_s < 0:
        return backlog / -slope_per_s
    return None
