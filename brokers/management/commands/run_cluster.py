"""``python manage.py run_cluster``: the embedded composite — one name server and its brokers.

All servers run in one asyncio loop in this process; each broker keeps its store under
``<store-dir>/<broker-name>``, the name server its KV config under ``<store-dir>/namesrv``.
A line containing ``ready`` (with every address) is printed once every server listens and every
broker is registered. SIGINT or SIGTERM stops the brokers first (flush, abort file removed),
then the name server, and the command exits 0.

``--acl-file PATH`` (RocketMQ's plain_acl.yml) turns the ACL on in every server: each checks every
request and re-reads the file when it changes, and the brokers sign their registrations with the
file's first admin account. On a non-loopback ``--host`` the command refuses to start without an
ACL file unless ``--no-acl`` is given (logged as a warning by every server).
"""
from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
from dataclasses import dataclass

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from brokers.engine.acl.broker_credential import first_admin_account
from brokers.engine.acl.plain_acl_config import AclConfigError, load_plain_acl_file
from brokers.engine.acl.server_acl import is_loopback_host
from brokers.engine.broker.config import BrokerConfig, BrokerConfigError
from brokers.engine.broker.controller import BrokerController
from brokers.engine.client.admin import MQAdminClient
from brokers.engine.common.constants import DEFAULT_CLUSTER, DEFAULT_NAMESRV_PORT
from brokers.engine.common.topic_validator import InvalidNameError, validate_topic
from brokers.engine.namesrv.server import NamesrvConfig, NamesrvController
from brokers.engine.remoting.errors import RemotingError
from brokers.engine.store.config import ASYNC_FLUSH, SYNC_FLUSH, StoreConfig
from brokers.engine.store.errors import StoreError

DEFAULT_BROKERS = ("broker-a:10911", "broker-b:10921")  # DESIGN.md's embedded layout
REGISTER_WAIT_S = 15.0  # how long to wait for every broker to appear on the name server
STOP_TIMEOUT_S = 20.0  # per server; a store flush of a large dirty page cache can take a while


@dataclass(frozen=True)
class BrokerSpec:
    name: str
    port: int


def parse_broker_specs(values: list[str], namesrv_port: int) -> list[BrokerSpec]:
    """Parse ``NAME:PORT`` flags; CommandError for malformed, duplicate or clashing entries."""
    specs: list[BrokerSpec] = []
    for value in values:
        name, sep, port_text = value.strip().rpartition(":")
        if not sep or not name or not port_text.isdigit():
            raise CommandError(f"--broker {value!r}: expected NAME:PORT, e.g. broker-a:10911")
        try:
            validate_topic(name)  # a broker name becomes a topic name (RocketMQ registers it as one)
        except InvalidNameError as exc:
            raise CommandError(f"--broker {value!r}: illegal broker name: {exc}") from None
        port = int(port_text)
        if not 1 <= port <= 65535:
            raise CommandError(f"--broker {value!r}: port {port} is outside 1..65535")
        if any(s.name == name for s in specs):
            raise CommandError(f"--broker {value!r}: broker name {name!r} given twice")
        if any(s.port == port for s in specs) or port == namesrv_port:
            raise CommandError(f"--broker {value!r}: port {port} is used twice")
        specs.append(BrokerSpec(name, port))
    return specs


def check_port_free(host: str, port: int, what: str) -> None:
    """Fail early, with the server named, when something already listens on the port."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            raise CommandError(f"{what}: cannot listen on {host}:{port}: {exc.strerror or exc}") from None


class Command(BaseCommand):
    help = "Run one name server and brokers (the embedded cluster) in this process until SIGINT/SIGTERM."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--store-dir", default=None, help="root of the brokers' stores (default: settings.MQ STORE_DIR)")
        parser.add_argument("--namesrv-port", type=int, default=DEFAULT_NAMESRV_PORT, help="name server port (default 9876)")
        parser.add_argument("--broker", action="append", default=None, metavar="NAME:PORT",
                            help=f"a broker, repeatable (default {' '.join(DEFAULT_BROKERS)})")
        parser.add_argument("--cluster", default=DEFAULT_CLUSTER, help=f"cluster name (default {DEFAULT_CLUSTER})")
        parser.add_argument("--flush", choices=["sync", "async"], default=None,
                            help="disk flush: sync (group commit) or async (default: settings.MQ FLUSH_DISK_TYPE)")
        parser.add_argument("--host", default="127.0.0.1", help="address to listen on and advertise (default 127.0.0.1)")
        parser.add_argument("--acl-file", default=None, metavar="PATH",
                            help="RocketMQ plain_acl.yml for every server (re-read when it changes); required on a non-loopback --host")
        parser.add_argument("--no-acl", action="store_true", help="listen on a non-loopback --host without an ACL (a warning)")

    def handle(self, *args, store_dir: str | None, namesrv_port: int, broker: list[str] | None, cluster: str,
               flush: str | None, host: str, acl_file: str | None = None, no_acl: bool = False, **options) -> None:
        store_root = os.path.abspath(store_dir or settings.MQ["STORE_DIR"])
        if not 1 <= namesrv_port <= 65535:
            raise CommandError(f"--namesrv-port {namesrv_port} is outside 1..65535")
        try:
            validate_topic(cluster)
        except InvalidNameError as exc:
            raise CommandError(f"--cluster: illegal cluster name: {exc}") from None
        specs = parse_broker_specs(broker or list(DEFAULT_BROKERS), namesrv_port)
        flush_type = {"sync": SYNC_FLUSH, "async": ASYNC_FLUSH}.get(flush or "", settings.MQ.get("FLUSH_DISK_TYPE", ASYNC_FLUSH))
        acl_file = os.path.abspath(acl_file) if acl_file else None
        self._signer_keys = self._check_acl(host, acl_file, no_acl)
        check_port_free(host, namesrv_port, "name server")
        for spec in specs:
            check_port_free(host, spec.port, f"broker {spec.name}")
        try:
            os.makedirs(store_root, exist_ok=True)
        except OSError as exc:
            raise CommandError(f"--store-dir {store_root}: {exc}") from None
        namesrv_config = NamesrvConfig(host=host, port=namesrv_port, kv_config_path=os.path.join(store_root, "namesrv", "kvConfig.json"),
                                       acl_file=acl_file, acl_disabled=no_acl)
        namesrv_addr = f"{host}:{namesrv_port}"
        try:
            broker_configs = [
                BrokerConfig(
                    broker_name=spec.name,
                    cluster_name=cluster,
                    listen_host=host,
                    listen_port=spec.port,
                    namesrv_addrs=(namesrv_addr,),
                    store=StoreConfig(store_dir=os.path.join(store_root, spec.name), flush_disk_type=flush_type, store_host=f"{host}:{spec.port}"),
                    acl_file=acl_file,
                    acl_disabled=no_acl,
                )
                for spec in specs
            ]
        except (BrokerConfigError, ValueError) as exc:
            raise CommandError(str(exc)) from None
        asyncio.run(self._serve(namesrv_config, broker_configs))

    @staticmethod
    def _check_acl(host: str, acl_file: str | None, no_acl: bool) -> dict[str, str | None]:
        """Fail before anything listens on a bad ACL choice; the keys the ready check signs with."""
        if acl_file and no_acl:
            raise CommandError("give either --acl-file or --no-acl, not both")
        if not acl_file:
            if not no_acl and not is_loopback_host(host):
                raise CommandError(f"--host {host} is not loopback: give --acl-file PATH (RocketMQ's plain_acl.yml), "
                                   "or --no-acl to accept requests from anyone on the network")
            return {"access_key": None, "secret_key": None}
        try:
            admin = first_admin_account(load_plain_acl_file(acl_file))
        except AclConfigError as exc:
            raise CommandError(f"--acl-file: {exc}") from None
        if admin is None:
            raise CommandError(f"--acl-file {acl_file}: no account has admin: true, so the brokers cannot register")
        return {"access_key": admin.access_key, "secret_key": admin.secret_key}

    async def _serve(self, namesrv_config: NamesrvConfig, broker_configs: list[BrokerConfig]) -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        namesrv: NamesrvController | None = None
        brokers: list[BrokerController] = []
        try:
            try:
                namesrv = NamesrvController(namesrv_config)
                await namesrv.start()
                for config in broker_configs:
                    controller = BrokerController(config)
                    await controller.start()
                    brokers.append(controller)
            except (OSError, RuntimeError, ValueError, StoreError) as exc:
                raise CommandError(f"the cluster failed to start: {exc}") from None
            namesrv_addr = f"{namesrv_config.host}:{namesrv.port}"
            await self._wait_registered(namesrv_addr, [c.broker_name for c in broker_configs], stop)
            if not stop.is_set():
                parts = [f"namesrv {namesrv_addr}"] + [f"{c.config.broker_name} {c.addr} ({c.config.cluster_name})" for c in brokers]
                self.stdout.write("cluster ready: " + "; ".join(parts))
                self.stdout.flush()
                await stop.wait()
            self.stdout.write("stopping the cluster")
            self.stdout.flush()
        finally:
            await self._stop_all(brokers, namesrv)  # a second signal meanwhile is ignored
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
        self.stdout.write("cluster stopped")
        self.stdout.flush()

    async def _wait_registered(self, namesrv_addr: str, names: list[str], stop: asyncio.Event) -> None:
        """Wait until the name server lists every broker (they register while starting)."""
        deadline = asyncio.get_running_loop().time() + REGISTER_WAIT_S
        async with MQAdminClient(namesrv_addr, timeout_s=2.0, **self._signer_keys) as admin:
            while not stop.is_set():
                try:
                    info = await admin.examine_broker_cluster_info()
                    if set(names) <= set(info.masters()):
                        return
                except RemotingError:
                    pass
                if asyncio.get_running_loop().time() > deadline:
                    raise CommandError(f"brokers did not register with the name server within {REGISTER_WAIT_S:.0f}s")
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(stop.wait(), 0.1)

    async def _stop_all(self, brokers: list[BrokerController], namesrv: NamesrvController | None) -> None:
        for controller in reversed(brokers):
            try:
                await asyncio.wait_for(controller.stop(), STOP_TIMEOUT_S)
            except Exception as exc:  # keep stopping the others; report
                self.stderr.write(f"broker {controller.config.broker_name} did not stop cleanly: {exc!r}")
        if namesrv is None:
            return
        try:
            await asyncio.wait_for(namesrv.stop(), STOP_TIMEOUT_S)
        except Exception as exc:
            self.stderr.write(f"name server did not stop cleanly: {exc!r}")
