"""The tables under the drill-down charts: one row per series of a §4 envelope (docs/analytics.md).

Pure: takes the envelope's ``series`` list (dicts, as the API sends them) and returns frozen rows
with the latest, mean and peak of the metrics a page shows, so the figures are readable
without JavaScript and testable without a browser.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class MetricFigures:
    latest: float | None
    mean: float | None
    peak: float | None


@dataclass(frozen=True)
class SeriesRow:
    label: str
    key: Mapping[str, Any]
    last_t: str | None
    figures: Mapping[str, MetricFigures]


def _figures(points: Sequence[Mapping[str, Any]], metric: str) -> MetricFigures:
    values = [float(p[metric]) for p in points if p.get(metric) is not None]
    if not values:
        return MetricFigures(None, None, None)
    return MetricFigures(latest=values[-1], mean=sum(values) / len(values), peak=max(values))


def series_rows(series: Iterable[Mapping[str, Any]], *, metrics: Sequence[str]) -> list[SeriesRow]:
    """One row per series, ordered by group, topic, broker, queue id; points taken in time order.

    >>> rows = series_rows([{"key": {"queue_id": 0}, "label": "q0",
    ...                      "points": [{"t": "T1", "msgs_per_s": 2.0}, {"t": "T2", "msgs_per_s": 4.0}]}],
    ...                    metrics=["msgs_per_s"])
    >>> rows[0].figures["msgs_per_s"]
    MetricFigures(latest=4.0, mean=3.0, peak=4.0)
    """
    rows = []
    for s in series:
        points = sorted(s.get("points") or (), key=lambda p: str(p.get("t")))
        rows.append(
            SeriesRow(
                label=str(s.get("label", "")),
                key=dict(s.get("key") or {}),
                last_t=str(points[-1]["t"]) if points else None,
                figures={m: _figures(points, m) for m in metrics},
            )
        )
    return sorted(rows, key=_order)


def _order(row: SeriesRow) -> tuple:
    key = row.key
    return (
        str(key.get("group") or ""),
        str(key.get("topic") or ""),
        str(key.get("broker") or ""),
        int(key["queue_id"]) if key.get("queue_id") is not None else -1,
        row.label,
    )
