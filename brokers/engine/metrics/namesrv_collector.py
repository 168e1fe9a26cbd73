"""NamesrvCollector: a name server's ``/metrics``. The exporter has no name server series, so these
are Gantry's own: the live brokers and topics it routes, plus the remoting figures every engine
process has (request latency per code, refusals by reason, open connections)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from prometheus_client.core import GaugeMetricFamily, Metric

from brokers.engine.metrics.gantry_families import remoting_families
from brokers.engine.metrics.loop_snapshot import on_loop
from brokers.engine.namesrv.route_info import RouteInfoManager
from brokers.engine.remoting.request_stats import RequestStatsSnapshot, request_stats
from brokers.engine.remoting.server import RemotingServer


@dataclass(frozen=True, slots=True)
class NamesrvSnapshot:
    live_brokers: int
    topics: int
    requests: RequestStatsSnapshot
    open_connections: int


class Namesrv(Protocol):
    """What the collector reads of a started NamesrvController (namesrv/server.py, which imports this module)."""

    route_info: RouteInfoManager
    server: RemotingServer


class NamesrvCollector:
    def __init__(self, controller: Namesrv, loop: asyncio.AbstractEventLoop) -> None:
        self.controller = controller
        self.loop = loop

    def snapshot(self) -> NamesrvSnapshot:
        route = self.controller.route_info
        return NamesrvSnapshot(
            len(route.broker_live_table),
            len(route.topic_queue_table),
            request_stats.snapshot(),
            len(self.controller.server.channels),
        )

    def collect(self) -> Iterator[Metric]:
        snap = on_loop(self.loop, self.snapshot)
        yield GaugeMetricFamily(
            "gantry_namesrv_live_brokers", "Brokers whose registration has not expired", value=snap.live_brokers
        )
        yield GaugeMetricFamily("gantry_namesrv_topics", "Topics with a route", value=snap.topics)
        yield from remoting_families("name server", snap.requests, snap.open_connections)
