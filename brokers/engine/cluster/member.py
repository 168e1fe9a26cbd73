"""``python -m brokers.engine member LAUNCH.json``: run one member of a cluster spec in this process.

The launch file (written by ``ProcessCluster``) holds the spec (``ClusterSpec.to_json``'s object)
and which member to run: ``{"spec": {...}, "namesrv": 0}`` for name server 0, or ``{"spec": {...},
"broker": "broker-a#1", "namesrv_addrs": [...]}`` for a broker, with optional ``"member"`` (a
broker the spec does not name, as ``BrokerSpec`` fields), ``"port"`` (a restart on the port it had)
and ``"overrides"`` (BrokerConfig fields). The config comes from the
spec exactly as in-process (``spec.py``); the server runs and prints its ready line as
``python -m brokers.engine namesrv|broker`` do, and stops on SIGINT/SIGTERM.

Exit codes: 0 clean stop, 1 could not start, 2 a bad launch file.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

from brokers.engine import event_loop
from brokers.engine.cluster.spec import BrokerSpec, ClusterSpec, broker_config, namesrv_config

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
        event_loop.kind()
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
            event_loop.run(serve_namesrv(ns_config))
        except OSError as exc:
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
        return event_loop.run(serve_broker(config))
    except KeyboardInterrupt:
        return 0
