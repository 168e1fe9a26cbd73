"""The ``--metrics-port``/``--metrics-host`` flags and the HTTP server behind them.

The server is prometheus-client's own (a WSGI server on a daemon thread), so a scrape never runs
on the broker's or name server's event loop; its collectors take what they need from the loop
in one short call (``loop_snapshot.py``). It binds 127.0.0.1 unless ``--metrics-host`` says
otherwise, like every port of the project. Off unless ``--metrics-port`` is given.
"""
from __future__ import annotations

import argparse
import ipaddress
import logging
from dataclasses import dataclass

log = logging.getLogger("brokers.engine.metrics")

DEFAULT_METRICS_HOST = "127.0.0.1"


class MetricsConfigError(ValueError):
    """A bad ``--metrics-*`` value; the message names the flag."""


@dataclass(frozen=True, slots=True)
class MetricsEndpoint:
    host: str
    port: int

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/metrics"


def add_metrics_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--metrics-port", default=None, metavar="PORT",
                        help="serve Prometheus metrics at http://HOST:PORT/metrics (default: off)")
    parser.add_argument("--metrics-host", default=DEFAULT_METRICS_HOST, metavar="ADDR",
                        help=f"address the metrics port binds (default {DEFAULT_METRICS_HOST}; an IP address)")


def metrics_endpoint_from_args(args: argparse.Namespace) -> MetricsEndpoint | None:
    """The endpoint the flags ask for (None: off); MetricsConfigError naming the flag when bad."""
    raw_host = args.metrics_host
    try:
        host = str(ipaddress.ip_address(raw_host))
    except ValueError:
        raise MetricsConfigError(f"--metrics-host {raw_host!r} is not an IP address") from None
    if args.metrics_port is None:
        return None
    try:
        port = int(args.metrics_port)
    except ValueError:
        raise MetricsConfigError(f"--metrics-port {args.metrics_port!r} is not a port number") from None
    if not 1 <= port <= 65535:
        raise MetricsConfigError(f"--metrics-port {port} is outside 1..65535")
    return MetricsEndpoint(host, port)


class MetricsServer:
    """prometheus-client's HTTP server for one collector, on its own thread; :meth:`close` stops it."""

    def __init__(self, endpoint: MetricsEndpoint, collector: object) -> None:
        from prometheus_client import CollectorRegistry, start_http_server

        registry = CollectorRegistry(auto_describe=False)
        registry.register(collector)  # type: ignore[arg-type]
        self.endpoint = endpoint
        try:
            self._server, self._thread = start_http_server(endpoint.port, addr=endpoint.host, registry=registry)
        except OSError as exc:
            raise MetricsConfigError(f"--metrics-port {endpoint.port}: cannot listen on {endpoint.host}: {exc}") from None
        if not ipaddress.ip_address(endpoint.host).is_loopback:
            log.warning("metrics are served on %s, a non-loopback address: restrict who can reach it", endpoint.url)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
