"""Tumbling windows aligned to the epoch, and the instants the jobs take as keyword config.

A window is named by its start in whole epoch seconds: ``ts`` floored to the resolution. The jobs
compute it from ``unix_seconds(ts)`` with integer arithmetic, so the result does not depend on the
session time zone and a sample at ``14:03:59.999`` belongs to the ``14:03`` minute.

Instants passed in by callers (``emit_from``, ``now``) are ``datetime`` objects; a naive one is
taken as UTC (the lake and the jobs are UTC throughout), never as the machine's local time.

>>> resolution_seconds("1h")
3600
>>> from datetime import datetime, timezone
>>> epoch_seconds(datetime(2026, 11, 22, 14, 3, tzinfo=timezone.utc))
1795356180.0
>>> epoch_seconds(datetime(2026, 11, 22, 14, 3))  # naive: UTC
1795356180.0
"""

from __future__ import annotations

from datetime import datetime, timezone

from pyspark.sql import Column
from pyspark.sql import functions as F

# The two resolutions the dashboards read: minutes for the last hour, hours for a day or a week.
RESOLUTIONS: dict[str, int] = {"1m": 60, "1h": 3600}


def resolution_seconds(resolution: str) -> int:
    """Return the width in seconds of a resolution name; reject names not in RESOLUTIONS."""
    try:
        return RESOLUTIONS[resolution]
    except KeyError:
        raise ValueError(f"resolution must be one of {sorted(RESOLUTIONS)}, not {resolution!r}") from None


def window_seconds(ts: Column, seconds: int) -> Column:
    """Return the start, in epoch seconds (bigint), of the ``seconds``-wide window holding ``ts``."""
    epoch = F.unix_seconds(ts)
    return epoch - F.pmod(epoch, F.lit(seconds))


def window_timestamp(start_seconds: Column) -> Column:
    """Turn a window start in epoch seconds back into a timestamp."""
    return F.timestamp_seconds(start_seconds)


def epoch_seconds(instant: datetime) -> float:
    """Return ``instant`` as epoch seconds, reading a naive datetime as UTC."""
    if instant.tzinfo is None:
        instant = instant.replace(tzinfo=timezone.utc)
    return instant.timestamp()


def seconds_since(ts: Column, instant_s: float) -> Column:
    """Return ``ts - instant`` in seconds (double), exact to the microsecond.

    Fits and filters work on these small offsets rather than on epoch seconds (about 1.8e9,
    whose squares lose precision in a double).
    """
    return (F.unix_micros(ts) - F.lit(round(instant_s * 1_000_000))) / F.lit(1_000_000.0)
