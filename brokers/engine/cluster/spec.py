"""A cluster as data: name servers, broker groups (a master and 0..n slaves) and per-broker settings.

:class:`ClusterSpec` says what to run; :func:`broker_config` and :func:`namesrv_config` turn one
member of it into the frozen config its controller starts from. Both run modes of the harness
(in-process, ``harness.py``; subprocesses, ``processes.py``) and ``python -m brokers.engine member``
build their configs here, so a spec means the same thing wherever it runs.

Layout under ``root`` (RocketMQ's one-store-per-broker): a master's store in ``<root>/<broker-name>``,
a slave's in ``<root>/<broker-name>-s<id>``, the first name server's KV config (when kept) in
``<root>/namesrv/kvConfig.json``, the next ones' in ``<root>/namesrv-<i>/``. A member's key is its broker name for a master and
``<broker-name>#<id>`` for a slave. Port 0 is an ephemeral port (HA and gRPC too).

A spec is plain data: JSON round-trips it (:meth:`ClusterSpec.to_json`), so a subprocess runs the
same spec. Overrides may give ``store``, ``tls`` and ``limits`` as dicts of their fields or as the
frozen configs themselves (``store=StoreConfig(...)``), which go to JSON as such dicts; a value JSON
cannot hold (a path object, a clock) is fine in-process and refused for a subprocess.

Two settings apply to the subprocesses only (``member.py``): ``metrics``, a member's ``/metrics``
endpoint by key (``namesrv-<i>`` or a broker's key: ``{"port": 9100, "host": "127.0.0.1",
"token_file": PATH, "token": TOKEN}``, as the ``--metrics-*`` flags), and ``event_loop`` (``uvloop``
or ``asyncio``; empty: ``GANTRY_EVENT_LOOP`` of the environment, as ``event_loop.py`` says).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from brokers.engine.broker.config import BrokerConfig
from brokers.engine.common.constants import DEFAULT_CLUSTER
from brokers.engine.namesrv.server import NamesrvConfig
from brokers.engine.remoting.limits import ConnectionLimits
from brokers.engine.remoting.tls import TlsConfig
from brokers.engine.store.config import StoreConfig

MASTER_ROLES = ("ASYNC_MASTER", "SYNC_MASTER")
SLAVE_ROLE = "SLAVE"
# Fields the spec sets itself; an override naming one would contradict the spec's structure.
_STRUCTURAL = ("broker_name", "broker_id", "namesrv_addrs")
# Nested frozen configs an override may give as a dict of their fields.
_NESTED: dict[str, type[Any]] = {"tls": TlsConfig, "limits": ConnectionLimits}
# A member's /metrics endpoint: the --metrics-* flags' names, the values' types.
METRICS_FIELDS: dict[str, type[Any]] = {"port": int, "host": str, "token_file": str, "token": str}
EVENT_LOOPS = ("", "uvloop", "asyncio")


class ClusterSpecError(ValueError):
    """A cluster spec is malformed; the message names the field."""


def _field_names(cls: type[Any]) -> frozenset[str]:
    return frozenset(f.name for f in dataclasses.fields(cls))


def _check_fields(where: str, values: Mapping[str, Any], cls: type[Any]) -> None:
    unknown = sorted(set(values) - _field_names(cls))
    if unknown:
        raise ClusterSpecError(f"{where}: unknown {cls.__name__} field(s) {', '.join(unknown)}")


def _check_port(where: str, port: int) -> None:
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ClusterSpecError(f"{where}: port {port!r} is outside 0..65535")


@dataclass(frozen=True)
class GroupSpec:
    """A broker group: its master (brokerId 0) and ``slaves`` slaves (ids 1..n).

    ``role`` is the master's brokerRole (default: SYNC_MASTER with slaves, ASYNC_MASTER without);
    ``ports`` the members' listen ports, master first (missing ones are 0); ``overrides``
    BrokerConfig fields for every member, ``member_overrides`` per broker id on top of them.
    """

    name: str
    slaves: int = 0
    role: str | None = None
    ports: tuple[int, ...] = ()
    overrides: Mapping[str, Any] = field(default_factory=dict)
    member_overrides: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        where = f"group {self.name!r}"
        if isinstance(self.slaves, bool) or not isinstance(self.slaves, int) or self.slaves < 0:
            raise ClusterSpecError(f"{where}: slaves must be a count >= 0, got {self.slaves!r}")
        if self.role is not None and self.role not in MASTER_ROLES:
            raise ClusterSpecError(f"{where}: role must be one of {', '.join(MASTER_ROLES)}, got {self.role!r}")
        if len(self.ports) > self.slaves + 1:
            raise ClusterSpecError(f"{where}: ports names {len(self.ports)} ports for {self.slaves + 1} members")
        for port in self.ports:
            _check_port(f"{where} ports", port)
        for broker_id in self.member_overrides:
            if not 0 <= int(broker_id) <= self.slaves:
                raise ClusterSpecError(
                    f"{where}: member_overrides names broker id {broker_id}, outside 0..{self.slaves}"
                )

    @property
    def master_role(self) -> str:
        return self.role or ("SYNC_MASTER" if self.slaves else "ASYNC_MASTER")

    def members(self) -> list[BrokerSpec]:
        """The master, then the slaves in id order."""
        out = []
        for broker_id in range(self.slaves + 1):
            overrides = {**self.overrides, **self.member_overrides.get(broker_id, {})}
            out.append(
                BrokerSpec(
                    key=member_key(self.name, broker_id),
                    broker_name=self.name,
                    broker_id=broker_id,
                    role=self.master_role if broker_id == 0 else SLAVE_ROLE,
                    port=self.ports[broker_id] if broker_id < len(self.ports) else 0,
                    overrides=overrides,
                )
            )
        return out


@dataclass(frozen=True)
class BrokerSpec:
    """One broker of a spec: its key, name, id, role, listen port and BrokerConfig overrides."""

    key: str
    broker_name: str
    broker_id: int = 0
    role: str = "ASYNC_MASTER"
    port: int = 0
    overrides: Mapping[str, Any] = field(default_factory=dict)

    @property
    def store_name(self) -> str:
        """``broker-a`` for a master, ``broker-a-s1`` for its first slave; an ad-hoc key as given."""
        return self.key.replace("#", "-s")

    @property
    def is_slave(self) -> bool:
        return self.broker_id > 0


def member_key(broker_name: str, broker_id: int) -> str:
    """``broker-a`` for a master, ``broker-a#1`` for its first slave."""
    return broker_name if broker_id == 0 else f"{broker_name}#{broker_id}"


@dataclass(frozen=True)
class ClusterSpec:
    """What to run: ``namesrvs`` name servers (or none, with ``namesrv_addrs`` of servers run elsewhere)
    and broker ``groups``, stores under ``root``, listening on ``host``.

    ``broker_overrides`` (BrokerConfig fields) and ``store_overrides`` (StoreConfig fields) apply to
    every broker under the group's and member's own; ``namesrv_overrides`` (NamesrvConfig fields) to
    every name server; ``keep_kv_config`` keeps each name server's KV config under the root.
    """

    root: str
    groups: tuple[GroupSpec, ...] = (GroupSpec("broker-a"),)
    cluster_name: str = DEFAULT_CLUSTER
    host: str = "127.0.0.1"
    namesrvs: int = 1
    namesrv_ports: tuple[int, ...] = ()
    namesrv_addrs: tuple[str, ...] = ()
    keep_kv_config: bool = False
    broker_overrides: Mapping[str, Any] = field(default_factory=dict)
    store_overrides: Mapping[str, Any] = field(default_factory=dict)
    namesrv_overrides: Mapping[str, Any] = field(default_factory=dict)
    metrics: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    event_loop: str = ""

    def __post_init__(self) -> None:
        if not self.root:
            raise ClusterSpecError("root: a directory for the stores is required")
        if isinstance(self.namesrvs, bool) or not isinstance(self.namesrvs, int) or self.namesrvs < 0:
            raise ClusterSpecError(f"namesrvs must be a count >= 0, got {self.namesrvs!r}")
        if self.namesrvs and self.namesrv_addrs:
            raise ClusterSpecError("namesrv_addrs: give name servers of elsewhere only with namesrvs=0")
        if len(self.namesrv_ports) > self.namesrvs:
            raise ClusterSpecError(
                f"namesrv_ports names {len(self.namesrv_ports)} ports for {self.namesrvs} name servers"
            )
        for port in self.namesrv_ports:
            _check_port("namesrv_ports", port)
        names = [g.name for g in self.groups]
        for name in names:
            if names.count(name) > 1:
                raise ClusterSpecError(f"groups: broker name {name!r} given twice")
        for where, values in [("broker_overrides", self.broker_overrides)] + [
            (f"group {g.name!r} overrides", {**g.overrides, **o})
            for g in self.groups
            for o in (*g.member_overrides.values(), {})
        ]:
            check_broker_overrides(where, values)
        _check_fields("store_overrides", self.store_overrides, StoreConfig)
        _check_fields("namesrv_overrides", self.namesrv_overrides, NamesrvConfig)
        if self.event_loop not in EVENT_LOOPS:
            raise ClusterSpecError(f"event_loop must be 'uvloop', 'asyncio' or empty, got {self.event_loop!r}")
        keys = {f"namesrv-{i}" for i in range(self.namesrvs)} | {m.key for m in self.members()}
        for key, settings in self.metrics.items():
            _check_metrics(key, settings, keys)

    def members(self) -> list[BrokerSpec]:
        """Every broker: each group's master, then its slaves, group by group."""
        return [m for g in self.groups for m in g.members()]

    def member(self, key: str) -> BrokerSpec:
        for m in self.members():
            if m.key == key:
                return m
        raise ClusterSpecError(f"no broker {key!r} in the spec (brokers: {', '.join(m.key for m in self.members())})")

    def store_dir(self, member: BrokerSpec) -> str:
        return os.path.join(self.root, member.store_name)

    # -- JSON: the same spec in a subprocess ------------------------------------------------------

    def to_json(self) -> str:
        """The spec as JSON; raises ClusterSpecError for an override that is not plain data."""
        try:
            return json.dumps(dataclasses.asdict(self))
        except TypeError as exc:
            raise ClusterSpecError(f"the spec does not go to JSON (give nested settings as dicts): {exc}") from None

    @classmethod
    def from_json(cls, text: str) -> ClusterSpec:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ClusterSpecError("a cluster spec is a JSON object")
        groups = tuple(
            GroupSpec(
                **{
                    **g,
                    "ports": tuple(g.get("ports", ())),
                    "member_overrides": {int(k): v for k, v in g.get("member_overrides", {}).items()},
                }
            )
            for g in data.pop("groups", ())
        )
        for name in ("namesrv_ports", "namesrv_addrs"):
            data[name] = tuple(data.get(name, ()))
        _check_fields("cluster spec", data, cls)
        return cls(**data, groups=groups)


def _check_metrics(key: str, settings: Mapping[str, Any], keys: set[str]) -> None:
    where = f"metrics[{key!r}]"
    if key not in keys:
        raise ClusterSpecError(f"{where}: no member {key!r} in the spec (members: {', '.join(sorted(keys))})")
    if not isinstance(settings, Mapping):
        raise ClusterSpecError(f"{where}: a mapping of {', '.join(METRICS_FIELDS)}")
    unknown = sorted(set(settings) - set(METRICS_FIELDS))
    if unknown:
        raise ClusterSpecError(f"{where}: unknown field(s) {', '.join(unknown)} (known: {', '.join(METRICS_FIELDS)})")
    if "port" not in settings:
        raise ClusterSpecError(f"{where}.port: required")
    for name, value in settings.items():
        wanted = METRICS_FIELDS[name]
        if value is not None and (isinstance(value, bool) or not isinstance(value, wanted)):
            raise ClusterSpecError(f"{where}.{name}: expected {wanted.__name__}, got {value!r}")
    port = settings["port"]
    if not isinstance(port, int) or not 1 <= port <= 65535:
        raise ClusterSpecError(f"{where}.port: {port!r} is outside 1..65535")


def check_broker_overrides(where: str, overrides: Mapping[str, Any]) -> None:
    """Refuse names BrokerConfig does not have, and the ones the spec's structure sets."""
    _check_fields(where, overrides, BrokerConfig)
    fixed = sorted(set(overrides) & set(_STRUCTURAL))
    if fixed:
        raise ClusterSpecError(f"{where}: {', '.join(fixed)} come from the spec's groups, not from overrides")


def broker_config(
    spec: ClusterSpec, member: BrokerSpec, namesrv_addrs: tuple[str, ...], /, **extra: Any
) -> BrokerConfig:
    """The BrokerConfig of ``member``: the spec's layout, then the spec's, the member's and ``extra`` overrides.

    ``extra`` may also set ``broker_name``/``broker_id``/``namesrv_addrs`` (a test's ad-hoc broker).
    """
    _check_fields(f"broker {member.key}", extra, BrokerConfig)
    fields: dict[str, Any] = {
        "broker_name": member.broker_name,
        "broker_id": member.broker_id,
        "broker_role": member.role,
        "cluster_name": spec.cluster_name,
        "listen_host": spec.host,
        "listen_port": member.port,
        "namesrv_addrs": namesrv_addrs,
    }
    fields.update(spec.broker_overrides)
    fields.update(member.overrides)
    fields.update(extra)
    store = fields.pop("store", None)
    if not isinstance(store, StoreConfig):
        store_fields: dict[str, Any] = {"store_dir": spec.store_dir(member)}  # store_host: the controller's address
        store_fields.update(spec.store_overrides)
        store_fields.update(store or {})
        _check_fields(f"broker {member.key} store", store_fields, StoreConfig)
        store = StoreConfig(**store_fields)
    for name, cls in _NESTED.items():
        if isinstance(fields.get(name), Mapping):
            _check_fields(f"broker {member.key} {name}", fields[name], cls)
            fields[name] = cls(**fields[name])
    return BrokerConfig(store=store, **fields)


def namesrv_config(spec: ClusterSpec, index: int, port: int | None = None) -> NamesrvConfig:
    """Name server ``index`` of the spec (``port`` overrides its spec port: a restart on the bound one)."""
    if not 0 <= index < spec.namesrvs:
        raise ClusterSpecError(f"no name server {index} in the spec (it has {spec.namesrvs})")
    fields: dict[str, Any] = {
        "host": spec.host,
        "port": port if port is not None else (spec.namesrv_ports[index] if index < len(spec.namesrv_ports) else 0),
    }
    if spec.keep_kv_config:
        fields["kv_config_path"] = os.path.join(spec.root, f"namesrv-{index}" if index else "namesrv", "kvConfig.json")
    fields.update(spec.namesrv_overrides)
    for name, cls in _NESTED.items():
        if isinstance(fields.get(name), Mapping):
            fields[name] = cls(**fields[name])
    return NamesrvConfig(**fields)
