"""``python -m brokers.engine proxy``: the 5.x clients' gRPC endpoint as a process of its own in front
of a whole cluster (RocketMQ 5's proxy in cluster mode), e.g.

    python -m brokers.engine proxy --namesrv 127.0.0.1:9876 --grpc-port 8081

It reads routes from the same name servers as the brokers, serves every broker they know through
one address, and runs each call on the broker it concerns over the calling client's own remoting
connections (:mod:`.cluster_backend`). Use it when the brokers are not Gantry's (Apache RocketMQ 4.x
or 5.x brokers), when 5.x clients may reach only one address, or to scale the gRPC work apart from
the brokers; a broker's own ``--grpc-port`` saves the extra hop otherwise (README, docs/grpc.md).

With the ACL on (``--acl-file``, the brokers' plain_acl.yml), each call's 5.x signature is checked
against it and the forwarded request is signed as the same account; the proxy's own lookups (topic
and group configs, cluster info) are signed as ``--metadata-access-key`` (default: the file's first
admin account). On a non-loopback address an ACL file or ``--no-acl`` is required, as for the brokers.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from brokers.engine.acl.acl_guard import AclGuard
from brokers.engine import event_loop
from brokers.engine.acl.plain_acl_config import AclConfigError
from brokers.engine.acl.server_acl import add_acl_arguments, server_acl_guard
from brokers.engine.common.namesrv_addr import parse_namesrv_addrs
from brokers.engine.common.stop_signals import stop_on_signals
from brokers.engine.metrics.metrics_endpoint import (
    MetricsConfigError,
    MetricsEndpoint,
    add_metrics_arguments,
    metrics_endpoint_from_args,
)
from brokers.engine.proxy.cluster_backend import ClusterBackend
from brokers.engine.proxy.endpoint import EndpointSettings, GrpcEndpoint
from brokers.engine.remoting.tls import TlsConfig, TlsConfigError, add_tls_arguments, tls_config_from_args

EXIT_START_FAILED = 1
EXIT_BAD_ARGUMENTS = 2


def _parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m brokers.engine proxy", description=__doc__.split("\n\n")[0])
    parser.add_argument("--namesrv", required=True, help="name server addresses, host:port[;host:port...]")
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    parser.add_argument("--grpc-port", type=int, default=8081, help="the gRPC port (0: any free port)")
    parser.add_argument("--advertised-ip", default=None, help="the address routes give clients (default: --host)")
    parser.add_argument("--max-message-size", type=int, default=4 * 1024 * 1024, help="bytes of one message body")
    parser.add_argument("--grpc-max-clients", type=int, default=10_000, help="5.x client ids served at once")
    parser.add_argument("--grpc-max-concurrent-rpcs", type=int, default=4_096, help="calls in progress at once")
    parser.add_argument(
        "--grpc-request-budget",
        type=int,
        default=128 << 20,
        help="bytes of request messages read at once (divided by the request cap: the read slots)",
    )
    parser.add_argument("--client-expire", type=float, default=120.0, help="seconds a silent client is kept")
    parser.add_argument(
        "--metadata-access-key", default=None, help="the account the proxy's own lookups are signed as (ACL on)"
    )
    add_acl_arguments(parser)
    add_tls_arguments(parser)
    add_metrics_arguments(parser)
    parser.add_argument("--log-level", default="INFO")
    args = parser.parse_args(argv)
    for name in ("grpc_max_clients", "grpc_max_concurrent_rpcs", "grpc_request_budget", "max_message_size"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if not 0 <= args.grpc_port <= 65535:
        parser.error("--grpc-port must be within 0..65535")
    return args


def _metadata_account(guard: AclGuard | None, wanted: str | None) -> tuple[str, str] | None:
    if guard is None:
        return None
    accounts = guard.config.accounts
    if wanted is not None:
        account = accounts.get(wanted)
        if account is None:
            raise AclConfigError(f"--metadata-access-key {wanted} is not an account of the ACL file")
        return account.access_key, account.secret_key
    admin = next((a for a in accounts.values() if a.admin), None)
    if admin is None:
        raise AclConfigError("the ACL file has no admin account: name the proxy's with --metadata-access-key")
    return admin.access_key, admin.secret_key


async def serve(args: argparse.Namespace, tls: TlsConfig | None, metrics: MetricsEndpoint | None = None) -> int:
    guard = server_acl_guard(host=args.host, acl_file=args.acl_file, no_acl=args.no_acl, name="proxy")
    backend = ClusterBackend(
        parse_namesrv_addrs(args.namesrv),
        guard=guard,
        metadata_account=_metadata_account(guard, args.metadata_access_key),
        tls=tls,
        max_message_size=args.max_message_size,
    )
    settings = EndpointSettings(
        listen_host=args.host,
        port=args.grpc_port,
        advertised_ip=args.advertised_ip or args.host,
        max_message_size=args.max_message_size,
        max_clients=args.grpc_max_clients,
        max_concurrent_rpcs=args.grpc_max_concurrent_rpcs,
        session_expire_s=args.client_expire,
        tls=tls,
        request_budget=args.grpc_request_budget,
    )
    endpoint = GrpcEndpoint(backend, settings)
    try:
        await backend.start()
    except Exception as exc:
        print(f"error: proxy could not read the cluster from {args.namesrv}: {exc}", file=sys.stderr, flush=True)
        await backend.stop()
        return EXIT_START_FAILED
    await endpoint.start()
    metrics_server = None
    if metrics is not None:
        from brokers.engine.metrics.grpc_pop_families import ProxyCollector
        from brokers.engine.metrics.metrics_endpoint import MetricsServer

        metrics_server = MetricsServer(metrics, ProxyCollector(endpoint, asyncio.get_running_loop()))
    stop = asyncio.Event()
    stop_on_signals(stop)
    print(f"proxy 5.x gRPC endpoint at {endpoint.addr} (name servers {args.namesrv})", flush=True)
    if metrics is not None:
        print(f"proxy metrics at {metrics.url}", flush=True)
    try:
        await stop.wait()
    finally:
        if metrics_server is not None:
            metrics_server.close()
        await endpoint.stop()
        await backend.stop()
    print("proxy stopped", flush=True)
    return 0


def main(argv: list[str]) -> int:
    args = _parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        tls = tls_config_from_args(args)
        metrics = metrics_endpoint_from_args(args)
    except (TlsConfigError, MetricsConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return EXIT_BAD_ARGUMENTS
    try:
        return event_loop.run(serve(args, tls, metrics))
    except (AclConfigError, MetricsConfigError) as exc:
        print(f"proxy refuses to start on {args.host}:{args.grpc_port}: {exc}", file=sys.stderr, flush=True)
        return EXIT_START_FAILED
    except OSError as exc:
        print(f"proxy failed to start on {args.host}:{args.grpc_port}: {exc}", file=sys.stderr, flush=True)
        return EXIT_START_FAILED
    except KeyboardInterrupt:
        return 0
