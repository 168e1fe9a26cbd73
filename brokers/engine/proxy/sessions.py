"""The 5.x clients the endpoint serves: one :class:`Session` per client id, with the settings the
client sent on its Telemetry stream and the channel its requests run on (a :class:`LocalChannel` in a
broker, a :class:`~.remote_channel.RemoteChannel` in the cluster-mode proxy: the backend makes it).

A session starts with the first call that names a client id and ends when the client says
NotifyClientTermination, or when it has not called for ``expire_s`` (its heartbeats come every
10 s); ending it closes the channel, which drops the client from the broker's groups as a closed
connection does. ``max_clients`` bounds the table: a newcomer past it is refused (RESOURCE_EXHAUSTED)
while known clients keep working.

The settings answered to a client (:func:`merged_settings`) are RocketMQ 5 proxy's: for a producer
a retry policy (3 attempts, exponential backoff 10 ms..1 s) and ``max_body_size`` = the broker's
maxMessageSize, with message types validated; for a consumer the receive batch size (32), the
long-polling timeout (20 s), ``fifo`` from the group's consumeMessageOrderly and max attempts =
the group's retryMaxTimes + 1 with RocketMQ's default backoff (1 s, 5 s, 10 s, 30 s, then minutes);
and always a ``metric`` entry (off): the Python client 5.1.2 fails reading settings without it.
Settings naming more than ``MAX_SETTINGS_ENTRIES`` subscriptions or publishing topics, or larger than
``MAX_SETTINGS_BYTES``, are refused (:func:`check_settings_size`): the session keeps them, and its
heartbeats carry them to the brokers every 10 s.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any
from collections.abc import Callable
from dataclasses import dataclass, field

from google.protobuf.duration_pb2 import Duration
from brokers.engine.proxy.stubs import definition_pb2 as pb

from brokers.engine.common.clock import Clock
from brokers.engine.proxy.auth import Caller
from brokers.engine.proxy.convert import ProxyError
from brokers.engine.proxy.local_channel import LocalChannel
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand

log = logging.getLogger("brokers.engine.proxy")

RECEIVE_BATCH_SIZE = 32
LONG_POLLING_TIMEOUT_MS = 20_000
PRODUCER_MAX_ATTEMPTS = 3
# RocketMQ's default group retry policy (CUSTOMIZED): the delay levels from 1 s on.
MAX_SETTINGS_ENTRIES = 1_000  # subscriptions, and publishing topics, in a client's settings
MAX_SETTINGS_BYTES = 64 * 1024  # a client's settings, as the session keeps them
CONSUMER_BACKOFF_S = (1, 5, 10, 30, 60, 120, 180, 240, 300, 360, 420, 480, 540, 600, 1200, 1800, 3600, 7200)


class TooManyClients(Exception):
    """The endpoint serves ``max_clients`` client ids already."""


@dataclass(slots=True)
class Session:
    client_id: str
    channel: Any  # a LocalChannel (local mode) or a RemoteChannel (cluster mode): backend.SessionChannel
    language: str
    version: str
    last_seen: float
    settings: pb.Settings | None = None
    groups: set[str] = field(default_factory=set)  # consumer groups it heartbeated for
    producer_topics: set[str] = field(default_factory=set)
    owner: str | None = None  # the access key of its first signed call; None: unsigned (ACL off, white address)
    ended: asyncio.Future[None] | None = None  # resolved when it ends: its Telemetry streams end with it
    last_heartbeat: tuple[float, Any] | None = None  # (monotonic time, what it said) of its last heartbeat sent on

    def until_ended(self) -> asyncio.Future[None]:
        if self.ended is None:
            self.ended = asyncio.get_running_loop().create_future()
        return self.ended

    @property
    def client_type(self) -> int:
        client_type: int = self.settings.client_type if self.settings is not None else pb.CLIENT_TYPE_UNSPECIFIED
        return client_type


class ClientCall:
    """One call: its client's session and the caller the call itself authenticated as. Requests are
    checked against ``caller``, never against another call's (one client id may be used by calls signed
    by different accounts, concurrently: a session-wide caller would let one borrow the other's rights)."""

    __slots__ = ("session", "caller")

    def __init__(self, session: Session, caller: Caller) -> None:
        self.session = session
        self.caller = caller

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session, name)


class Sessions:
    def __init__(
        self,
        clock: Clock,
        *,
        max_clients: int,
        expire_s: float,
        on_close: Callable[[Any], None],
        new_channel: Callable[[str, str, str], Any] = LocalChannel,
    ) -> None:
        self.clock = clock
        self.new_channel = new_channel  # (client id, remote address, local address) -> the session's channel
        self.max_clients = max_clients
        self.expire_s = expire_s
        self.on_close = on_close
        self._table: dict[str, Session] = {}

    def __len__(self) -> int:
        return len(self._table)

    def get(self, client_id: str) -> Session | None:
        return self._table.get(client_id)

    def all(self) -> list[Session]:
        return list(self._table.values())

    def touch(self, client_id: str, language: str, version: str, remote_addr: str, local_addr: str = "") -> Session:
        """The client's session, started now if new (TooManyClients past the cap)."""
        session = self._table.get(client_id)
        now = self.clock.monotonic()
        settings, owner = None, None
        if session is not None and session.channel.closed:  # the broker expired it (no heartbeat for 120 s): start over
            settings, owner = session.settings, session.owner
            self.end(client_id, "its channel was closed by the broker")
            session = None
        if session is None:
            if len(self._table) >= self.max_clients:
                raise TooManyClients(f"the gRPC endpoint serves {self.max_clients} clients already (grpc_max_clients)")
            session = Session(client_id, self.new_channel(client_id, remote_addr, local_addr), language, version, now)
            session.channel.responder = lambda request, s=session: running_info(s, request)
            session.settings = settings
            session.owner = owner
            self._table[client_id] = session
            log.info("5.x client %s (%s %s) from %s", client_id, language, version, remote_addr)
        session.last_seen = now
        return session

    def end(self, client_id: str, why: str) -> None:
        session = self._table.pop(client_id, None)
        if session is not None:
            log.info("5.x client %s ended: %s", client_id, why)
            if session.ended is not None and not session.ended.done():
                session.ended.set_result(None)
            session.channel.close()
            self.on_close(session.channel)

    def expire(self) -> int:
        """End the sessions silent for longer than ``expire_s``; return how many."""
        cutoff = self.clock.monotonic() - self.expire_s
        stale = [cid for cid, s in self._table.items() if s.last_seen < cutoff]
        for client_id in stale:
            self.end(client_id, f"no call for {self.expire_s:.0f} s")
        return len(stale)

    def close_all(self) -> None:
        for client_id in list(self._table):
            self.end(client_id, "endpoint stopped")


def check_settings_size(settings: pb.Settings) -> None:
    """ProxyError naming the limit when a client's settings are larger than a session keeps: its heartbeats
    carry them to every broker (subscriptions and publishing topics) every 10 s."""
    entries = (
        ("subscriptions", len(settings.subscription.subscriptions)),
        ("publishing topics", len(settings.publishing.topics)),
    )
    for what, count in entries:
        if count > MAX_SETTINGS_ENTRIES:
            raise ProxyError(pb.BAD_REQUEST, f"the settings name {count} {what}, max is {MAX_SETTINGS_ENTRIES}")
    size = settings.ByteSize()
    if size > MAX_SETTINGS_BYTES:
        raise ProxyError(pb.PAYLOAD_TOO_LARGE, f"the settings take {size} bytes, max is {MAX_SETTINGS_BYTES}")


def _duration(ms: int) -> Duration:
    d = Duration()
    d.FromMilliseconds(ms)
    return d


def merged_settings(client: pb.Settings, *, max_body_size: int, fifo: bool, max_attempts: int) -> pb.Settings:
    """What the endpoint answers to a client's settings (see the module docstring)."""
    out = pb.Settings()
    out.CopyFrom(client)
    if client.client_type == pb.PRODUCER:
        out.backoff_policy.max_attempts = PRODUCER_MAX_ATTEMPTS
        exp = out.backoff_policy.exponential_backoff
        exp.initial.CopyFrom(_duration(10))
        exp.max.CopyFrom(_duration(1000))
        exp.multiplier = 2.0
        out.publishing.max_body_size = max_body_size
        out.publishing.validate_message_type = True
    elif client.HasField("subscription") or client.client_type in (pb.PUSH_CONSUMER, pb.SIMPLE_CONSUMER):
        out.subscription.receive_batch_size = RECEIVE_BATCH_SIZE
        out.subscription.long_polling_timeout.CopyFrom(_duration(LONG_POLLING_TIMEOUT_MS))
        out.subscription.fifo = fifo
        out.backoff_policy.max_attempts = max_attempts
        out.backoff_policy.ClearField("exponential_backoff")
        backoff = out.backoff_policy.customized_backoff
        del backoff.next[:]
        for seconds in CONSUMER_BACKOFF_S:
            backoff.next.add().CopyFrom(_duration(seconds * 1000))
    out.metric.on = False
    return out


def parse_version(text: str) -> int:
    """A 5.x client's version string as RocketMQ's MQVersion ordinal (``5.1.2`` -> V5_1_2), 0 if unreadable."""
    parts = text.split(".")
    try:
        major, minor, patch = (int(p) for p in (parts + ["0", "0"])[:3])
    except ValueError:
        return 0
    if major != 5 or not (0 <= minor < 10 and 0 <= patch < 10):
        return 0
    return 412 + minor * 20 + patch * 2 + 1  # V5_0_0_SNAPSHOT is 412; each release follows its snapshot


_CLIENT_TYPES = {pb.PRODUCER: "PRODUCER", pb.PUSH_CONSUMER: "PUSH_CONSUMER", pb.SIMPLE_CONSUMER: "SIMPLE_CONSUMER"}


def running_info(session: Session, request: RemotingCommand) -> RemotingCommand | None:
    """GET_CONSUMER_RUNNING_INFO for a 5.x client: what its settings say (a 5.x client has no such
    command; RocketMQ's proxy has no answer at all). None for any other request."""
    if request.code != RequestCode.GET_CONSUMER_RUNNING_INFO:
        return None
    settings = session.settings
    props = {
        "PROP_CLIENT_VERSION": session.version,
        "PROP_CONSUME_TYPE": "CONSUME_POP",
        "language": session.language,
        "protocol": "gRPC (RocketMQ 5.x, apache.rocketmq.v2)",
        "clientAddr": session.channel.remote_addr,
        "source": "the client's settings, as the gRPC endpoint holds them",
    }
    subs = []
    if settings is not None:
        props["clientType"] = _CLIENT_TYPES.get(settings.client_type, str(settings.client_type))
        sub = settings.subscription
        props.update(
            {
                "PROP_CONSUMEORDERLY": str(sub.fifo).lower(),
                "receiveBatchSize": str(sub.receive_batch_size),
                "longPollingTimeoutMs": str(sub.long_polling_timeout.ToMilliseconds()),
                "maxDeliveryAttempts": str(settings.backoff_policy.max_attempts),
                "requestTimeoutMs": str(settings.request_timeout.ToMilliseconds()),
            }
        )
        if settings.user_agent.version:
            props["userAgent"] = (
                f"{pb.Language.Name(settings.user_agent.language)} {settings.user_agent.version} "
                f"{settings.user_agent.platform} {settings.user_agent.hostname}".strip()
            )
        for entry in sub.subscriptions:
            subs.append(
                {
                    "topic": entry.topic.name,
                    "subString": entry.expression.expression or "*",
                    "expressionType": "SQL92" if entry.expression.type == pb.SQL else "TAG",
                    "subVersion": 0,
                }
            )
    body = {"properties": props, "subscriptionSet": subs, "mqTable": {}, "statusTable": {}}
    return request.response(ResponseCode.SUCCESS, None, None, json.dumps(body).encode())
