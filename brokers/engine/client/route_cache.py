"""ClientPlans: the route cache and broker addressing shared by the producer and the pull client.

Routes come from the name servers and are kept for ROUTE_TTL_S (1 s for a provisional route
built from the TBW102 template for a topic that does not exist yet); while one caller refetches
a stale route, the others keep using it, and a name server outage leaves the cached route in
use. Every broker address handed out is remembered as a heartbeat target: HEART_BEAT tells
those brokers who this client is (and, for a pull client, what it subscribes to).

Sends go to masters (:meth:`ClientPlans.broker_addr`); pulls and offsets may go to a slave
(:meth:`ClientPlans.subscribe_addr`, :meth:`ClientPlans.admin_addr`, rules in
:mod:`.broker_addressing`). An address whose call failed is marked unreachable for a few
seconds (:meth:`ClientPlans.mark_unreachable`); a lookup that finds only unreachable addresses
refetches the route (at most every ``UNREACHABLE_REFRESH_S``) so a dead master's removal from
the name servers is seen at once.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import replace
from collections.abc import Callable
from typing import Any

from brokers.engine.client.admin_plans import AdminPlans
from brokers.engine.client.admin_types import TopicRouteData
from brokers.engine.client.broker_addressing import (
    UnreachableAddrs,
    find_broker_address_in_admin,
    find_broker_address_in_subscribe,
)
from brokers.engine.client.driver import DEFAULT_TIMEOUT_S
from brokers.engine.client.errors import CLIENT_ERROR, MQBrokerError, MQClientError
from brokers.engine.client.identity import build_client_id
from brokers.engine.client.plan import Call, Fanout, Plan
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.common.constants import AUTO_CREATE_TOPIC_KEY_TOPIC, DEFAULT_TOPIC_QUEUE_NUMS
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.topic_validator import validate_group
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.errors import RemotingError

__all__ = ["ROUTE_TTL_S", "ClientPlans"]

log = logging.getLogger("brokers.engine.client")

ROUTE_TTL_S = 30.0  # RocketMQ pollNameServerInterval: routes older than this are refetched
PROVISIONAL_ROUTE_TTL_S = 1.0  # a template route is refetched soon: the broker creates the topic on the first send
UNREACHABLE_REFRESH_S = 1.0  # a route whose chosen address is unreachable is refetched when older than this


class _RouteEntry:
    __slots__ = ("route", "fetched", "provisional", "publish_queues")

    def __init__(self, route: TopicRouteData, fetched: float, provisional: bool = False) -> None:
        self.route, self.fetched, self.provisional = route, fetched, provisional
        self.publish_queues: list[MessageQueue] | None = None  # route.publish_queues(), computed once


class ClientPlans(AdminPlans):
    """Route cache and broker addressing shared by the producer and the pull client."""

    def __init__(
        self,
        namesrv_addrs: tuple[str, ...],
        group: str,
        *,
        clock: Clock = SYSTEM_CLOCK,
        instance_name: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        super().__init__(namesrv_addrs)
        self.group = validate_group(group)
        self.timeout_s = timeout_s
        self.clock = clock
        self.client_id = build_client_id(instance_name)
        self._routes: dict[str, _RouteEntry] = {}
        self._broker_addrs: set[str] = set()  # brokers this client talked to (heartbeat targets)
        self._lock = threading.Lock()
        self.unreachable = UnreachableAddrs(clock.monotonic)
        self.on_unreachable: Callable[[str], None] | None = None  # e.g. the client instance's route refresh

    def put_route(self, topic: str, route: TopicRouteData) -> None:
        """Take a route fetched elsewhere (the client instance's poll) as fresh."""
        self._routes[topic] = _RouteEntry(route, self.clock.monotonic())

    def mark_unreachable(self, addr: str) -> None:
        """A call to ``addr`` failed (connection or timeout): prefer the group's other addresses for a while."""
        self.unreachable.mark(addr)
        if self.on_unreachable is not None:
            self.on_unreachable(addr)

    def _remember(self, addr: str) -> str:
        if addr not in self._broker_addrs:
            with self._lock:
                self._broker_addrs.add(addr)
        return addr

    def _group_addr(self, topic: str, broker_name: str, broker_id: int | None) -> Plan[tuple[int, str]]:
        """(id, address) of ``broker_name`` by the subscribe rule (``broker_id``) or the admin rule (None)."""

        def choose(route: TopicRouteData) -> tuple[int, str] | None:
            data = route.broker_data(broker_name)
            if broker_id is None:
                return find_broker_address_in_admin(data, self.unreachable.reachable)
            return find_broker_address_in_subscribe(data, broker_id, self.unreachable.reachable)

        route = yield from self.route(topic)
        found = choose(route)
        entry = self._routes.get(topic)
        stale = entry is None or self.clock.monotonic() - entry.fetched >= UNREACHABLE_REFRESH_S
        if found is None or (stale and not self.unreachable.reachable(found[1])):
            route = yield from self.route(topic, refresh=True)
            found = choose(route) or found
        if found is None:
            raise MQClientError(CLIENT_ERROR, f"broker {broker_name!r} has no address serving topic {topic!r}")
        self._remember(found[1])
        return found

    def subscribe_addr(self, topic: str, broker_name: str, broker_id: int) -> Plan[tuple[int, str]]:
        """(id, address) to pull ``broker_name``'s queues from: ``broker_id`` (the last suggestion), else
        the master, else any address of the group (RocketMQ's findBrokerAddressInSubscribe)."""
        return (yield from self._group_addr(topic, broker_name, broker_id))

    def admin_addr(self, topic: str, broker_name: str) -> Plan[tuple[int, str]]:
        """(id, address) for offsets and queue positions: the master, else any address of the group
        (RocketMQ's findBrokerAddressInAdmin)."""
        return (yield from self._group_addr(topic, broker_name, None))

    def cached_subscribe_addr(self, topic: str, broker_name: str, broker_id: int) -> tuple[int, str] | None:
        """:meth:`subscribe_addr` from a cached, fresh route with a reachable answer (no I/O), or None."""
        entry = self._fresh_entry(topic)
        if entry is None:
            return None
        found = find_broker_address_in_subscribe(
            entry.route.broker_data(broker_name), broker_id, self.unreachable.reachable
        )
        if found is None or not self.unreachable.reachable(found[1]):
            return None
        self._remember(found[1])
        return found

    def route(self, topic: str, *, refresh: bool = False, allow_template: bool = False) -> Plan[TopicRouteData]:
        """The topic's route from the cache, refetched when older than ROUTE_TTL_S or asked to.

        While one caller refetches, concurrent callers keep using the stale route. With
        ``allow_template``, a topic unknown to the name server is routed like TBW102 (the broker
        creates it on the first send).
        """
        now = self.clock.monotonic()
        entry = self._routes.get(topic)
        ttl = PROVISIONAL_ROUTE_TTL_S if entry is not None and entry.provisional else ROUTE_TTL_S
        if entry is not None and not refresh and now - entry.fetched < ttl:
            return entry.route
        if entry is not None:
            entry.fetched = now
        try:
            route = yield from self.examine_topic_route_info(topic)
            provisional = False
        except MQBrokerError as exc:
            if exc.code != ResponseCode.TOPIC_NOT_EXIST or not allow_template:
                raise
            try:
                template = yield from self.examine_topic_route_info(AUTO_CREATE_TOPIC_KEY_TOPIC)
            except MQBrokerError:
                raise exc from None  # no auto-create template either: the topic just does not exist
            route = _template_route(topic, template)
            provisional = True
        except RemotingError:
            if entry is not None:
                return entry.route
            raise
        self._routes[topic] = _RouteEntry(route, now, provisional)
        return route

    def _fresh_entry(self, topic: str) -> _RouteEntry | None:
        entry = self._routes.get(topic)
        if entry is None:
            return None
        ttl = PROVISIONAL_ROUTE_TTL_S if entry.provisional else ROUTE_TTL_S
        return entry if self.clock.monotonic() - entry.fetched < ttl else None

    def cached_publish_queues(self, topic: str) -> list[MessageQueue] | None:
        """The writable queues of a cached, fresh route (no I/O); None when the route must be fetched."""
        entry = self._fresh_entry(topic)
        if entry is None:
            return None
        if entry.publish_queues is None:
            entry.publish_queues = entry.route.publish_queues()
        return entry.publish_queues

    def cached_broker_addr(self, topic: str, broker_name: str) -> str | None:
        """The master address of ``broker_name`` from a cached, fresh route (no I/O), or None."""
        entry = self._fresh_entry(topic)
        addr = entry.route.master_addr(broker_name) if entry is not None else None
        if addr is not None and addr not in self._broker_addrs:
            with self._lock:
                self._broker_addrs.add(addr)
        return addr

    def broker_addr(self, topic: str, broker_name: str, *, allow_template: bool = False) -> Plan[str]:
        """The master address of ``broker_name`` for ``topic`` (refreshing the route once if unknown)."""
        route = yield from self.route(topic, allow_template=allow_template)
        addr = route.master_addr(broker_name)
        if addr is None:
            route = yield from self.route(topic, refresh=True, allow_template=allow_template)
            addr = route.master_addr(broker_name)
        if addr is None:
            raise MQClientError(CLIENT_ERROR, f"broker {broker_name!r} has no master serving topic {topic!r}")
        if addr not in self._broker_addrs:
            with self._lock:
                self._broker_addrs.add(addr)
        return addr

    def heartbeat_body(self) -> dict[str, Any]:
        """The HeartbeatData this client sends; the producer and the pull client add their group."""
        return {"clientID": self.client_id, "consumerDataSet": [], "producerDataSet": []}

    def encoded_heartbeat(self) -> bytes:
        """The HEART_BEAT request body: :meth:`heartbeat_body` as compact JSON."""
        return json.dumps(self.heartbeat_body(), separators=(",", ":")).encode()

    def heartbeat(self) -> Plan[int]:
        """Send HEART_BEAT to every broker this client talked to; return how many answered."""
        with self._lock:
            addrs = sorted(self._broker_addrs)
        if not addrs:
            return 0
        body = self.encoded_heartbeat()
        replies = yield Fanout(tuple(Call(RequestCode.HEART_BEAT, body=body, addr=a) for a in addrs))
        ok = 0
        for addr, reply in zip(addrs, replies):
            if isinstance(reply, RemotingError) or reply.code != ResponseCode.SUCCESS:
                log.debug(
                    "heartbeat to %s failed: %s", addr, reply if isinstance(reply, RemotingError) else reply.remark
                )
            else:
                ok += 1
        return ok


def _template_route(topic: str, template: TopicRouteData) -> TopicRouteData:
    """Route a new topic like TBW102 with min(4, queues) per broker (MQClientInstance.updateTopicRouteInfoFromNameServer)."""
    queue_datas = tuple(
        replace(
            q,
            read_queue_nums=min(DEFAULT_TOPIC_QUEUE_NUMS, q.read_queue_nums),
            write_queue_nums=min(DEFAULT_TOPIC_QUEUE_NUMS, q.read_queue_nums),
        )
        for q in template.queue_datas
    )
    return TopicRouteData(topic, queue_datas, template.broker_datas)
