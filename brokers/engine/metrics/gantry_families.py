"""Gantry's own metric families (``gantry_*``), shared by the broker's and the name server's collector:
request latency per request code, refusals by reason, open connections."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric

from brokers.engine.common.latency_histogram import HistogramSnapshot
from brokers.engine.remoting.request_stats import RequestStatsSnapshot


def histogram(
    name: str, doc: str, labels: list[str], series: list[tuple[list[str], HistogramSnapshot]]
) -> HistogramMetricFamily:
    family = HistogramMetricFamily(name, doc, labels=labels)
    for values, snap in series:
        family.add_metric(values, snap.cumulative(), snap.total_s)
    return family


def remoting_families(role: str, stats: RequestStatsSnapshot, open_connections: int) -> Iterator[Metric]:
    """The request latency histogram (label ``code``), refusals (label ``reason``) and open connections."""
    yield histogram(
        "gantry_request_latency_seconds",
        f"Time the {role}'s handler took per request code",
        ["code"],
        [([str(code)], snap) for code, snap in sorted(stats.latency_by_code.items())],
    )
    refusals = CounterMetricFamily(
        "gantry_refusals", "Requests and connections refused, by reason (acl or the limit's name)", labels=["reason"]
    )
    for reason, n in sorted(stats.refusals.items()):
        refusals.add_metric([reason], n)
    yield refusals
    yield GaugeMetricFamily(
        "gantry_open_connections", f"Connections open on the {role}'s remoting port", value=open_connections
    )
