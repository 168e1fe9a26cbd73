"""Command line of the broker: ``python -m brokers.engine broker --name N --store-dir DIR ...``.

Prints one line containing ``ready`` once it listens and has registered; SIGINT/SIGTERM stop
it cleanly (configs written, store flushed, abort file removed). Exit codes: 0 after a clean
stop, 2 for bad arguments, 1 when the broker cannot start (port in use, store locked, ...).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from typing import TYPE_CHECKING, Any

from brokers.engine import event_loop
from brokers.engine.acl.plain_acl_config import AclConfigError
from brokers.engine.acl.server_acl import add_acl_arguments
from brokers.engine.broker.config import BrokerConfig, BrokerConfigError
from brokers.engine.broker.controller import BrokerController
from brokers.engine.broker.retention_arguments import add_retention_arguments, flag_of_error, retention_kwargs
from brokers.engine.common.constants import DEFAULT_BROKER_PORT, DEFAULT_CLUSTER
from brokers.engine.common.gc_freeze import freeze_startup_heap
from brokers.engine.common.namesrv_addr import parse_namesrv_addrs
from brokers.engine.common.stop_signals import stop_on_signals
from brokers.engine.metrics.metrics_endpoint import (
    MetricsConfigError,
    MetricsEndpoint,
    add_metrics_arguments,
    metrics_endpoint_from_args,
)
from brokers.engine.remoting.tls import add_tls_arguments, tls_config_from_args
from brokers.engine.store.config import ASYNC_FLUSH, SYNC_FLUSH, StoreConfig
from brokers.engine.remoting.limits import add_limit_arguments, limits_from_args

if TYPE_CHECKING:
    from brokers.engine.metrics.metrics_endpoint import MetricsServer

EXIT_OK = 0
EXIT_START_FAILED = 1
EXIT_USAGE = 2


def build_arg_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m brokers.engine broker",
        description="Run a RocketMQ 4.x-compatible broker (a master, or a slave with --broker-id N --role SLAVE) that registers with the given name servers.",
    )
    parser.add_argument("--name", required=True, help="broker name, e.g. broker-a")
    parser.add_argument("--store-dir", required=True, help="directory of the commit log, queues and config files")
    parser.add_argument(
        "--port",
        type=int,
        default=DEFAULT_BROKER_PORT,
        help=f"listen port (default {DEFAULT_BROKER_PORT}; 0 = any free port)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="listen address (default 127.0.0.1)")
    parser.add_argument("--broker-ip", default=None, help="address advertised to clients (default: the listen address)")
    parser.add_argument(
        "--namesrv",
        default=os.environ.get("NAMESRV_ADDR"),
        help="name servers, HOST:PORT[;HOST:PORT...] (default: $NAMESRV_ADDR)",
    )
    parser.add_argument("--cluster", default=DEFAULT_CLUSTER, help=f"cluster name (default {DEFAULT_CLUSTER})")
    parser.add_argument(
        "--flush", choices=("sync", "async"), default="async", help="disk flush: sync (group commit) or async (default)"
    )
    parser.add_argument(
        "--auto-create-topic",
        action="store_true",
        help="create unknown topics on first send (RocketMQ's TBW102 template)",
    )
    parser.add_argument(
        "--enable-property-filter",
        action="store_true",
        help="serve SQL92 subscriptions (MessageSelector.bySql) [enablePropertyFilter] (default off, as RocketMQ)",
    )
    parser.add_argument(
        "--commitlog-file-size", type=int, default=None, metavar="BYTES", help="commit log segment size (default 1 GiB)"
    )
    parser.add_argument(
        "--consume-queue-units-per-file",
        type=int,
        default=None,
        metavar="N",
        help="units (20 bytes each) per consume queue file [mappedFileSizeConsumeQueue / 20] (default 300000)",
    )
    parser.add_argument(
        "--max-index-hash-slots",
        type=int,
        default=None,
        metavar="N",
        help="hash slots per index file [maxHashSlotNum] (default 5000000)",
    )
    parser.add_argument(
        "--max-index-count",
        type=int,
        default=None,
        metavar="N",
        help="items per index file [maxIndexNum] (default 20000000)",
    )
    parser.add_argument(
        "--register-interval",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="seconds between registrations with the name servers (default 30, as RocketMQ)",
    )
    parser.add_argument(
        "--broker-id", type=int, default=None, help="0 = master (default), >= 1 = a slave (needs --role SLAVE)"
    )
    parser.add_argument(
        "--role",
        choices=("ASYNC_MASTER", "SYNC_MASTER", "SLAVE"),
        default=None,
        help="brokerRole (default ASYNC_MASTER; SLAVE when --broker-id >= 1)",
    )
    parser.add_argument(
        "--grpc-port",
        type=int,
        default=None,
        metavar="PORT",
        help="serve RocketMQ 5.x gRPC clients on this port too (0 = any free port; default: off)",
    )
    parser.add_argument("--ha-port", type=int, default=None, help="HA listen port (default: --port + 1)")
    parser.add_argument(
        "--master-ha-addr",
        default=None,
        metavar="HOST:PORT",
        help="a slave's master HA address (default: learned from the name servers)",
    )
    parser.add_argument(
        "--sync-flush-timeout-ms",
        type=int,
        default=None,
        metavar="MS",
        help="syncFlushTimeout: how long a SYNC_FLUSH put or a SYNC_MASTER send waits (default 5000)",
    )
    parser.add_argument(
        "--slave-sync-interval",
        type=float,
        default=None,
        metavar="SECONDS",
        help="a slave's copy of topics, groups and offsets from its master (default 10, as RocketMQ)",
    )
    add_retention_arguments(parser)
    add_acl_arguments(parser)
    parser.add_argument(
        "--acl-access-key",
        default=None,
        metavar="KEY",
        help="account the broker signs its requests to name servers and its master with "
        "(default: the ACL file's first admin account)",
    )
    parser.add_argument("--acl-secret-key", default=None, metavar="SECRET", help="that account's secret key")
    add_limit_arguments(parser)
    add_tls_arguments(parser)
    add_metrics_arguments(parser)
    parser.add_argument(
        "--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR"), help="log level (default INFO)"
    )
    return parser


def config_from_args(args: argparse.Namespace) -> BrokerConfig:
    """Build a BrokerConfig from parsed flags; raises BrokerConfigError/ValueError on bad values."""
    if not 0 <= args.port <= 65535:
        raise BrokerConfigError(f"--port {args.port} is outside 0..65535")
    store_kwargs: dict[str, Any] = {
        "store_dir": os.path.abspath(args.store_dir),
        "flush_disk_type": SYNC_FLUSH if args.flush == "sync" else ASYNC_FLUSH,
    }
    if not args.register_interval > 0:
        raise BrokerConfigError(f"--register-interval must be positive, got {args.register_interval}")
    for name in ("commitlog_file_size", "consume_queue_units_per_file", "max_index_hash_slots", "max_index_count"):
        if getattr(args, name) is not None:
            store_kwargs[name] = getattr(args, name)
    if args.sync_flush_timeout_ms is not None:
        if args.sync_flush_timeout_ms <= 0:
            raise BrokerConfigError(f"--sync-flush-timeout-ms must be positive, got {args.sync_flush_timeout_ms}")
        store_kwargs["sync_flush_timeout_ms"] = args.sync_flush_timeout_ms
    store_kwargs.update(retention_kwargs(args))
    try:
        store = StoreConfig(**store_kwargs)
    except ValueError as exc:
        flag = flag_of_error(exc)
        raise BrokerConfigError(f"{flag}: {exc}" if flag else str(exc)) from None
    extra: dict[str, Any] = {}
    if args.grpc_port is not None:
        if not 0 <= args.grpc_port <= 65535:
            raise BrokerConfigError(f"--grpc-port {args.grpc_port} is outside 0..65535")
        extra["grpc_port"] = args.grpc_port
    if args.slave_sync_interval is not None:
        extra["slave_synchronize_interval_s"] = args.slave_sync_interval
    broker_id = args.broker_id if args.broker_id is not None else 0
    role = args.role or ("SLAVE" if broker_id >= 1 else "ASYNC_MASTER")
    return BrokerConfig(
        broker_name=args.name,
        broker_id=broker_id,
        broker_role=role,
        ha_listen_port=args.ha_port,
        ha_master_address=args.master_ha_addr,
        cluster_name=args.cluster,
        listen_host=args.host,
        listen_port=args.port,
        broker_ip=args.broker_ip,
        namesrv_addrs=parse_namesrv_addrs(args.namesrv, required=False),
        auto_create_topic_enable=args.auto_create_topic,
        enable_property_filter=args.enable_property_filter,
        register_interval_s=args.register_interval,
        store=store,
        limits=limits_from_args(args),
        **extra,
        acl_file=os.path.abspath(args.acl_file) if args.acl_file else None,
        acl_disabled=args.no_acl,
        acl_access_key=args.acl_access_key,
        acl_secret_key=args.acl_secret_key,
        tls=tls_config_from_args(args),
    )


async def serve(config: BrokerConfig, *, ready_line: bool = True, metrics: MetricsEndpoint | None = None) -> int:
    """Run a broker (and its ``/metrics`` when ``metrics`` is given) until SIGINT/SIGTERM; return the exit code."""
    metrics_server = None
    try:
        controller = BrokerController(config)
        await controller.start()
        if metrics is not None:
            metrics_server = _start_metrics(controller, metrics)
    except MetricsConfigError as exc:
        await controller.stop()
        print(f"error: broker {config.broker_name} could not start: {exc}", file=sys.stderr, flush=True)
        return EXIT_START_FAILED
    except AclConfigError as exc:
        print(f"error: broker {config.broker_name} refuses to start: {exc}", file=sys.stderr, flush=True)
        return EXIT_START_FAILED
    except Exception as exc:
        print(f"error: broker {config.broker_name} could not start: {exc}", file=sys.stderr, flush=True)
        return EXIT_START_FAILED
    stop = asyncio.Event()
    stop_on_signals(stop)
    registered = [r.namesrv_addr for r in controller.last_register_results if r.ok]
    freeze_startup_heap()  # full collections then skip start-up's objects (gc_freeze.py)
    if ready_line:
        print(
            f"broker {config.broker_name} ready at {controller.addr} (cluster {config.cluster_name}, "
            f"{config.broker_role} brokerId {config.broker_id}, HA {controller.identity.ha_server_addr}, "
            f"store {config.store.store_dir}, name servers registered: {', '.join(registered) or 'none'})",
            flush=True,
        )
        if controller.grpc_addr is not None:
            print(f"broker {config.broker_name} 5.x gRPC endpoint at {controller.grpc_addr}", flush=True)
    try:
        await stop.wait()
    finally:
        if metrics_server is not None:
            metrics_server.close()
        await controller.stop()
    print(f"broker {config.broker_name} stopped", flush=True)
    return EXIT_OK


def _start_metrics(controller: BrokerController, endpoint: MetricsEndpoint) -> MetricsServer:
    """The broker's ``/metrics`` on its own thread (``brokers/engine/metrics/``); MetricsConfigError if it cannot listen."""
    from brokers.engine.metrics.broker_collector import BrokerCollector
    from brokers.engine.metrics.metrics_endpoint import MetricsServer

    server = MetricsServer(endpoint, BrokerCollector(controller, asyncio.get_running_loop()))
    print(f"broker {controller.config.broker_name} metrics at {endpoint.url}", flush=True)
    return server


def main(argv: list[str] | None = None) -> int:
    parser = build_arg_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse printed usage or help
        return EXIT_OK if exc.code in (0, None) else EXIT_USAGE
    try:
        config = config_from_args(args)
        metrics = metrics_endpoint_from_args(args)
        event_loop.kind()
    except (BrokerConfigError, ValueError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return event_loop.run(serve(config, metrics=metrics))
    except KeyboardInterrupt:
        return EXIT_OK
