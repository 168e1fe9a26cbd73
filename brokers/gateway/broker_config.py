"""A broker's configuration as it reports it (GET_BROKER_CONFIG, ``mqadmin getBrokerConfig``): read only.

The body is Java properties text, ``key=value`` per line (RocketMQ's ``MixAll.properties2String``);
the console shows it per member of a broker group. Nothing here changes a setting.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.errors import RemotingError
from brokers.gateway.client import answered, fanout_to_brokers, run

__all__ = ["BrokerConfig", "MemberConfig", "broker_configs", "group_configs", "parse_properties"]


@dataclass(frozen=True)
class BrokerConfig:
    """One broker's properties, sorted by name, or why it did not answer."""

    addr: str
    properties: tuple[tuple[str, str], ...] = ()
    error: str = ""


def parse_properties(text: str) -> tuple[tuple[str, str], ...]:
    """``key=value`` lines (blank lines and ``#`` comments skipped), sorted by key."""
    pairs = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "!")) or "=" not in line:
            continue
        key, _, value = line.partition("=")
        pairs[key.strip()] = value.strip()
    return tuple(sorted(pairs.items()))


def broker_configs(addrs: Iterable[str]) -> dict[str, BrokerConfig]:
    """GET_BROKER_CONFIG on each address at once: address -> its configuration (or the error)."""
    out = {}
    for addr, reply in run(fanout_to_brokers(RequestCode.GET_BROKER_CONFIG, addrs)).items():
        answer = answered(reply, RequestCode.GET_BROKER_CONFIG)
        if isinstance(answer, RemotingError):
            out[addr] = BrokerConfig(addr, error=str(answer))
        else:
            out[addr] = BrokerConfig(addr, parse_properties((answer.body or b"").decode("utf-8", "replace")))
    return out


@dataclass(frozen=True)
class MemberConfig:
    """A broker group member's configuration for the group's page and API."""

    broker_id: int
    addr: str
    properties: tuple[tuple[str, str], ...]
    error: str = ""


class MemberRow(Protocol):
    """A group member's row as group_configs reads it (``status`` too, when the row has one)."""

    @property
    def broker_id(self) -> int: ...
    @property
    def addr(self) -> str: ...


def group_configs(members: Iterable[MemberRow]) -> tuple[MemberConfig, ...]:
    """The configuration of each member (rows with ``broker_id``, ``addr`` and ``status``) that is
    live; a member that is not is listed with why it was not asked."""
    members = tuple(members)
    live = [m.addr for m in members if getattr(m, "status", "") == "live"]
    configs = broker_configs(live) if live else {}
    out = []
    for m in members:
        got = configs.get(m.addr)
        if got is None:
            out.append(
                MemberConfig(m.broker_id, m.addr, (), f"not asked: the member is {getattr(m, 'status', 'unknown')}")
            )
        else:
            out.append(MemberConfig(m.broker_id, m.addr, got.properties, got.error))
    return tuple(out)
