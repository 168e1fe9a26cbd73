"""``python manage.py run_cluster``: the embedded composite — one name server, its brokers and their slaves.

``--broker NAME:PORT`` adds a broker group's master (brokerId 0); ``--slave NAME:PORT`` adds a slave
to the group NAME (repeatable: ids 1, 2, ... in the order given; NAME must be a ``--broker``). A
master with a slave runs SYNC_MASTER (synchronous double write, the seeds' recommended deployment),
one without ASYNC_MASTER; ``--role NAME=ASYNC_MASTER|SYNC_MASTER`` says otherwise. Every broker also
listens on its port + 1 for replication (RocketMQ's haListenPort default), so ports must leave that
free. Slaves learn their master's HA address from the name server, as RocketMQ's do.

The flags become a spec of the engine's cluster harness (``brokers/engine/cluster``), which assembles
and stops the servers. All run in one asyncio loop in this process; each master keeps its store under
``<store-dir>/<broker-name>``, a slave under ``<store-dir>/<broker-name>-s<id>``, the name server its
KV config under ``<store-dir>/namesrv``. A line containing ``ready`` (with every address) is printed
once every server listens, every broker (slaves too) is registered and every slave is connected to its master. SIGINT or SIGTERM stops the
groups in reverse order, each group's slaves before its master (flush, abort file removed), then the
name server, and the command exits 0.

``--acl-file PATH`` (RocketMQ's plain_acl.yml) turns the ACL on in every server: each checks every
request and re-reads the file when it changes, and the brokers sign their registrations with the
file's first admin account. On a non-loopback ``--host`` the command refuses to start without an
ACL file unless ``--no-acl`` is given (logged as a warning by every server).

``--enable-property-filter`` lets every broker serve SQL92 subscriptions (``MessageSelector.bySql``;
RocketMQ's enablePropertyFilter, off by default as there); ``make run`` turns it on.

``--tls-mode permissive|enforcing`` with ``--tls-cert``, ``--tls-key`` (and ``--tls-ca``,
``--tls-client-auth``) serves TLS on every port, HA included (brokers/engine/remoting/tls.py); in
enforcing mode the brokers' own connections and the ready check speak TLS too.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import socket
from dataclasses import dataclass

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from brokers.engine import event_loop
from brokers.engine.acl.broker_credential import first_admin_account
from brokers.engine.acl.plain_acl_config import AclConfigError, load_plain_acl_file
from brokers.engine.acl.server_acl import is_loopback_host
from brokers.engine.broker.config import BrokerConfigError
from brokers.engine.broker.controller import BrokerController
from brokers.engine.client.admin import MQAdminClient
from brokers.engine.cluster import ClusterSpec, EngineCluster, GroupSpec, broker_config
from brokers.engine.common.constants import DEFAULT_CLUSTER, DEFAULT_NAMESRV_PORT
from brokers.engine.common.topic_validator import InvalidNameError, validate_broker_name
from brokers.engine.remoting.errors import RemotingError
from brokers.engine.remoting.tls import TlsConfigError, add_tls_arguments, tls_config_from_args
from brokers.engine.store.config import ASYNC_FLUSH, SYNC_FLUSH
from brokers.engine.store.errors import StoreError
from brokers.mqadmin.context import Keys
from console.file_modes import use_private_umask

DEFAULT_BROKERS = ("broker-a:10911", "broker-b:10921")  # DESIGN.md's embedded layout
MASTER_ROLES = ("ASYNC_MASTER", "SYNC_MASTER")
REGISTER_WAIT_S = 15.0  # how long to wait for every broker to appear on the name server
TLS_OPTIONS = ("tls_mode", "tls_cert", "tls_key", "tls_ca", "tls_client_auth", "tls_outgoing")
STOP_TIMEOUT_S = 20.0  # per server; a store flush of a large dirty page cache can take a while


@dataclass(frozen=True)
class BrokerSpec:
    name: str
    port: int
    broker_id: int = 0
    role: str = "ASYNC_MASTER"

    @property
    def key(self) -> str:
        """``broker-a`` for a master, ``broker-a#1`` for its first slave."""
        return self.name if self.broker_id == 0 else f"{self.name}#{self.broker_id}"

    @property
    def store_name(self) -> str:
        return self.name if self.broker_id == 0 else f"{self.name}-s{self.broker_id}"


def _name_port(flag: str, value: str) -> tuple[str, int]:
    name, sep, port_text = value.strip().rpartition(":")
    if not sep or not name or not port_text.isdigit():
        raise CommandError(f"{flag} {value!r}: expected NAME:PORT, e.g. broker-a:10911")
    try:
        validate_broker_name(name)
    except InvalidNameError as exc:
        raise CommandError(f"{flag} {value!r}: illegal broker name: {exc}") from None
    port = int(port_text)
    if not 1 <= port <= 65534:
        raise CommandError(
            f"{flag} {value!r}: port {port} is outside 1..65534 (its HA port, port + 1, must be one too)"
        )
    return name, port


def parse_roles(values: list[str]) -> dict[str, str]:
    """Parse ``NAME=ROLE`` flags (ROLE: ASYNC_MASTER or SYNC_MASTER)."""
    roles: dict[str, str] = {}
    for value in values:
        name, sep, role = value.strip().partition("=")
        if not sep or not name or role not in MASTER_ROLES:
            raise CommandError(
                f"--role {value!r}: expected NAME=ASYNC_MASTER or NAME=SYNC_MASTER, e.g. broker-a=ASYNC_MASTER"
            )
        roles[name] = role
    return roles


def parse_broker_specs(
    values: list[str], namesrv_port: int, slaves: list[str] | None = None, roles: dict[str, str] | None = None
) -> list[BrokerSpec]:
    """Parse ``--broker`` and ``--slave`` NAME:PORT flags: the masters, then the slaves (ids 1, 2, ... per
    name); CommandError for malformed, duplicate or clashing entries (a port, or the HA port + 1 of another)."""
    masters: list[tuple[str, int]] = []
    for value in values:
        name, port = _name_port("--broker", value)
        if any(n == name for n, _ in masters):
            raise CommandError(f"--broker {value!r}: broker name {name!r} given twice")
        masters.append((name, port))
    names = [n for n, _ in masters]
    slave_specs: list[tuple[str, int, int]] = []
    for value in slaves or ():
        name, port = _name_port("--slave", value)
        if name not in names:
            raise CommandError(f"--slave {value!r}: no --broker {name}: a slave replicates a master of the same name")
        slave_specs.append((name, port, 1 + sum(1 for n, _, _ in slave_specs if n == name)))
    roles = roles or {}
    for name in roles:
        if name not in names:
            raise CommandError(f"--role {name}={roles[name]}: no --broker {name}")
    with_slaves = {n for n, _, _ in slave_specs}
    specs = [
        BrokerSpec(n, p, 0, roles.get(n, "SYNC_MASTER" if n in with_slaves else "ASYNC_MASTER")) for n, p in masters
    ]
    specs += [BrokerSpec(n, p, bid, "SLAVE") for n, p, bid in slave_specs]
    used: dict[int, str] = {namesrv_port: "the name server"}
    for spec in specs:
        flag = "--broker" if spec.broker_id == 0 else "--slave"
        for port, what in ((spec.port, spec.key), (spec.port + 1, f"{spec.key}'s HA port")):
            if port in used:
                raise CommandError(
                    f"{flag} {spec.name}:{spec.port}: port {port} ({what}) is used twice (also {used[port]}); "
                    "every broker needs its port and port + 1"
                )
            used[port] = what
    return specs


def cluster_spec(
    specs: list[BrokerSpec],
    *,
    store_root: str,
    host: str,
    namesrv_port: int,
    cluster: str,
    flush_type: str,
    shared: dict[str, object],
    enable_property_filter: bool,
    grpc_ports: dict[str, int],
) -> ClusterSpec:
    """The engine's cluster spec of the parsed flags: one group per ``--broker``, its ``--slave``s in id
    order; ``shared`` settings (ACL, TLS) for every server, the gRPC ports for the masters."""
    groups = []
    for master in (s for s in specs if s.broker_id == 0):
        slaves = sorted((s for s in specs if s.name == master.name and s.broker_id), key=lambda s: s.broker_id)
        groups.append(
            GroupSpec(
                master.name,
                slaves=len(slaves),
                role=master.role,
                ports=(master.port, *(s.port for s in slaves)),
                member_overrides={0: {"grpc_port": grpc_ports[master.key]}} if master.key in grpc_ports else {},
            )
        )
    return ClusterSpec(
        store_root,
        groups=tuple(groups),
        cluster_name=cluster,
        host=host,
        namesrv_ports=(namesrv_port,),
        keep_kv_config=True,  # <store-dir>/namesrv/kvConfig.json
        broker_overrides={**shared, "enable_property_filter": enable_property_filter},
        store_overrides={"flush_disk_type": flush_type},
        namesrv_overrides=shared,
    )


def _describe(controller: BrokerController) -> str:
    """A broker in the ready line: ``broker-a 127.0.0.1:10911 (DefaultCluster, SYNC_MASTER)``, a slave as
    ``broker-a#1 127.0.0.1:10915 (DefaultCluster, SLAVE of broker-a)``, a lone ASYNC_MASTER as before."""
    cfg = controller.config
    if cfg.broker_id:
        return f"{cfg.broker_name}#{cfg.broker_id} {controller.addr} ({cfg.cluster_name}, SLAVE of {cfg.broker_name})"
    role = "" if cfg.broker_role == "ASYNC_MASTER" else f", {cfg.broker_role}"
    grpc = f", 5.x gRPC {controller.grpc_addr}" if controller.grpc_addr else ""
    return f"{cfg.broker_name} {controller.addr} ({cfg.cluster_name}{role}{grpc})"


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
        parser.add_argument(
            "--store-dir", default=None, help="root of the brokers' stores (default: settings.MQ STORE_DIR)"
        )
        parser.add_argument(
            "--namesrv-port", type=int, default=DEFAULT_NAMESRV_PORT, help="name server port (default 9876)"
        )
        parser.add_argument(
            "--broker",
            action="append",
            default=None,
            metavar="NAME:PORT",
            help=f"a broker group's master, repeatable (default {' '.join(DEFAULT_BROKERS)}); it also listens on PORT + 1 (HA)",
        )
        parser.add_argument(
            "--slave",
            action="append",
            default=None,
            metavar="NAME:PORT",
            help="a slave of the --broker NAME, repeatable (brokerId 1, 2, ... in order); it also listens on PORT + 1",
        )
        parser.add_argument(
            "--role",
            action="append",
            default=None,
            metavar="NAME=ROLE",
            help="a master's role, ASYNC_MASTER or SYNC_MASTER (default: SYNC_MASTER with a slave, else ASYNC_MASTER)",
        )
        parser.add_argument("--cluster", default=DEFAULT_CLUSTER, help=f"cluster name (default {DEFAULT_CLUSTER})")
        parser.add_argument(
            "--flush",
            choices=["sync", "async"],
            default=None,
            help="disk flush: sync (group commit) or async (default: settings.MQ FLUSH_DISK_TYPE)",
        )
        parser.add_argument(
            "--host", default="127.0.0.1", help="address to listen on and advertise (default 127.0.0.1)"
        )
        parser.add_argument(
            "--acl-file",
            default=None,
            metavar="PATH",
            help="RocketMQ plain_acl.yml for every server (re-read when it changes); required on a non-loopback --host",
        )
        parser.add_argument(
            "--no-acl", action="store_true", help="listen on a non-loopback --host without an ACL (a warning)"
        )
        parser.add_argument(
            "--enable-property-filter",
            action="store_true",
            help="every broker serves SQL92 subscriptions (RocketMQ's enablePropertyFilter; default off)",
        )
        parser.add_argument(
            "--grpc-port",
            type=int,
            default=None,
            metavar="PORT",
            help="serve RocketMQ 5.x gRPC clients: the first master on PORT, the next on PORT + 1, ... "
            "(slaves have none: 5.x clients consume from masters; default: off)",
        )
        add_tls_arguments(parser)

    def handle(
        self,
        *args,
        store_dir: str | None,
        namesrv_port: int,
        broker: list[str] | None,
        cluster: str,
        flush: str | None,
        host: str,
        slave: list[str] | None = None,
        role: list[str] | None = None,
        acl_file: str | None = None,
        no_acl: bool = False,
        enable_property_filter: bool = False,
        **options,
    ) -> None:
        store_root = os.path.abspath(store_dir or settings.MQ["STORE_DIR"])
        use_private_umask()  # store directories 0700 and their files 0600, now and later
        if not 1 <= namesrv_port <= 65535:
            raise CommandError(f"--namesrv-port {namesrv_port} is outside 1..65535")
        try:
            validate_broker_name(cluster, "cluster")
        except InvalidNameError as exc:
            raise CommandError(f"--cluster: illegal cluster name: {exc}") from None
        specs = parse_broker_specs(broker or list(DEFAULT_BROKERS), namesrv_port, slave or [], parse_roles(role or []))
        flush_type = {"sync": SYNC_FLUSH, "async": ASYNC_FLUSH}.get(
            flush or "", settings.MQ.get("FLUSH_DISK_TYPE", ASYNC_FLUSH)
        )
        acl_file = os.path.abspath(acl_file) if acl_file else None
        self._signer_keys = self._check_acl(host, acl_file, no_acl)
        try:
            self._tls = tls_config_from_args(argparse.Namespace(**{k: options.get(k) for k in TLS_OPTIONS}))
        except TlsConfigError as exc:
            raise CommandError(str(exc)) from None
        grpc_ports = self._grpc_ports(options.get("grpc_port"), specs)
        for name, port in grpc_ports.items():
            check_port_free(host, port, f"broker {name} (gRPC)")
        check_port_free(host, namesrv_port, "name server")
        for spec in specs:
            check_port_free(host, spec.port, f"broker {spec.key}")
            check_port_free(host, spec.port + 1, f"broker {spec.key} (HA)")
        try:
            os.makedirs(store_root, exist_ok=True)
        except OSError as exc:
            raise CommandError(f"--store-dir {store_root}: {exc}") from None
        try:
            layout = cluster_spec(
                specs,
                store_root=store_root,
                host=host,
                namesrv_port=namesrv_port,
                cluster=cluster,
                flush_type=flush_type,
                shared={
                    "acl_file": acl_file,
                    "acl_disabled": no_acl,
                    "tls": self._tls,
                },
                enable_property_filter=enable_property_filter,
                grpc_ports=grpc_ports,
            )
            for member in layout.members():  # every config checked before anything listens
                broker_config(layout, member, (f"{host}:{namesrv_port}",))
            event_loop.kind()
        except (BrokerConfigError, ValueError, ImportError) as exc:
            raise CommandError(str(exc)) from None
        event_loop.run(self._serve(layout))

    @staticmethod
    def _grpc_ports(first: int | None, specs) -> dict[str, int]:
        """Broker key -> its gRPC port: the masters in order from ``first``; none without it."""
        if first is None:
            return {}
        masters = [spec for spec in specs if spec.broker_id == 0]
        if not 1 <= first <= 65535 - len(masters) + 1:
            raise CommandError(f"--grpc-port {first} is outside 1..{65535 - len(masters) + 1}")
        return {spec.key: first + i for i, spec in enumerate(masters)}

    @staticmethod
    def _check_acl(host: str, acl_file: str | None, no_acl: bool) -> Keys:
        """Fail before anything listens on a bad ACL choice; the keys the ready check signs with."""
        if acl_file and no_acl:
            raise CommandError("give either --acl-file or --no-acl, not both")
        if not acl_file:
            if not no_acl and not is_loopback_host(host):
                raise CommandError(
                    f"--host {host} is not loopback: give --acl-file PATH (RocketMQ's plain_acl.yml), "
                    "or --no-acl to accept requests from anyone on the network"
                )
            return {"access_key": None, "secret_key": None}
        try:
            admin = first_admin_account(load_plain_acl_file(acl_file))
        except AclConfigError as exc:
            raise CommandError(f"--acl-file: {exc}") from None
        if admin is None:
            raise CommandError(f"--acl-file {acl_file}: no account has admin: true, so the brokers cannot register")
        return {"access_key": admin.access_key, "secret_key": admin.secret_key}

    async def _serve(self, spec: ClusterSpec) -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        harness = EngineCluster(spec)
        try:
            try:
                await harness.start()
            except (OSError, RuntimeError, ValueError, StoreError) as exc:
                raise CommandError(f"the cluster failed to start: {exc}") from None
            await self._wait_registered(harness, stop)
            if not stop.is_set():
                parts = [f"namesrv {harness.namesrv_addr}"] + [_describe(c) for c in harness.brokers.values()]
                self.stdout.write("cluster ready: " + "; ".join(parts))
                self.stdout.flush()
                await stop.wait()
            self.stdout.write("stopping the cluster")
            self.stdout.flush()
        finally:
            # a second signal meanwhile is ignored; a server that does not stop is reported, the others still stop
            await harness.stop(
                timeout_s=STOP_TIMEOUT_S,
                on_error=lambda what, exc: self.stderr.write(f"{what} did not stop cleanly: {exc!r}"),
            )
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
        self.stdout.write("cluster stopped")
        self.stdout.flush()

    async def _wait_registered(self, harness: EngineCluster, stop: asyncio.Event) -> None:
        """Wait until the name server lists every broker under its id (they register while starting) and every
        slave is connected to its master (so a SYNC_MASTER's first sends are not SLAVE_NOT_AVAILABLE)."""
        members = [(c.config.broker_name, c.config.broker_id) for c in harness.brokers.values()]
        deadline = asyncio.get_running_loop().time() + REGISTER_WAIT_S
        async with MQAdminClient(harness.namesrv_addr, timeout_s=2.0, tls=self._tls, **self._signer_keys) as admin:
            while not stop.is_set():
                try:
                    info = await admin.examine_broker_cluster_info()
                    if (
                        all(bid in getattr(info.broker_datas.get(name), "broker_addrs", {}) for name, bid in members)
                        and not harness.masters_missing_slaves()
                    ):
                        return
                except RemotingError:
                    pass
                if asyncio.get_running_loop().time() > deadline:
                    raise CommandError(
                        f"brokers did not register with the name server (and slaves connect) within {REGISTER_WAIT_S:.0f}s"
                    )
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(stop.wait(), 0.1)
