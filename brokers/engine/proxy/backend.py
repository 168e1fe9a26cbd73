"""Backend: what the gRPC endpoint runs 5.x calls against, in one of RocketMQ 5's two proxy modes.

- :class:`LocalBackend` (local mode, ``--grpc-port`` on a broker): the broker in the same process. A
  translated request runs on the broker's own processor for its code, on the client's
  :class:`~.local_channel.LocalChannel`; topic and group configs are read from the broker's managers.
- :class:`~.cluster_backend.ClusterBackend` (cluster mode, ``python -m brokers.engine proxy``): every
  broker of a cluster, over remoting. Each 5.x client gets its own connections to the brokers
  (:class:`~.remote_channel.RemoteChannel`), so a broker sees one connection per client, as it does for a
  4.x client; topic and group configs come from the brokers (GET_TOPIC_CONFIG, GET_SUBSCRIPTIONGROUP_CONFIG).

Both read routes from the same name servers, and the calls (``calls.py``) are the same for both: only
where a request runs, and which endpoint a route names for a broker, differ.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Protocol

from brokers.engine.broker.pop.extra_info import ExtraInfo
from brokers.engine.common.constants import MAX_RECONSUME_TIMES
from brokers.engine.common.message_codec import decode_record
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.proxy.local_channel import LocalChannel
from brokers.engine.proxy.routes import EndpointCache, split_addr
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand

if TYPE_CHECKING:
    from brokers.engine.acl.acl_guard import AclGuard
    from brokers.engine.common.clock import Clock
    from brokers.engine.proxy.sessions import ClientCall


log = logging.getLogger("brokers.engine.proxy")

ASK_TIMEOUT_S = 2.0


class NotServed(Exception):
    """A request the backend cannot run (no such broker, no processor for the code)."""


class SessionChannel(Protocol):
    """What a session's channel offers the endpoint, whichever the mode."""

    client_id: str
    remote_addr: str
    closed: bool
    responder: Any

    def close(self) -> None: ...


class Backend(Protocol):
    name: str  # what messages call the backend: "broker broker-a", "the proxy"
    guard: AclGuard | None
    clock: Clock

    @property
    def ready(self) -> bool: ...

    @property
    def max_message_size(self) -> int: ...

    def new_channel(self, client_id: str, remote_addr: str, local_addr: str) -> SessionChannel: ...

    def channel_closed(self, channel: SessionChannel) -> None: ...

    async def invoke(
        self, call: ClientCall, request: RemotingCommand, broker_name: str | None, timeout_s: float
    ) -> RemotingCommand: ...

    async def namesrv_call(self, request: RemotingCommand) -> RemotingCommand: ...

    async def grpc_addr_of(self, broker_name: str, broker_addr: str) -> str: ...

    def started(self, endpoint_addr: str) -> None: ...

    async def topic_config(self, call: ClientCall | None, topic: str) -> TopicConfig | None: ...

    async def group_policy(self, call: ClientCall | None, group: str) -> tuple[bool, int]: ...

    def handle_refusal(self, broker_name: str) -> str | None: ...

    async def served_broker(self, requested: str, topic: str) -> str: ...

    async def send_queues(
        self, call: ClientCall, topic: str, tc: TopicConfig | None
    ) -> list[tuple[str | None, int]]: ...

    async def heartbeat_targets(self, call: ClientCall) -> list[str | None]: ...

    async def commit_log_offset(self, call: ClientCall, group: str, topic: str, info: ExtraInfo) -> int | None: ...


def policy_of(cfg: Any) -> tuple[bool, int]:
    """(fifo, max delivery attempts) of a subscription group config (None: the defaults)."""
    if cfg is None:
        return False, MAX_RECONSUME_TIMES + 1
    return bool(getattr(cfg, "consume_message_orderly", False)), int(cfg.retry_max_times) + 1


class LocalBackend:
    """The broker in this process (local mode)."""

    def __init__(self, broker: Any) -> None:
        self.broker = broker  # the BrokerController (its server, store, managers, ACL guard)
        self.name = f"broker {broker.config.broker_name}"
        self.guard = broker.acl_guard
        self.clock = broker.clock
        self.endpoint_addr = ""  # set by started() once the endpoint listens
        self.endpoints = EndpointCache()  # other brokers' gRPC addresses

    @property
    def ready(self) -> bool:
        return bool(self.broker.ready)

    @property
    def max_message_size(self) -> int:
        return int(self.broker.config.max_message_size)

    def new_channel(self, client_id: str, remote_addr: str, local_addr: str) -> SessionChannel:
        return LocalChannel(client_id, remote_addr, local_addr)

    def channel_closed(self, channel: SessionChannel) -> None:
        self.broker.client_manager.do_channel_close_event(channel)

    async def invoke(
        self, call: ClientCall, request: RemotingCommand, broker_name: str | None, timeout_s: float
    ) -> RemotingCommand:
        handler = self.broker.server.processor_for(request.code)
        if handler is None:
            raise NotServed(f"{self.name} does not serve request code {request.code}")
        channel = call.session.channel
        assert isinstance(channel, LocalChannel)
        return await channel.call(handler, request, timeout_s)

    async def namesrv_call(self, request: RemotingCommand) -> RemotingCommand:
        """Ask the name servers in turn (the broker's own client, signed as the broker)."""
        last: Exception | None = None
        for addr in self.broker.config.namesrv_addrs:
            try:
                reply: RemotingCommand = await self.broker.outer_api.client.invoke(addr, request, 3.0)
                return reply
            except Exception as exc:  # the next name server
                last = exc
        raise last or OSError("no name server is configured")

    async def grpc_addr_of(self, broker_name: str, broker_addr: str) -> str:
        """A broker's gRPC address: this endpoint's for this broker; for another, a cached answer, that
        broker's own answer to GANTRY_GET_GRPC_ENDPOINT, or the convention (its host, this port)."""
        if broker_addr == self.broker.addr:
            return self.endpoint_addr
        known = self.endpoints.get(broker_addr)
        if known is not None:
            return known
        host, _ = split_addr(broker_addr)
        found = f"{host}:{split_addr(self.endpoint_addr)[1]}"
        try:
            reply = await self.broker.outer_api.client.invoke(
                broker_addr, RemotingCommand.request(RequestCode.GANTRY_GET_GRPC_ENDPOINT), ASK_TIMEOUT_S
            )
            if reply.code == ResponseCode.SUCCESS and reply.ext("grpcAddr"):
                found = reply.ext("grpcAddr")
        except Exception as exc:
            log.info("broker %s did not say its gRPC endpoint (%s); assuming %s", broker_addr, exc, found)
        self.endpoints.put(broker_addr, found)
        return found

    def started(self, endpoint_addr: str) -> None:
        """The endpoint listens at ``endpoint_addr``: other brokers' endpoints may ask for it."""
        self.endpoint_addr = endpoint_addr
        self.broker.server.register_processor(RequestCode.GANTRY_GET_GRPC_ENDPOINT, self._answer_endpoint)

    async def _answer_endpoint(self, ctx: object, request: RemotingCommand) -> RemotingCommand:
        return request.response(ResponseCode.SUCCESS, None, {"grpcAddr": self.endpoint_addr})

    async def topic_config(self, call: ClientCall | None, topic: str) -> TopicConfig | None:
        tc: TopicConfig | None = self.broker.topic_config_manager.select_topic_config(topic)
        return tc

    async def group_policy(self, call: ClientCall | None, group: str) -> tuple[bool, int]:
        manager = self.broker.subscription_group_manager
        return policy_of(manager.find_subscription_group_config(group) if group else None)

    def handle_refusal(self, broker_name: str) -> str | None:
        own = self.broker.config.broker_name
        if broker_name != own:
            return f"receipt handle belongs to broker {broker_name[:64]}, this endpoint serves {own}"
        return None

    async def served_broker(self, requested: str, topic: str) -> str:
        """The broker a receive runs on: this one, whatever queue the client names."""
        return str(self.broker.config.broker_name)

    async def send_queues(self, call: ClientCall, topic: str, tc: TopicConfig | None) -> list[tuple[str | None, int]]:
        """This broker's write queues of the topic (one when the topic is not here yet: auto-creation decides)."""
        return [(None, queue_id) for queue_id in range(max(tc.write_queue_nums if tc is not None else 1, 1))]

    async def heartbeat_targets(self, call: ClientCall) -> list[str | None]:
        return [None]

    async def commit_log_offset(self, call: ClientCall, group: str, topic: str, info: ExtraInfo) -> int | None:
        assert info.queue_offset is not None
        result = self.broker.store.get_message(group, topic, info.queue_id, info.queue_offset, 1)
        if not result.records:
            return None
        return int(decode_record(result.records[0]).commit_log_offset)
