"""Consumer groups' live connections merged over brokers, and their members' running infos.

Both batched: the connections of any number of groups cost one request per broker (Gantry's
GANTRY_GET_ALL_CONSUMER_CONNECTIONS), the running infos one request per member, all at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from brokers.engine.client.admin import (
    ClusterInfo,
    Connection,
    ConsumerRunningInfo,
    SubscriptionData,
    parse_connections,
    parse_consumer_running_info,
    parse_subscription_table,
)
from brokers.engine.client.admin_bodies import load_object
from brokers.engine.client.admin_group_bodies import parse_connections_by_group
from brokers.engine.client.plan import Call, Fanout, Plan, Reply
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.errors import RemotingError
from brokers.gateway.client import answered, reply_failure, run
from brokers.gateway.cluster import slave_addrs
from brokers.engine.remoting.headers.groups import GetConsumerConnectionListRequestHeader


@dataclass(frozen=True)
class GroupConnections:
    """A group's live connections merged over brokers, and which brokers see each client."""

    group: str
    connections: tuple[Connection, ...]  # one per client id, sorted
    broker_addrs: dict[str, tuple[str, ...]]  # client id -> brokers it is connected to
    subscription_table: dict[str, SubscriptionData]
    consume_type: str | None = None
    message_model: str | None = None
    consume_from_where: str | None = None
    errors: tuple[str, ...] = ()  # brokers that did not answer

    @property
    def online(self) -> bool:
        return bool(self.connections)


def consumer_connections_plan(groups: Iterable[str], addrs: Iterable[str]) -> Plan[dict[str, GroupConnections]]:
    """The connections of ``groups`` on each broker, merged per group.

    One GANTRY_GET_ALL_CONSUMER_CONNECTIONS per broker, all at once (a Gantry extension: every
    online group's ConsumerConnection in one answer; docs/protocol.md). A broker that answers
    "request code not supported" (Apache RocketMQ 4.x has no request for every group's
    connections) then gets one GET_CONSUMER_CONNECTION_LIST per group, all at once; callers
    keep ``groups`` to what they show.
    """
    groups, addrs = tuple(dict.fromkeys(groups)), tuple(dict.fromkeys(addrs))
    merged: dict[str, dict] = {g: {"conns": {}, "where": {}, "subs": {}, "errors": [], "meta": {}} for g in groups}

    def add(group: str, addr: str, obj: dict) -> None:
        m = merged[group]
        for c in parse_connections(obj):
            m["conns"].setdefault(c.client_id, c)
            m["where"].setdefault(c.client_id, []).append(addr)
        m["subs"].update(parse_subscription_table(obj.get("subscriptionTable") or {}))
        for key in ("consumeType", "messageModel", "consumeFromWhere"):
            m["meta"].setdefault(key, obj.get(key))

    per_group: tuple[str, ...] = ()
    if groups and addrs:
        code = RequestCode.GANTRY_GET_ALL_CONSUMER_CONNECTIONS
        replies = yield Fanout(tuple(Call(code, addr=a) for a in addrs))
        for addr, reply in zip(addrs, replies):
            if isinstance(reply, Reply) and reply.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED:
                per_group += (addr,)
                continue
            error = reply_failure(reply, code)
            if error is not None:
                for g in groups:
                    merged[g]["errors"].append(f"{addr}: {error}")
                continue
            online = parse_connections_by_group(reply.body)
            for g in groups:
                if g in online:
                    add(g, addr, online[g])
    pairs = [(g, a) for g in groups for a in per_group]
    replies = (
        (
            yield Fanout(
                tuple(
                    Call(
                        RequestCode.GET_CONSUMER_CONNECTION_LIST,
                        GetConsumerConnectionListRequestHeader(consumer_group=g).encode(),
                        addr=a,
                    )
                    for g, a in pairs
                )
            )
        )
        if pairs
        else []
    )
    for (group, addr), reply in zip(pairs, replies):
        if isinstance(reply, Reply) and reply.code == ResponseCode.CONSUMER_NOT_ONLINE:
            continue
        error = reply_failure(reply, RequestCode.GET_CONSUMER_CONNECTION_LIST)
        if error is not None:
            merged[group]["errors"].append(f"{addr}: {error}")
            continue
        add(group, addr, load_object(reply.body))
    return {
        g: GroupConnections(
            g,
            tuple(m["conns"][c] for c in sorted(m["conns"])),
            {c: tuple(a) for c, a in sorted(m["where"].items())},
            dict(sorted(m["subs"].items())),
            m["meta"].get("consumeType"),
            m["meta"].get("messageModel"),
            m["meta"].get("consumeFromWhere"),
            tuple(m["errors"]),
        )
        for g, m in merged.items()
    }


def consumer_connections(
    groups: Iterable[str], addrs: Iterable[str], *, with_slaves: bool = True, info: ClusterInfo | None = None
) -> dict[str, GroupConnections]:
    """The groups' connections on ``addrs`` (masters, or a route's brokers) and, unless ``with_slaves``
    is False, on every slave the name server lists (in ``info`` when the caller has read it already).

    A client heartbeats every broker of its routes, slaves included. A master that has just come back
    knows only the clients that have heartbeated it since, and while it is down only its slaves know
    them: a group's members are the union (as ``MQClientInstance.find_consumer_id_list`` merges the
    lists of a master and its slaves), else the console under-counts them and a health scan calls an
    online group offline."""
    if with_slaves:
        addrs = list(dict.fromkeys([*addrs, *slave_addrs(info)]))
    return run(consumer_connections_plan(groups, addrs))


RUNNING_INFO_TIMEOUT_S = 5.0  # a member that has not answered by then is shown as not answering (the broker waits 10 s)


def running_infos_plan(
    targets: dict[tuple[str, str], str], timeout_s: float
) -> Plan[dict[tuple[str, str], ConsumerRunningInfo | RemotingError]]:
    """GET_CONSUMER_RUNNING_INFO of each (group, client id) through the broker address given, all at once."""
    keys = sorted(targets)
    calls = tuple(
        Call(
            RequestCode.GET_CONSUMER_RUNNING_INFO,
            {"consumerGroup": g, "clientId": c, "jstackEnable": False},
            addr=targets[(g, c)],
            timeout_s=timeout_s,
        )
        for g, c in keys
    )
    replies = (yield Fanout(calls)) if calls else []
    out: dict[tuple[str, str], ConsumerRunningInfo | RemotingError] = {}
    for key, reply in zip(keys, replies):
        answer = answered(reply, RequestCode.GET_CONSUMER_RUNNING_INFO)
        out[key] = answer if isinstance(answer, RemotingError) else parse_consumer_running_info(answer.body)
    return out


def consumer_running_infos(
    group: str, targets: dict[str, str], timeout_s: float = RUNNING_INFO_TIMEOUT_S
) -> dict[str, ConsumerRunningInfo | RemotingError]:
    """Each member's running info (client id -> a broker it is connected to), all at once."""
    answers = run(running_infos_plan({(group, cid): addr for cid, addr in targets.items()}, timeout_s))
    return {cid: answer for (_, cid), answer in answers.items()}


def running_infos(
    targets: dict[tuple[str, str], str], timeout_s: float = RUNNING_INFO_TIMEOUT_S
) -> dict[tuple[str, str], ConsumerRunningInfo | RemotingError]:
    """The running info of each (group, client id) through the broker address given, all at once."""
    return run(running_infos_plan(targets, timeout_s)) if targets else {}
