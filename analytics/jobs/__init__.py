"""Pure PySpark jobs over the metrics lake (docs/analytics.md section 2).

Every job is ``DataFrame -> DataFrame`` with keyword-only config: no I/O, no Django, no clock
(``now`` and ``emit_from`` are passed in). The runner reads the lake, calls these and writes the
results; tests feed them tiny inline frames.
"""

from __future__ import annotations

from analytics.jobs.backlog import backlog
from analytics.jobs.deltas import queue_deltas
from analytics.jobs.ranking import top_groups, top_topics
from analytics.jobs.schema import (
    BACKLOG_COLUMNS,
    BACKLOG_SCHEMA,
    DELTAS_COLUMNS,
    GROUP_SAMPLES_SCHEMA,
    QUEUE_SAMPLES_SCHEMA,
    RANKING_COLUMNS,
    THROUGHPUT_COLUMNS,
    THROUGHPUT_SCHEMA,
    TREND_COLUMNS,
    TREND_SCHEMA,
)
from analytics.jobs.throughput import throughput
from analytics.jobs.trend import backlog_trend
from analytics.jobs.windows import RESOLUTIONS

__all__ = [
    "BACKLOG_COLUMNS",
    "BACKLOG_SCHEMA",
    "DELTAS_COLUMNS",
    "GROUP_SAMPLES_SCHEMA",
    "QUEUE_SAMPLES_SCHEMA",
    "RANKING_COLUMNS",
    "RESOLUTIONS",
    "THROUGHPUT_COLUMNS",
    "THROUGHPUT_SCHEMA",
    "TREND_COLUMNS",
    "TREND_SCHEMA",
    "backlog",
    "backlog_trend",
    "queue_deltas",
    "throughput",
    "top_groups",
    "top_topics",
]
