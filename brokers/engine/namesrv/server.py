"""The name server process: NamesrvConfig, NamesrvController and the command-line entry point.

The controller owns a RemotingServer, the RouteInfoManager and the KV config.  A background task
scans for brokers whose last registration is older than ``broker_channel_expired_s`` every
``scan_not_active_broker_interval_s`` (time read from the injected clock, so tests drive expiry
with a ManualClock and millisecond scan intervals); a broker whose connection closes is dropped
at once by a close listener.  ``python -m brokers.engine namesrv --port 9876`` ends up in
:func:`main`. With ``acl_file`` every request passes the ACL first (``acl/server_acl.py``: a
non-loopback listen address without a file refuses to start unless ``acl_disabled``). The route
hijack rules (``processor.py``) take two settings: ``broker_host_aliases`` (``--broker-host-alias
PEER=BROKER``, for brokers behind NAT; ``broker_address_rule.py``) and ``loopback_route_writes``
(``--strict-route-writes`` turns it off; ``route_write_rule.py``).
With ``tls`` the port serves TLS per its mode (``remoting/tls.py``; ``--tls-mode``, ``--tls-cert`` ...).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from dataclasses import dataclass

from brokers.engine import event_loop
from brokers.engine.acl.plain_acl_config import AclConfigError
from brokers.engine.acl.server_acl import add_acl_arguments, server_acl_guard
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.common.constants import DEFAULT_NAMESRV_PORT, MAX_FRAME_SIZE
from brokers.engine.common.gc_freeze import freeze_startup_heap
from brokers.engine.common.stop_signals import stop_on_signals
from brokers.engine.metrics.metrics_endpoint import (
    MetricsConfigError,
    MetricsEndpoint,
    add_metrics_arguments,
    metrics_endpoint_from_args,
)
from brokers.engine.namesrv.broker_address_rule import BrokerAddressError, BrokerAddressRule, parse_host_alias
from brokers.engine.namesrv.kv_config import KvConfigManager
from brokers.engine.namesrv.processor import NamesrvProcessor
from brokers.engine.namesrv.route_info import RemovedBroker, RouteInfoManager
from brokers.engine.namesrv.route_write_rule import RouteWriteRule
from brokers.engine.remoting.channel import ChannelContext
from brokers.engine.remoting.limits import DEFAULT_LIMITS, ConnectionLimits, add_limit_arguments, limits_from_args
from brokers.engine.remoting.server import RemotingServer
from brokers.engine.remoting.tls import TlsConfig, TlsConfigError, add_tls_arguments, tls_config_from_args

log = logging.getLogger("brokers.engine.namesrv")


@dataclass(frozen=True, slots=True)
class NamesrvConfig:
    host: str = "127.0.0.1"
    port: int = DEFAULT_NAMESRV_PORT  # 9876, RocketMQ's; 0 picks an ephemeral port
    scan_not_active_broker_interval_s: float = 5.0  # Java scans every 10 s; 5 s halves the worst-case lag
    broker_channel_expired_s: float = 120.0  # RocketMQ BROKER_CHANNEL_EXPIRED_TIME (4 missed registrations)
    idle_close_s: float = 120.0  # serverChannelMaxIdleTimeSeconds; brokers register every 30 s
    max_frame_size: int = MAX_FRAME_SIZE
    order_message_enable: bool = False  # put ORDER_TOPIC_CONFIG layouts in routes as orderTopicConf
    kv_config_path: str | None = None  # kvConfig.json; None keeps KV config in memory only
    acl_file: str | None = None  # plain_acl.yml; None: off on loopback, refused elsewhere unless acl_disabled
    acl_disabled: bool = False  # --no-acl: listen on a non-loopback address with no ACL (logged as a warning)
    limits: ConnectionLimits = DEFAULT_LIMITS  # connections, frames, headers (remoting/limits.py)
    broker_host_aliases: tuple[str, ...] = ()  # "PEER_HOST=BROKER_HOST": a NATed broker's brokerIP1 (none by default)
    loopback_route_writes: bool = True  # ACL off: peers on this machine may wipe/add perms, delete routes, write KV
    tls: TlsConfig | None = None  # remoting/tls.py: the port serves per tls.mode; None: plain TCP


class NamesrvController:
    """Wire the route tables to a remoting server; ``await start()`` / ``await stop()``."""

    def __init__(self, config: NamesrvConfig | None = None, clock: Clock = SYSTEM_CLOCK) -> None:
        self.config = config or NamesrvConfig()
        self.clock = clock
        self.route_info = RouteInfoManager(self.config.broker_channel_expired_s)
        self.kv_config = KvConfigManager(self.config.kv_config_path)
        self.acl_guard = server_acl_guard(
            host=self.config.host,
            acl_file=self.config.acl_file,
            no_acl=self.config.acl_disabled,
            name="namesrv",
            clock=clock,
        )
        self.server = RemotingServer(
            self.config.host,
            self.config.port,
            max_frame_size=self.config.max_frame_size,
            name="namesrv",
            idle_close_s=self.config.idle_close_s,
            guard=self.acl_guard,
            limits=self.config.limits,
            tls=self.config.tls,
        )
        self.processor = NamesrvProcessor(
            self.route_info,
            self.kv_config,
            clock,
            order_message_enable=self.config.order_message_enable,
            address_rule=BrokerAddressRule(self.config.broker_host_aliases),
            write_rule=RouteWriteRule(
                self.route_info,
                acl_on=self.acl_guard is not None,
                loopback_route_writes=self.config.loopback_route_writes,
            ),
        )
        self.processor.register(self.server)
        self.server.add_close_listener(self._on_channel_closed)
        self._scan_task: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def address(self) -> str:
        return self.server.address

    async def start(self) -> None:
        self.kv_config.load()
        await self.server.start()
        self._scan_task = asyncio.get_running_loop().create_task(self._scan_loop())
        log.info("name server listening on %s", self.address)

    async def stop(self) -> None:
        if self._scan_task is not None:
            self._scan_task.cancel()
            await asyncio.gather(self._scan_task, return_exceptions=True)
            self._scan_task = None
        await self.server.stop()

    def scan_not_active_broker(self) -> list[RemovedBroker]:
        """Run one expiry scan now; close the connections left with no live broker."""
        removed = self.route_info.scan_not_active_broker(self.clock.monotonic())
        if removed:
            still_used = {live.channel_key for live in self.route_info.broker_live_table.values()}
            for ctx in self.server.channels:
                if any(r.channel_key == ctx.id for r in removed) and ctx.id not in still_used:
                    ctx.close()
            for r in removed:
                log.warning(
                    "broker %s expired: no registration for %.0fs", r.broker_addr, self.config.broker_channel_expired_s
                )
        return removed

    async def _scan_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.scan_not_active_broker_interval_s)
            try:
                self.scan_not_active_broker()
            except Exception:
                log.exception("broker expiry scan failed")

    def _on_channel_closed(self, ctx: ChannelContext) -> None:
        for removed in self.route_info.on_channel_destroy(ctx.id):
            log.info("broker %s removed: its connection %s closed", removed.broker_addr, ctx.remote_addr)


def _host_alias(text: str) -> str:
    try:
        parse_host_alias(text)
    except BrokerAddressError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m brokers.engine namesrv", description="Run a Gantry name server.")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=DEFAULT_NAMESRV_PORT, help="port (default 9876; 0 = any free port)")
    parser.add_argument("--scan-interval", type=float, default=5.0, help="seconds between broker expiry scans")
    parser.add_argument(
        "--expire", type=float, default=120.0, help="seconds without registration before a broker is dropped"
    )
    parser.add_argument("--idle-close", type=float, default=120.0, help="seconds before an idle connection is closed")
    parser.add_argument("--kv-config", default=None, help="kvConfig.json path (default: in memory only)")
    parser.add_argument("--order-message-enable", action="store_true", help="put ORDER_TOPIC_CONFIG in routes")
    add_acl_arguments(parser)
    add_limit_arguments(parser)
    parser.add_argument(
        "--broker-host-alias",
        action="append",
        default=[],
        metavar="PEER=BROKER",
        type=_host_alias,
        help="let registrations connecting from PEER name broker host BROKER (a broker behind NAT); repeatable",
    )
    parser.add_argument(
        "--strict-route-writes",
        action="store_true",
        help="without the ACL, refuse wipe/add write perm, route deletes and KV writes from peers on this "
        "machine too, unless over the connection that registered the broker",
    )
    add_tls_arguments(parser)
    add_metrics_arguments(parser)
    parser.add_argument("--log-level", default="INFO")
    return parser.parse_args(argv)


async def serve(
    config: NamesrvConfig, stop: asyncio.Event | None = None, metrics: MetricsEndpoint | None = None
) -> None:
    """Run a name server (and its ``/metrics`` when ``metrics`` is given) until ``stop`` is set or SIGINT/SIGTERM arrives."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    installed = stop_on_signals(stop)
    controller = NamesrvController(config)
    await controller.start()
    metrics_server = None
    if metrics is not None:
        from brokers.engine.metrics.metrics_endpoint import MetricsServer
        from brokers.engine.metrics.namesrv_collector import NamesrvCollector

        try:
            metrics_server = MetricsServer(metrics, NamesrvCollector(controller, loop))
        except MetricsConfigError:
            await controller.stop()
            raise
        print(f"namesrv metrics at {metrics.url}", flush=True)
    freeze_startup_heap()  # full collections then skip start-up's objects (gc_freeze.py)
    print(f"namesrv ready on {config.host}:{controller.port}", flush=True)
    try:
        await stop.wait()
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
        if metrics_server is not None:
            metrics_server.close()
        await controller.stop()
        print("namesrv stopped", flush=True)


def main(argv: list[str]) -> int:
    """Entry point of ``python -m brokers.engine namesrv``; returns the exit status."""
    args = _parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        tls = tls_config_from_args(args)
        metrics = metrics_endpoint_from_args(args)
        event_loop.kind()
    except (TlsConfigError, MetricsConfigError, ValueError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 2
    config = NamesrvConfig(
        host=args.host,
        port=args.port,
        scan_not_active_broker_interval_s=args.scan_interval,
        broker_channel_expired_s=args.expire,
        idle_close_s=args.idle_close,
        kv_config_path=args.kv_config,
        order_message_enable=args.order_message_enable,
        acl_file=os.path.abspath(args.acl_file) if args.acl_file else None,
        acl_disabled=args.no_acl,
        limits=limits_from_args(args),
        broker_host_aliases=tuple(args.broker_host_alias),
        loopback_route_writes=not args.strict_route_writes,
        tls=tls,
    )
    try:
        event_loop.run(serve(config, metrics=metrics))
    except MetricsConfigError as exc:
        print(f"namesrv failed to start: {exc}", file=sys.stderr, flush=True)
        return 1
    except AclConfigError as exc:
        print(f"namesrv refuses to start on {config.host}:{config.port}: {exc}", file=sys.stderr, flush=True)
        return 1
    except OSError as exc:
        print(f"namesrv failed to start on {config.host}:{config.port}: {exc}", file=sys.stderr, flush=True)
        return 1
    except KeyboardInterrupt:
        pass
    return 0
