"""ClusterBackend: the brokers of a cluster, over remoting, behind the cluster-mode proxy.

- **Where a request runs**: on the master of the broker name the call concerns (the queue a receive
  names, the broker in a receipt handle, the queue a send picks), found in the name servers' cluster
  info (GET_BROKER_CLUSTER_INFO, refreshed every ``DIRECTORY_TTL_S`` and when a name is missing), over
  the calling client's own connections (:class:`~.remote_channel.RemoteChannel`).
- **As whom**: with the ACL on, the proxy checks each call's 5.x signature against its ACL file (the
  same plain_acl.yml as the brokers) and signs the remoting request it forwards as that same account
  (it has the secret), so every broker checks the request again against its own rules. Calls from a
  white address are forwarded unsigned: the brokers decide by the proxy's address.
- **Configs**: a topic's config (its message type) by GET_TOPIC_CONFIG from the first master of its
  route, a group's (fifo, max attempts) by GET_SUBSCRIPTIONGROUP_CONFIG from a master, each kept
  ``CONFIG_TTL_S``; these lookups are signed with the proxy's own account (``metadata_account``), and
  a lookup that fails leaves the defaults (a normal topic; a non-FIFO group with 16 retries).
- **Routes** name the proxy's own address for every broker: the clients talk to the proxy only.
"""

from __future__ import annotations

import itertools
import json
import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Generic, TypeVar

from brokers.engine.acl.client_hook import AclClientHook
from brokers.engine.broker.pop.extra_info import ExtraInfo
from brokers.engine.client.admin_bodies import parse_cluster_info, parse_topic_route
from brokers.engine.client.admin_types import TopicRouteData
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.common.constants import MAX_RECONSUME_TIMES
from brokers.engine.common.message_codec import RecordFormatError, decode_records
from brokers.engine.common.perm import is_readable, is_writeable
from brokers.engine.common.topic_config import InvalidTopicConfigError, TopicConfig
from brokers.engine.proxy.backend import NotServed, SessionChannel
from brokers.engine.proxy.remote_channel import RemoteChannel
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.headers.brokers import GetSubscriptionGroupConfigRequestHeader, GetTopicConfigRequestHeader
from brokers.engine.remoting.tls import TlsConfig
from brokers.engine.remoting.headers.topics import GetRouteInfoRequestHeader

if TYPE_CHECKING:
    from brokers.engine.acl.acl_guard import AclGuard
    from brokers.engine.proxy.sessions import ClientCall

log = logging.getLogger("brokers.engine.proxy")

DIRECTORY_TTL_S = 10.0  # cluster info (broker name -> master address)
CONFIG_TTL_S = 10.0  # a topic's or group's config, a topic's route for sends
LOOKUP_TIMEOUT_S = 3.0
MAX_CACHED = 10_000  # entries per cache; past it the cache starts over
PULL_FLAG_SUBSCRIPTION = 0x4  # RocketMQ's PullSysFlag: the request carries its subscription


_V = TypeVar("_V")


class _Ttl(Generic[_V]):
    """key -> value for ``ttl_s`` seconds (a bounded dict: cleared when it reaches MAX_CACHED)."""

    def __init__(self, ttl_s: float) -> None:
        self.ttl_s = ttl_s
        self._entries: dict[str, tuple[float, _V]] = {}

    def get(self, key: str) -> tuple[bool, _V | None]:
        entry = self._entries.get(key)
        if entry is None or entry[0] < time.monotonic():
            return False, None
        return True, entry[1]

    def put(self, key: str, value: _V) -> None:
        if len(self._entries) >= MAX_CACHED:
            self._entries.clear()
        self._entries[key] = (time.monotonic() + self.ttl_s, value)


class ClusterBackend:
    """Every broker known to ``namesrv_addrs``, over remoting (cluster mode)."""

    def __init__(
        self,
        namesrv_addrs: Sequence[str],
        *,
        guard: AclGuard | None = None,
        metadata_account: tuple[str, str] | None = None,
        tls: TlsConfig | None = None,
        max_message_size: int = 4 * 1024 * 1024,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        if not namesrv_addrs:
            raise ValueError("the proxy needs at least one name server address")
        self.name = "the proxy"
        self.namesrv_addrs = list(namesrv_addrs)
        self.guard = guard
        self.clock = clock
        self.tls = tls
        self._max_message_size = max_message_size
        signer = AclClientHook(*metadata_account) if metadata_account else None
        self.client = RemotingClient(name="proxy", signer=signer, tls=tls)  # lookups, signed as the proxy
        self.endpoint_addr = ""
        self._masters: dict[str, str] = {}
        self._masters_until = 0.0
        self._topics: _Ttl[TopicConfig | None] = _Ttl(CONFIG_TTL_S)
        self._groups: _Ttl[tuple[bool, int]] = _Ttl(CONFIG_TTL_S)  # (orderly, max delivery attempts)
        self._routes: _Ttl[TopicRouteData | None] = _Ttl(CONFIG_TTL_S)
        self._ready = False
        self._turns = itertools.count()  # round robin over brokers for receives that name none

    # -- the backend protocol ------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        return self._ready

    @property
    def max_message_size(self) -> int:
        return self._max_message_size

    def new_channel(self, client_id: str, remote_addr: str, local_addr: str) -> SessionChannel:
        return RemoteChannel(client_id, remote_addr, local_addr, tls=self.tls)

    def channel_closed(self, channel: SessionChannel) -> None:
        """Nothing more: closing the channel closed its connections, and the brokers drop the client."""

    def started(self, endpoint_addr: str) -> None:
        self.endpoint_addr = endpoint_addr

    async def start(self) -> None:
        """Read the cluster once before serving (ready from then on)."""
        await self._refresh_masters()
        self._ready = True

    async def stop(self) -> None:
        await self.client.close()

    async def invoke(
        self, call: ClientCall, request: RemotingCommand, broker_name: str | None, timeout_s: float
    ) -> RemotingCommand:
        if broker_name is None:
            raise NotServed("the proxy needs a broker name for this request")
        addr = await self._master(broker_name)
        caller = call.caller
        if caller.account is not None:
            AclClientHook(caller.account.access_key, caller.account.secret_key).sign_request(request)
        channel = call.session.channel
        assert isinstance(channel, RemoteChannel)
        return await channel.invoke(addr, request, timeout_s)

    async def namesrv_call(self, request: RemotingCommand) -> RemotingCommand:
        last: Exception | None = None
        for addr in self.namesrv_addrs:
            try:
                return await self.client.invoke(addr, request, LOOKUP_TIMEOUT_S)
            except Exception as exc:  # the next name server
                last = exc
        raise last or OSError("no name server answered")

    async def grpc_addr_of(self, broker_name: str, broker_addr: str) -> str:
        return self.endpoint_addr  # every broker is reached through the proxy

    async def topic_config(self, call: ClientCall | None, topic: str) -> TopicConfig | None:
        found, tc = self._topics.get(topic)
        if found:
            return tc
        tc = None
        route = await self._route(topic)
        masters = [bd.broker_addrs.get(0) for bd in route.broker_datas] if route is not None else []
        for addr in filter(None, masters):
            try:
                reply = await self.client.invoke(
                    addr,
                    RemotingCommand.request(
                        RequestCode.GET_TOPIC_CONFIG, GetTopicConfigRequestHeader(topic=topic).encode()
                    ),
                    LOOKUP_TIMEOUT_S,
                )
            except Exception as exc:
                log.info("proxy: topic %s's config not read from %s: %s", topic, addr, exc)
                continue
            if reply.code == ResponseCode.SUCCESS and reply.body:
                try:
                    data = json.loads(reply.body)
                    tc = TopicConfig.from_json(data.get("topicConfig", data))
                except (ValueError, TypeError, InvalidTopicConfigError) as exc:
                    log.warning("proxy: topic %s's config from %s does not parse: %s", topic, addr, exc)
                break
        self._topics.put(topic, tc)
        return tc

    async def group_policy(self, call: ClientCall | None, group: str) -> tuple[bool, int]:
        default = (False, MAX_RECONSUME_TIMES + 1)
        if not group:
            return default
        found, cached = self._groups.get(group)
        if found and cached is not None:
            return cached
        policy = default
        masters = await self._all_masters()
        for addr in masters.values():
            try:
                reply = await self.client.invoke(
                    addr,
                    RemotingCommand.request(
                        RequestCode.GET_SUBSCRIPTIONGROUP_CONFIG,
                        GetSubscriptionGroupConfigRequestHeader(group=group).encode(),
                    ),
                    LOOKUP_TIMEOUT_S,
                )
            except Exception as exc:
                log.info("proxy: group %s's config not read from %s: %s", group, addr, exc)
                continue
            if reply.code == ResponseCode.SUCCESS and reply.body:
                try:
                    data = json.loads(reply.body)
                    policy = (
                        bool(data.get("consumeMessageOrderly", False)),
                        int(data.get("retryMaxTimes", MAX_RECONSUME_TIMES)) + 1,
                    )
                except (ValueError, TypeError, AttributeError) as exc:
                    log.warning("proxy: group %s's config from %s does not parse: %s", group, addr, exc)
                break
        self._groups.put(group, policy)
        return policy

    def handle_refusal(self, broker_name: str) -> str | None:
        if broker_name not in self._masters:
            return f"receipt handle names broker {broker_name[:64]}, which the proxy does not know"
        return None

    async def served_broker(self, requested: str, topic: str) -> str:
        """The broker the client's queue names; for a receive that names none (RocketMQ's proxy allows it),
        the brokers with readable queues of the topic in turn."""
        if requested:
            return requested
        route = await self._route(topic)
        readable = sorted(
            qd.broker_name
            for qd in (route.queue_datas if route is not None else ())
            if is_readable(qd.perm) and qd.read_queue_nums > 0 and qd.broker_name in self._masters
        )
        if not readable:
            raise NotServed(f"topic {topic} has no readable queue on a known broker")
        return readable[next(self._turns) % len(readable)]

    async def send_queues(self, call: ClientCall, topic: str, tc: TopicConfig | None) -> list[tuple[str | None, int]]:
        """Every writable queue of the topic's route, broker by broker (sorted by name)."""
        route = await self._route(topic)
        if route is None:
            return []
        out: list[tuple[str | None, int]] = []
        for qd in sorted(route.queue_datas, key=lambda q: q.broker_name):
            if is_writeable(qd.perm) and qd.broker_name in self._masters:
                out.extend((qd.broker_name, queue_id) for queue_id in range(qd.write_queue_nums))
        return out

    async def heartbeat_targets(self, call: ClientCall) -> list[str | None]:
        return list(await self._all_masters())

    async def commit_log_offset(self, call: ClientCall, group: str, topic: str, info: ExtraInfo) -> int | None:
        """The message's commit-log offset: one message pulled at its queue offset, as the caller."""
        fields = {
            "consumerGroup": group,
            "topic": topic,
            "queueId": info.queue_id,
            "queueOffset": info.queue_offset,
            "maxMsgNums": 1,
            "sysFlag": PULL_FLAG_SUBSCRIPTION,  # the subscription below, not the group's registered one
            "commitOffset": 0,
            "suspendTimeoutMillis": 0,
            "subscription": "*",
            "subVersion": 0,
            "expressionType": "TAG",
        }
        reply = await self.invoke(
            call, RemotingCommand.request(RequestCode.PULL_MESSAGE, fields), info.broker_name, LOOKUP_TIMEOUT_S
        )
        if reply.code != ResponseCode.SUCCESS or not reply.body:
            return None
        try:
            found = decode_records(reply.body)
        except RecordFormatError:
            return None
        return int(found[0].commit_log_offset) if found and found[0].queue_offset == info.queue_offset else None

    # -- the cluster -----------------------------------------------------------------------------------

    async def _route(self, topic: str) -> TopicRouteData | None:
        found, route = self._routes.get(topic)
        if found:
            return route
        route = None
        try:
            reply = await self.namesrv_call(
                RemotingCommand.request(
                    RequestCode.GET_ROUTEINFO_BY_TOPIC, GetRouteInfoRequestHeader(topic=topic).encode()
                )
            )
            if reply.code == ResponseCode.SUCCESS:
                route = parse_topic_route(topic, reply.body)
        except Exception as exc:
            log.info("proxy: no route for %s: %s", topic, exc)
            return None  # not cached: the next call asks again
        self._routes.put(topic, route)
        return route

    async def _all_masters(self) -> dict[str, str]:
        if time.monotonic() >= self._masters_until:
            try:
                await self._refresh_masters()
            except Exception as exc:  # keep serving with what is known
                log.warning("proxy: cluster info not refreshed: %s", exc)
        return dict(self._masters)

    async def _master(self, broker_name: str) -> str:
        addr = (await self._all_masters()).get(broker_name)
        if addr is None:
            await self._refresh_masters()
            addr = self._masters.get(broker_name)
        if addr is None:
            raise NotServed(f"no master of broker {broker_name[:64]} is known to the name servers")
        return addr

    async def _refresh_masters(self) -> None:
        reply = await self.namesrv_call(RemotingCommand.request(RequestCode.GET_BROKER_CLUSTER_INFO))
        if reply.code != ResponseCode.SUCCESS:
            raise OSError(f"cluster info refused: {reply.remark}")
        self._masters = parse_cluster_info(reply.body).masters()
        self._masters_until = time.monotonic() + DIRECTORY_TTL_S
