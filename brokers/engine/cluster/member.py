"""``python -m brokers.engine member LAUNCH.json``: run one member of a cluster spec in this process.

The launch file (written by ``ProcessCluster``) holds the spec (``ClusterSpec.to_json``'s object)
and which member to run: ``{"spec": {...}, "namesrv": 0}`` for name server 0, or ``{"spec": {...},
"broker": "broker-a#1", "namesrv_addrs": [...]}`` for a broker, with optional ``"member"`` (a
broker the spec does not name, as ``BrokerSpec`` fields), ``"port"`` (a restart on the port it had)
and ``"overrides"`` (BrokerConfig fields). The config comes from the
spec exactly as in-process (``spec.py``); the spec's ``event_loop`` chooses the loop and its
``metrics`` entry for the member turns its ``/metrics`` on, as the ``--metrics-*`` flags do; the server runs and prints its ready line as
``python -m brokers.engine namesrv|broker`` do, and stops on SIGINT/SIGTERM.

Exit codes: 0 clean stop, 1 could not start, 2 a bad launch file.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from typing import Any

from brokers.engine import event_loop
from brokers.engine.cluster.spec import BrokerSpec, ClusterSpec, broker_config, namesrv_config
from brokers.engine.metrics.metrics_endpoint import DEFAULT_METRICS_HOST, MetricsEndpoint, metrics_endpoint_from_args

USAGE = "usage: python -m brokers.engine member LAUNCH.json [--log-level LEVEL]"


def main(argv: list[str]) -> int:
    args = list(argv)
    level = "WARNING"
    if "--log-level" in args:
        at = args.index("--log-level")
        level = args[at + 1] if at + 1 < len(args) else ""
        del args[at : at + 2]
    if len(args) != 1 or level.upper() not in ("DEBUG", "INFO", "WARNING", "ERROR"):
        print(USAGE, file=sys.stderr)
        return 2
    try:
        with open(args[0]) as f:
            launch: dict[str, Any] = json.load(f)
        spec = ClusterSpec.from_json(json.dumps(launch["spec"]))
        port = launch.get("port")
        if spec.event_loop:
            os.environ[event_loop.ENV] = spec.event_loop
        event_loop.kind()
        key = f"namesrv-{int(launch['namesrv'])}" if "namesrv" in launch else str(launch["broker"])
        metrics = metrics_endpoint(spec, key)
    except (OSError, KeyError, TypeError, ValueError, ImportError) as exc:
        print(f"error: launch file {args[0]}: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(level=level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if "namesrv" in launch:
        from brokers.engine.namesrv.server import serve as serve_namesrv

        try:
            ns_config = namesrv_config(spec, int(launch["namesrv"]), port)
        except (TypeError, ValueError) as exc:
            print(f"error: launch file {args[0]}: {exc}", file=sys.stderr)
            return 2
        try:
            event_loop.run(serve_namesrv(ns_config, metrics=metrics))
        except (OSError, ValueError) as exc:  # ValueError: MetricsConfigError, the metrics port not bound
            print(f"namesrv failed to start on {ns_config.host}:{ns_config.port}: {exc}", file=sys.stderr, flush=True)
            return 1
        except KeyboardInterrupt:
            pass
        return 0
    from brokers.engine.broker.startup import serve as serve_broker

    try:
        extra = dict(launch.get("overrides") or {})
        if port is not None:
            extra["listen_port"] = port
        given = launch.get("member")
        member = BrokerSpec(**given) if given else spec.member(str(launch["broker"]))
        config = broker_config(spec, member, tuple(launch.get("namesrv_addrs") or ()), **extra)
    except (KeyError, TypeError, ValueError) as exc:
        print(f"error: launch file {args[0]}: {exc}", file=sys.stderr)
        return 2
    try:
        return event_loop.run(serve_broker(config, metrics=metrics))
    except KeyboardInterrupt:
        return 0


def metrics_endpoint(spec: ClusterSpec, key: str) -> MetricsEndpoint | None:
    """Member ``key``'s ``/metrics`` endpoint from the spec (None: off), checked as the ``--metrics-*`` flags are
    (MetricsConfigError, a ValueError, naming the flag)."""
    settings = spec.metrics.get(key)
    if settings is None:
        return None
    return metrics_endpoint_from_args(
        argparse.Namespace(
            metrics_port=settings["port"],
            metrics_host=settings.get("host") or DEFAULT_METRICS_HOST,
            metrics_token_file=settings.get("token_file"),
            metrics_token=settings.get("token"),
        )
    )
