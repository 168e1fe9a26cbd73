"""Broker groups as the console shows them: each member's role, group epoch, HA link and replication lag.

A broker group is one broker name: the master (brokerId 0) and its slaves (brokerId >= 1). What a
member says of its replication comes from its GET_BROKER_RUNTIME_INFO table (keys named in
docs/broker-group-promotion.md, "The promotion contract"): ``brokerRole``, ``groupEpoch``,
``haConnectionState`` (a slave: CONNECTED, CONNECTING, RECONNECTING, REFUSED (why),
NO_MASTER_ADDRESS, PAUSED; a master: CONNECTED or NO_SLAVE), ``haSlaveCount``,
``haReplicationLagBytes`` / ``haReplicationLagMs`` (-1 without a link), and a slave's master
(``haMasterBrokerAddr`` or ``masterAddr``). A broker that gives none of these (an Apache RocketMQ
broker, or one before broker groups) reads as master or slave by its id, without HA figures.

:func:`ha_state` reads one table; :func:`group_members` groups rows (the overview's broker rows)
by broker name, master first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

MASTER_ID = 0
SLAVE = "SLAVE"
CONNECTED = "CONNECTED"
NO_SLAVE = "NO_SLAVE"

__all__ = ["BrokerGroup", "HAState", "GroupRow", "group_members", "ha_state"]


@dataclass(frozen=True)
class HAState:
    """One member's replication figures (None where the broker does not say)."""

    role: str  # ASYNC_MASTER, SYNC_MASTER, SLAVE (or MASTER / SLAVE by id when the broker does not say)
    epoch: int | None = None  # the group epoch recorded in its store
    connection: str = ""  # haConnectionState
    lag_bytes: int | None = None  # a slave: behind its master; a master: its best slave behind it
    lag_ms: int | None = None
    master_addr: str = ""  # a slave's master (broker address)
    slave_count: int | None = None  # a master: connected slaves

    @property
    def is_slave(self) -> bool:
        return self.role == SLAVE

    @property
    def lag_s(self) -> float | None:
        return None if self.lag_ms is None else self.lag_ms / 1000.0

    @property
    def connected(self) -> bool:
        return self.connection == CONNECTED


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except ValueError:
        return None


def _figure(value: str | None) -> int | None:
    """A lag figure: -1 (no link) and garbage read as unknown."""
    number = _int(value)
    return number if number is not None and number >= 0 else None


def ha_state(runtime: Mapping[str, str], broker_id: int) -> HAState:
    """The replication figures of one broker's runtime table."""
    role = runtime.get("brokerRole") or ("MASTER" if broker_id == MASTER_ID else SLAVE)
    return HAState(
        role=role,
        epoch=_int(runtime.get("groupEpoch")),
        connection=runtime.get("haConnectionState", ""),
        lag_bytes=_figure(runtime.get("haReplicationLagBytes")),
        lag_ms=_figure(runtime.get("haReplicationLagMs")),
        master_addr=runtime.get("haMasterBrokerAddr") or runtime.get("masterAddr") or "",
        slave_count=_int(runtime.get("haSlaveCount")),
    )


class GroupRow(Protocol):
    """What grouping needs of a broker row (the overview's BrokerRow, frozen: read-only here too)."""

    @property
    def cluster(self) -> str: ...
    @property
    def broker_name(self) -> str: ...
    @property
    def broker_id(self) -> int: ...
    @property
    def addr(self) -> str: ...
    @property
    def ha(self) -> HAState | None: ...


R = TypeVar("R", bound=GroupRow)


@dataclass(frozen=True)
class BrokerGroup(Generic[R]):
    """One broker name: its master and slaves as rows, master first."""

    cluster: str
    broker_name: str
    members: tuple[R, ...]

    @property
    def master(self) -> R | None:
        return next((m for m in self.members if m.broker_id == MASTER_ID), None)

    @property
    def slaves(self) -> tuple[R, ...]:
        return tuple(m for m in self.members if m.broker_id != MASTER_ID)

    @property
    def role(self) -> str:
        """The master's role ("" without a master answering)."""
        master = self.master
        return master.ha.role if master is not None and master.ha is not None else ""

    @property
    def epoch(self) -> int | None:
        """The highest epoch a member reports (None when none does)."""
        epochs = [m.ha.epoch for m in self.members if m.ha is not None and m.ha.epoch is not None]
        return max(epochs) if epochs else None

    def member(self, broker_id: int) -> R | None:
        return next((m for m in self.members if m.broker_id == broker_id), None)


def group_members(rows: Iterable[R]) -> tuple[BrokerGroup[R], ...]:
    """Rows grouped by (cluster, broker name), sorted; members by broker id (the master first)."""
    found: dict[tuple[str, str], list[R]] = {}
    for row in rows:
        found.setdefault((row.cluster, row.broker_name), []).append(row)
    return tuple(
        BrokerGroup(cluster, name, tuple(sorted(members, key=lambda r: (r.broker_id, r.addr))))
        for (cluster, name), members in sorted(found.items())
    )
