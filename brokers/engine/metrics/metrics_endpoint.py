"""The ``--metrics-port``/``--metrics-host``/``--metrics-token*`` flags and the HTTP server behind them.

The server is prometheus-client's WSGI app on its threading WSGI server (a daemon thread), so a
scrape never runs on the broker's or name server's event loop; its collectors take what they need
from the loop in one short call (``loop_snapshot.py``). It binds 127.0.0.1 unless ``--metrics-host``
says otherwise, like every port of the project. Off unless ``--metrics-port`` is given.

Secure by default, as the ACL is for the remoting port (``acl/server_acl.py``): on loopback the
metrics are open unless a token is given; on any other address a token is required
(``bearer_token.py``), and a start without one is refused before anything binds, naming
``--metrics-host``. With a token every request needs ``Authorization: Bearer <token>`` (401 else).
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import os
import socket
import threading
from dataclasses import dataclass, field
from wsgiref.simple_server import WSGIRequestHandler, make_server

from brokers.engine.acl.server_acl import is_loopback_host
from brokers.engine.metrics.bearer_token import TOKEN_ENV, MetricsTokenError, bearer_guard, check_token, read_token_file

log = logging.getLogger("brokers.engine.metrics")

DEFAULT_METRICS_HOST = "127.0.0.1"


class MetricsConfigError(ValueError):
    """A bad ``--metrics-*`` value; the message names the flag."""


@dataclass(frozen=True, slots=True)
class MetricsEndpoint:
    host: str
    port: int
    token: str | None = field(default=None, repr=False)  # None: open (loopback only)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/metrics"


def add_metrics_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--metrics-port",
        default=None,
        metavar="PORT",
        help="serve Prometheus metrics at http://HOST:PORT/metrics (default: off)",
    )
    parser.add_argument(
        "--metrics-host",
        default=DEFAULT_METRICS_HOST,
        metavar="ADDR",
        help=f"address the metrics port binds (default {DEFAULT_METRICS_HOST}; an IP address; "
        "beyond loopback a metrics token is required)",
    )
    parser.add_argument(
        "--metrics-token-file",
        default=None,
        metavar="PATH",
        help="file holding the bearer token scrapes must send (Authorization: Bearer <token>)",
    )
    parser.add_argument(
        "--metrics-token",
        default=os.environ.get(TOKEN_ENV) or None,
        metavar="TOKEN",
        help=f"the bearer token itself (default: ${TOKEN_ENV}; prefer --metrics-token-file, a flag shows in ps)",
    )


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
    token = _token_from_args(args)
    if token is None and not is_loopback_host(host):
        raise MetricsConfigError(
            f"--metrics-host {host} is not a loopback address: the metrics would be open to the network; give "
            f"--metrics-token-file PATH (or ${TOKEN_ENV}) and scrape with 'Authorization: Bearer <token>'"
        )
    return MetricsEndpoint(host, port, token)


def _token_from_args(args: argparse.Namespace) -> str | None:
    token_file, token = getattr(args, "metrics_token_file", None), getattr(args, "metrics_token", None)
    try:
        if token_file and token:
            raise MetricsTokenError(f"give either --metrics-token-file or --metrics-token (or ${TOKEN_ENV}), not both")
        if token_file:
            return read_token_file(token_file)
        if token:
            return check_token(token, f"--metrics-token (or ${TOKEN_ENV})")
    except MetricsTokenError as exc:
        raise MetricsConfigError(str(exc)) from None
    return None


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
        """No line per scrape on stderr."""


class MetricsServer:
    """prometheus-client's HTTP server for one collector, on its own thread; :meth:`close` stops it."""

    def __init__(self, endpoint: MetricsEndpoint, collector: object) -> None:
        from prometheus_client import CollectorRegistry, make_wsgi_app
        from prometheus_client.exposition import ThreadingWSGIServer

        if endpoint.token is None and not is_loopback_host(endpoint.host):
            raise MetricsConfigError(
                f"--metrics-host {endpoint.host} is not a loopback address: a metrics token is required"
            )
        registry = CollectorRegistry(auto_describe=False)
        registry.register(collector)  # type: ignore[arg-type]
        app = make_wsgi_app(registry)
        if endpoint.token is not None:
            app = bearer_guard(app, endpoint.token)

        class Server(ThreadingWSGIServer):
            address_family = socket.AF_INET6 if ":" in endpoint.host else socket.AF_INET

        self.endpoint = endpoint
        try:
            self._server = make_server(endpoint.host, endpoint.port, app, Server, handler_class=_QuietHandler)
        except OSError as exc:
            raise MetricsConfigError(
                f"--metrics-port {endpoint.port}: cannot listen on {endpoint.host}: {exc}"
            ) from None
        self._thread = threading.Thread(target=self._server.serve_forever, name="metrics-http", daemon=True)
        self._thread.start()
        if endpoint.token is not None:
            log.info("metrics on %s need the bearer token (plain HTTP: keep the network private)", endpoint.url)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
