"""Producer groups and their connected clients, merged over the masters (GET_ALL_PRODUCER_INFO, 328).

RocketMQ's brokers know producers by group from their heartbeats, not by topic (a producer may
send to any topic), so the console lists groups, each with the clients connected to any master.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone

from brokers.engine.client.admin_bodies import load_object
from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.errors import RemotingError
from brokers.gateway.client import answered, fanout_to_brokers, run
from brokers.engine.common.mq_version import version_desc
from brokers.gateway.cluster import cluster_info, masters_by_addr

__all__ = ["ProducerClient", "ProducerGroup", "ProducerGroups", "all_producer_groups", "producer_groups"]


@dataclass(frozen=True)
class ProducerClient:
    client_id: str
    addr: str  # ip:port the broker sees
    language: str
    version: int
    last_heartbeat_ms: int
    brokers: tuple[str, ...]  # broker addresses it is connected to

    @property
    def version_name(self) -> str:
        """RocketMQ's name of the client's version (409 -> V4_9_8), as every console page and API shows it."""
        return version_desc(self.version)

    @property
    def last_heartbeat(self) -> datetime | None:
        return (
            datetime.fromtimestamp(self.last_heartbeat_ms / 1000, tz=timezone.utc)
            if self.last_heartbeat_ms > 0
            else None
        )


@dataclass(frozen=True)
class ProducerGroup:
    group: str
    clients: tuple[ProducerClient, ...]


@dataclass(frozen=True)
class ProducerGroups:
    groups: tuple[ProducerGroup, ...]
    errors: tuple[str, ...] = ()  # brokers that did not answer


def producer_groups(addrs: Iterable[str]) -> ProducerGroups:
    """GET_ALL_PRODUCER_INFO on each master at once, merged per group and client id."""
    merged: dict[str, dict[str, dict]] = {}
    seen_on: dict[tuple[str, str], list[str]] = {}
    errors = []
    for addr, reply in run(fanout_to_brokers(RequestCode.GET_ALL_PRODUCER_INFO, addrs)).items():
        answer = answered(reply, RequestCode.GET_ALL_PRODUCER_INFO)
        if isinstance(answer, RemotingError):
            errors.append(f"broker {addr} did not answer: {answer}")
            continue
        data = load_object(answer.body).get("data") or {}
        for group, clients in data.items() if isinstance(data, dict) else ():
            for c in clients if isinstance(clients, list) else ():
                if not isinstance(c, dict) or not c.get("clientId"):
                    continue
                key = (str(group), str(c["clientId"]))
                known = merged.setdefault(key[0], {}).get(key[1])
                if known is None or int(c.get("lastUpdateTimestamp") or 0) > int(known.get("lastUpdateTimestamp") or 0):
                    merged[key[0]][key[1]] = c
                seen_on.setdefault(key, []).append(addr)
    groups = tuple(
        ProducerGroup(
            group,
            tuple(
                ProducerClient(
                    cid,
                    str(c.get("remoteIP", "")),
                    str(c.get("language", "")),
                    int(c.get("version") or 0),
                    int(c.get("lastUpdateTimestamp") or 0),
                    tuple(sorted(seen_on[(group, cid)])),
                )
                for cid, c in sorted(clients.items())
            ),
        )
        for group, clients in sorted(merged.items())
    )
    return ProducerGroups(groups, tuple(errors))


def all_producer_groups() -> ProducerGroups:
    """Every producer group the masters of the cluster know (one request per master)."""
    return producer_groups(sorted(masters_by_addr(cluster_info())))
