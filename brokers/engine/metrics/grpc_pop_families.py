"""Gantry's metrics of RocketMQ 5's clients on a broker (``gantry_grpc_*``, ``gantry_pop_*``):

- ``gantry_grpc_clients`` (cluster, broker, client_type): the 5.x clients the gRPC endpoint serves now
  (its sessions, ``brokers/engine/proxy/sessions.py``), by the client type their settings name
  (PRODUCER, PUSH_CONSUMER, SIMPLE_CONSUMER, ...; CLIENT_TYPE_UNSPECIFIED before their settings came);
  only on a broker whose endpoint is on, every type its protobuf knows with 0 when none;
- ``gantry_pop_inflight`` (cluster, broker, group, topic): POP deliveries not acked yet (expired ones
  included, until taken again), per group and topic the broker's POP state holds, 0 once all acked;
- ``gantry_grpc_calls_total`` (cluster, broker, method, code): the endpoint's calls since it started, by RPC
  and the 5.x status answered (``proxy/handlers.py``).

:func:`five_snapshot` runs on the broker's event loop (with the collector's other reads),
:func:`five_families` on the scrape thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from brokers.engine.metrics.loop_snapshot import on_loop

if TYPE_CHECKING:
    from brokers.engine.broker.controller import BrokerController
    from brokers.engine.proxy.endpoint import GrpcEndpoint


@dataclass(frozen=True, slots=True)
class FiveSnapshot:
    clients: dict[str, int] | None  # client type -> clients now; None: the gRPC endpoint is off
    inflight: dict[tuple[str, str], int]  # (group, topic) -> POP deliveries in flight
    calls: dict[tuple[str, str], int] | None = None  # (RPC, 5.x status) -> calls; None: the endpoint is off


def endpoint_figures(endpoint: GrpcEndpoint) -> tuple[dict[str, int], dict[tuple[str, str], int]]:
    """A gRPC endpoint's clients by type and calls by (RPC, status), read on its event loop: a broker's
    endpoint or the cluster-mode proxy's."""
    from brokers.engine.proxy.stubs import definition_pb2 as pb  # loaded already: the endpoint runs

    clients = {name: 0 for name in pb.ClientType.keys()}
    for session in endpoint.sessions.all():
        name = (
            pb.ClientType.Name(session.client_type)
            if session.client_type in pb.ClientType.values()
            else str(session.client_type)
        )
        clients[name] = clients.get(name, 0) + 1
    return clients, dict(endpoint.call_counts)


def five_snapshot(controller: BrokerController) -> FiveSnapshot:
    """The figures, read from ``controller`` (a started BrokerController) on its event loop."""
    clients: dict[str, int] | None = None
    calls: dict[tuple[str, str], int] | None = None
    if controller.grpc_endpoint is not None:
        clients, calls = endpoint_figures(controller.grpc_endpoint)
    inflight: dict[tuple[str, str], int] = {}
    for (group, topic, _queue_id), qs in controller.pop_service.state.queues.items():
        inflight[(group, topic)] = inflight.get((group, topic), 0) + len(qs.inflight)
    return FiveSnapshot(clients, inflight, calls)


def five_families(cluster: str, broker: str, snap: FiveSnapshot) -> Iterator[Metric]:
    if snap.clients is not None:
        clients = GaugeMetricFamily(
            "gantry_grpc_clients",
            "5.x clients the gRPC endpoint serves now, by client type",
            labels=["cluster", "broker", "client_type"],
        )
        for client_type, n in sorted(snap.clients.items()):
            clients.add_metric([cluster, broker, client_type], n)
        yield clients
    if snap.calls is not None:
        calls = CounterMetricFamily(
            "gantry_grpc_calls",
            "calls on the 5.x gRPC endpoint by RPC and the 5.x status answered",
            labels=["cluster", "broker", "method", "code"],
        )
        for (method, code), n in sorted(snap.calls.items()):
            calls.add_metric([cluster, broker, method, code], n)
        yield calls
    inflight = GaugeMetricFamily(
        "gantry_pop_inflight",
        "POP deliveries not acked yet (expired ones too, until taken again)",
        labels=["cluster", "broker", "group", "topic"],
    )
    for (group, topic), n in sorted(snap.inflight.items()):
        inflight.add_metric([cluster, broker, group, topic], n)
    yield inflight


class ProxyCollector:
    """The cluster-mode proxy's ``/metrics``: ``gantry_grpc_clients`` and ``gantry_grpc_calls_total``, labelled
    cluster "" and broker "proxy" (its POP state is the brokers': no ``gantry_pop_inflight`` here)."""

    def __init__(self, endpoint: GrpcEndpoint, loop: asyncio.AbstractEventLoop) -> None:
        self.endpoint = endpoint
        self.loop = loop

    def collect(self) -> Iterator[Metric]:
        clients, calls = on_loop(self.loop, lambda: endpoint_figures(self.endpoint))
        for family in five_families("", "proxy", FiveSnapshot(clients, {}, calls)):
            if family.name != "gantry_pop_inflight":
                yield family
