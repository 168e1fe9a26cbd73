"""Minimal wire-protocol clients: a producer and a pull client, for mqadmin, tests and benchmarks.

No load balancing and no push consumption (the full Producer/PushConsumer is a later issue):

- :class:`AsyncSimpleProducer` / :class:`SimpleProducer` (blocking): route lookup on the name
  servers (falling back to the TBW102 template route for a topic that does not exist yet, so the
  broker auto-creates it, as RocketMQ's producer does), SEND_MESSAGE_V2 with the one-letter
  header keys, SEND_BATCH_MESSAGE with a batch body, a UNIQ_KEY per message (§5.9), round robin
  over the writable queues with retries on another queue. The async producer pipelines: any
  number of ``send`` calls may be in flight at once on one connection per broker.
- :class:`AsyncPullClient` / :class:`PullClient` (blocking): PULL_MESSAGE with the subscription
  in the request (sysFlag bit 2, so no heartbeat is needed to pull), tag re-filtering by string,
  offsets (query/update/min/max/search by time) and queue discovery. ``subscribe`` registers a
  subscription that heartbeats announce to the brokers (consumer connection info), and the
  client answers GET_CONSUMER_RUNNING_INFO.

Both send HEART_BEAT every 30 s once they talked to a broker (a broker closes client
connections registered by a heartbeat that stay silent for 120 s). Operations are plans (see
``brokers.engine.client.admin``) run by an AsyncDriver or a BlockingDriver.
"""
from __future__ import annotations

import asyncio
import datetime
import itertools
import json
import logging
import os
import random
import socket
import threading
import time
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from brokers.engine.client.admin import (
    CLIENT_ERROR,
    DEFAULT_TIMEOUT_S,
    AdminPlans,
    AsyncDriver,
    BlockingDriver,
    Call,
    Fanout,
    MQBrokerError,
    MQClientError,
    Plan,
    SubscriptionData,
    TopicRouteData,
    check,
    inflate_bodies,
)
from brokers.engine.common import json_compat, message_codec
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.common.constants import (
    AUTO_CREATE_TOPIC_KEY_TOPIC,
    DEFAULT_TOPIC_QUEUE_NUMS,
    MAX_MESSAGE_SIZE,
    MQ_VERSION_NAME,
    OFFSET_MOVED_EVENT,
    RETRY_GROUP_TOPIC_PREFIX,
    RMQ_SYS_TRANS_HALF_TOPIC,
    RMQ_SYS_TRANS_OP_HALF_TOPIC,
    SCHEDULE_TOPIC,
    SELF_TEST_TOPIC,
)
from brokers.engine.common.message import (
    PROPERTY_DELAY_TIME_LEVEL,
    PROPERTY_MAX_OFFSET,
    PROPERTY_MIN_OFFSET,
    PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX,
    PROPERTY_WAIT_STORE_MSG_OK,
    Message,
    MessageExt,
    properties_to_string,
    tag_hash,
)
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.validation import validate_group, validate_topic
from brokers.engine.remoting.blocking import BlockingRemotingClient
from brokers.engine.remoting.channel import ChannelContext
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.errors import RemotingError

log = logging.getLogger("brokers.engine.client")

DEFAULT_PRODUCER_GROUP = "DEFAULT_PRODUCER"  # RocketMQ's MixAll.DEFAULT_PRODUCER_GROUP
TOOLS_CONSUMER_GROUP = "TOOLS_CONSUMER"  # the group RocketMQ's tools pull with; brokers pre-create it
HEARTBEAT_INTERVAL_S = 30.0  # RocketMQ heartbeatBrokerInterval
ROUTE_TTL_S = 30.0  # RocketMQ pollNameServerInterval: routes older than this are refetched
COMPRESS_OVER = 4096  # compressMsgBodyOverHowmuch; bodies this size or larger are zlib-compressed
COMPRESS_LEVEL = 5  # RocketMQ's default zlib level
RETRY_TIMES_WHEN_SEND_FAILED = 2  # extra attempts on another queue (retryTimesWhenSendFailed)
PULL_SYS_FLAG_COMMIT_OFFSET = 0x1
PULL_SYS_FLAG_SUSPEND = 0x2
PULL_SYS_FLAG_SUBSCRIPTION = 0x4
SUB_ALL = "*"
# Topics producers may not send to (RocketMQ's TopicValidator.NOT_ALLOWED_SEND_TOPIC_SET).
NOT_ALLOWED_SEND_TOPICS = frozenset({SCHEDULE_TOPIC, RMQ_SYS_TRANS_HALF_TOPIC, RMQ_SYS_TRANS_OP_HALF_TOPIC, SELF_TEST_TOPIC, OFFSET_MOVED_EVENT})
# Send response codes after which another queue is tried (DefaultMQProducerImpl.sendDefaultImpl).
_RETRY_ON = frozenset({ResponseCode.TOPIC_NOT_EXIST, ResponseCode.SERVICE_NOT_AVAILABLE, ResponseCode.SYSTEM_ERROR, ResponseCode.NO_PERMISSION, ResponseCode.SYSTEM_BUSY})


class SendStatus(str, Enum):
    SEND_OK = "SEND_OK"
    FLUSH_DISK_TIMEOUT = "FLUSH_DISK_TIMEOUT"
    FLUSH_SLAVE_TIMEOUT = "FLUSH_SLAVE_TIMEOUT"
    SLAVE_NOT_AVAILABLE = "SLAVE_NOT_AVAILABLE"


_SEND_STATUS = {
    ResponseCode.SUCCESS: SendStatus.SEND_OK,
    ResponseCode.FLUSH_DISK_TIMEOUT: SendStatus.FLUSH_DISK_TIMEOUT,
    ResponseCode.FLUSH_SLAVE_TIMEOUT: SendStatus.FLUSH_SLAVE_TIMEOUT,
    ResponseCode.SLAVE_NOT_AVAILABLE: SendStatus.SLAVE_NOT_AVAILABLE,
}


class PullStatus(str, Enum):
    FOUND = "FOUND"
    NO_NEW_MSG = "NO_NEW_MSG"
    NO_MATCHED_MSG = "NO_MATCHED_MSG"
    OFFSET_ILLEGAL = "OFFSET_ILLEGAL"


_PULL_STATUS = {
    ResponseCode.SUCCESS: PullStatus.FOUND,
    ResponseCode.PULL_NOT_FOUND: PullStatus.NO_NEW_MSG,
    ResponseCode.PULL_RETRY_IMMEDIATELY: PullStatus.NO_MATCHED_MSG,
    ResponseCode.PULL_OFFSET_MOVED: PullStatus.OFFSET_ILLEGAL,
}


@dataclass(frozen=True, slots=True)
class SendResult:
    """Outcome of a stored send; ``msg_id`` is the UNIQ_KEY (comma-joined for a batch)."""

    status: SendStatus
    msg_id: str
    offset_msg_id: str  # store host + commit-log offset; comma-joined for a batch
    message_queue: MessageQueue
    queue_offset: int  # of the first message for a batch
    region_id: str = "DefaultRegion"


@dataclass(frozen=True, slots=True)
class PullResult:
    status: PullStatus
    next_begin_offset: int
    min_offset: int
    max_offset: int
    messages: tuple[MessageExt, ...] = ()
    suggest_which_broker_id: int = 0


# -- client identity ------------------------------------------------------------------------------


def local_ip() -> str:
    """The address RocketMQ clients put in their client id; 127.0.0.1 when there is no route."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))  # no packet is sent; picks the outgoing interface
            return s.getsockname()[0]
    except OSError:
        return "127.0.0.1"


def build_client_id(instance_name: str | None = None) -> str:
    """``<ip>@<instance>``, the instance defaulting to ``<pid>#<nanotime>`` as Java 4.9 does (§7.7)."""
    return f"{local_ip()}@{instance_name or f'{os.getpid()}#{time.monotonic_ns()}'}"


class UniqIdGenerator:
    """UNIQ_KEY values (§5.9): ip(4) + pid(2) + class-loader hash(4) + ms since month start(4) + counter(2)."""

    def __init__(self, ip: str | None = None, clock: Clock = SYSTEM_CLOCK) -> None:
        try:
            ip_bytes = socket.inet_aton(ip or local_ip())
        except OSError:
            ip_bytes = random.getrandbits(32).to_bytes(4, "big")
        fix = ip_bytes + (os.getpid() & 0xFFFF).to_bytes(2, "big") + random.getrandbits(32).to_bytes(4, "big")
        self._prefix = fix.hex().upper()
        self._clock = clock
        self._counter = itertools.count(random.getrandbits(16))
        self._month_start_ms, self._next_month_ms = self._month_bounds(clock.now_ms())

    @staticmethod
    def _month_bounds(now_ms: int) -> tuple[int, int]:
        now = datetime.datetime.fromtimestamp(now_ms / 1000).astimezone()
        start = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
        nxt = (start + datetime.timedelta(days=32)).replace(day=1)
        return int(start.timestamp() * 1000), int(nxt.timestamp() * 1000)

    def next_id(self) -> str:
        now = self._clock.now_ms()
        if now >= self._next_month_ms:
            self._month_start_ms, self._next_month_ms = self._month_bounds(now)
        diff = (now - self._month_start_ms) & 0xFFFFFFFF
        counter = next(self._counter) & 0xFFFF
        return self._prefix + f"{diff:08X}{counter:04X}"


# -- shared plans ---------------------------------------------------------------------------------


class _RouteEntry:
    __slots__ = ("route", "fetched", "provisional")

    def __init__(self, route: TopicRouteData, fetched: float, provisional: bool = False) -> None:
        self.route, self.fetched, self.provisional = route, fetched, provisional


class ClientPlans(AdminPlans):
    """Route cache and broker addressing shared by the producer and the pull client."""

    def __init__(self, namesrv_addrs: tuple[str, ...], group: str, *, clock: Clock = SYSTEM_CLOCK, instance_name: str | None = None,
                 timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        super().__init__(namesrv_addrs)
        self.group = validate_group(group)
        self.timeout_s = timeout_s
        self.clock = clock
        self.client_id = build_client_id(instance_name)
        self._routes: dict[str, _RouteEntry] = {}
        self._broker_addrs: set[str] = set()  # brokers this client talked to (heartbeat targets)
        self._lock = threading.Lock()

    def route(self, topic: str, *, refresh: bool = False, allow_template: bool = False) -> Plan[TopicRouteData]:
        """The topic's route from the cache, refetched when older than ROUTE_TTL_S or asked to.

        While one caller refetches, concurrent callers keep using the stale route. With
        ``allow_template``, a topic unknown to the name server is routed like TBW102 (the broker
        creates it on the first send).
        """
        now = self.clock.monotonic()
        entry = self._routes.get(topic)
        ttl = 1.0 if entry is not None and entry.provisional else ROUTE_TTL_S
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

    def broker_addr(self, topic: str, broker_name: str, *, allow_template: bool = False) -> Plan[str]:
        """The master address of ``broker_name`` for ``topic`` (refreshing the route once if unknown)."""
        route = yield from self.route(topic, allow_template=allow_template)
        addr = route.master_addr(broker_name)
        if addr is None:
            route = yield from self.route(topic, refresh=True, allow_template=allow_template)
            addr = route.master_addr(broker_name)
        if addr is None:
            raise MQClientError(CLIENT_ERROR, f"broker {broker_name!r} has no master serving topic {topic!r}")
        with self._lock:
            self._broker_addrs.add(addr)
        return addr

    def heartbeat_body(self) -> dict[str, Any]:
        return {"clientID": self.client_id, "consumerDataSet": [], "producerDataSet": []}

    def heartbeat(self) -> Plan[int]:
        """Send HEART_BEAT to every broker this client talked to; return how many answered."""
        with self._lock:
            addrs = sorted(self._broker_addrs)
        if not addrs:
            return 0
        body = json.dumps(self.heartbeat_body(), separators=(",", ":")).encode()
        replies = yield Fanout(tuple(Call(RequestCode.HEART_BEAT, body=body, addr=a) for a in addrs))
        ok = 0
        for addr, reply in zip(addrs, replies):
            if isinstance(reply, RemotingError) or reply.code != ResponseCode.SUCCESS:
                log.debug("heartbeat to %s failed: %s", addr, reply if isinstance(reply, RemotingError) else reply.remark)
            else:
                ok += 1
        return ok


def _template_route(topic: str, template: TopicRouteData) -> TopicRouteData:
    """Route a new topic like TBW102 with min(4, queues) per broker (MQClientInstance.updateTopicRouteInfoFromNameServer)."""
    queue_datas = tuple(
        replace(q, read_queue_nums=min(DEFAULT_TOPIC_QUEUE_NUMS, q.read_queue_nums), write_queue_nums=min(DEFAULT_TOPIC_QUEUE_NUMS, q.read_queue_nums))
        for q in template.queue_datas
    )
    return TopicRouteData(topic, queue_datas, template.broker_datas)


# -- producer -------------------------------------------------------------------------------------


class ProducerPlans(ClientPlans):
    def __init__(self, namesrv_addrs: tuple[str, ...], group: str, *, clock: Clock = SYSTEM_CLOCK, instance_name: str | None = None,
                 timeout_s: float = DEFAULT_TIMEOUT_S, retry_times: int = RETRY_TIMES_WHEN_SEND_FAILED, compress_over: int = COMPRESS_OVER) -> None:
        super().__init__(namesrv_addrs, group, clock=clock, instance_name=instance_name, timeout_s=timeout_s)
        self.retry_times = retry_times
        self.compress_over = compress_over
        self.uniq_ids = UniqIdGenerator(clock=clock)
        self._send_index = itertools.count(random.getrandbits(16))
        self._heartbeated: set[str] = set()

    def heartbeat_body(self) -> dict[str, Any]:
        return {"clientID": self.client_id, "consumerDataSet": [], "producerDataSet": [{"groupName": self.group}]}

    def _first_contact(self, addr: str) -> Plan[None]:
        """Register the producer group with a broker the first time we send to it."""
        with self._lock:
            if addr in self._heartbeated:
                return
            self._heartbeated.add(addr)
        body = json.dumps(self.heartbeat_body(), separators=(",", ":")).encode()
        try:
            yield Call(RequestCode.HEART_BEAT, body=body, addr=addr)
        except RemotingError:
            with self._lock:
                self._heartbeated.discard(addr)

    def publish_queues(self, topic: str) -> Plan[list[MessageQueue]]:
        route = yield from self.route(topic, allow_template=True)
        return route.publish_queues()

    def _select_queue(self, topic: str, last_broker: str | None) -> Plan[MessageQueue]:
        queues = yield from self.publish_queues(topic)
        if not queues:
            raise MQClientError(CLIENT_ERROR, f"topic {topic!r} has no writable queue")
        start = next(self._send_index)
        if last_broker is not None:
            for i in range(len(queues)):
                mq = queues[(start + i) % len(queues)]
                if mq.broker_name != last_broker:
                    return mq
        return queues[start % len(queues)]

    def _prepare(self, msg: Message) -> tuple[dict[str, str], bytes, int]:
        """Validate a message; return (properties with UNIQ_KEY and WAIT, wire body, sysFlag)."""
        validate_topic(msg.topic)
        if msg.topic in NOT_ALLOWED_SEND_TOPICS:
            raise MQClientError(CLIENT_ERROR, f"sending to topic {msg.topic!r} is not allowed")
        if not msg.body:
            raise MQClientError(CLIENT_ERROR, "the message body is empty")
        if len(msg.body) > MAX_MESSAGE_SIZE:
            raise MQClientError(CLIENT_ERROR, f"the message body is {len(msg.body)} bytes, the limit is {MAX_MESSAGE_SIZE}")
        props = msg.all_properties()
        props.setdefault(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, self.uniq_ids.next_id())
        props.setdefault(PROPERTY_WAIT_STORE_MSG_OK, "true")
        body, sys_flag = bytes(msg.body), 0
        if self.compress_over and len(body) >= self.compress_over:
            body, sys_flag = zlib.compress(body, COMPRESS_LEVEL), message_codec.COMPRESSED_FLAG
        return props, body, sys_flag

    def send(self, msg: Message, mq: MessageQueue | None = None) -> Plan[SendResult]:
        """Send one message to ``mq``, or round robin over writable queues (retrying another queue)."""
        props, body, sys_flag = self._prepare(msg)
        return (yield from self._send(RequestCode.SEND_MESSAGE_V2, msg.topic, props, body, sys_flag, msg.flag, mq, False, props[PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX]))

    def send_batch(self, msgs: Sequence[Message], mq: MessageQueue | None = None) -> Plan[SendResult]:
        """Send messages of one topic in one SEND_BATCH_MESSAGE; they get consecutive queue offsets."""
        if not msgs:
            raise MQClientError(CLIENT_ERROR, "the batch is empty")
        topic = msgs[0].topic
        entries = []
        for m in msgs:
            if m.topic != topic:
                raise MQClientError(CLIENT_ERROR, "every message of a batch must have the same topic")
            if topic.startswith(RETRY_GROUP_TOPIC_PREFIX) or m.properties.get(PROPERTY_DELAY_TIME_LEVEL):
                raise MQClientError(CLIENT_ERROR, "retry topics and delayed messages cannot be batched")
            validate_topic(m.topic)
            if not m.body:
                raise MQClientError(CLIENT_ERROR, "a message body in the batch is empty")
            props = m.all_properties()
            props.setdefault(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, self.uniq_ids.next_id())
            entries.append(message_codec.BatchEntry(m.flag, bytes(m.body), props))
        if topic in NOT_ALLOWED_SEND_TOPICS:
            raise MQClientError(CLIENT_ERROR, f"sending to topic {topic!r} is not allowed")
        body = message_codec.encode_batch_body(entries)
        if len(body) > MAX_MESSAGE_SIZE:
            raise MQClientError(CLIENT_ERROR, f"the batch is {len(body)} bytes, the limit is {MAX_MESSAGE_SIZE}")
        msg_id = ",".join(e.properties[PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX] for e in entries)
        return (yield from self._send(RequestCode.SEND_BATCH_MESSAGE, topic, {PROPERTY_WAIT_STORE_MSG_OK: "true"}, body, 0, 0, mq, True, msg_id))

    def _send(self, code: int, topic: str, props: dict[str, str], body: bytes, sys_flag: int, flag: int,
              mq: MessageQueue | None, batch: bool, msg_id: str) -> Plan[SendResult]:
        attempts = 1 if mq is not None else 1 + max(0, self.retry_times)
        last_error: RemotingError | None = None
        last_broker: str | None = None
        properties = properties_to_string(props)
        for _ in range(attempts):
            target = mq if mq is not None else (yield from self._select_queue(topic, last_broker))
            last_broker = target.broker_name
            addr = yield from self.broker_addr(topic, target.broker_name, allow_template=True)
            yield from self._first_contact(addr)
            ext: dict[str, object] = {
                "a": self.group, "b": topic, "c": AUTO_CREATE_TOPIC_KEY_TOPIC, "d": DEFAULT_TOPIC_QUEUE_NUMS,
                "e": target.queue_id, "f": sys_flag, "g": self.clock.now_ms(), "h": flag, "i": properties,
                "j": 0, "k": False, "m": batch, "n": target.broker_name,
            }
            try:
                reply = yield Call(code, ext, body, addr=addr, timeout_s=self.timeout_s)
            except RemotingError as exc:
                last_error = exc
                continue
            status = _SEND_STATUS.get(reply.code)  # type: ignore[call-overload]
            if status is None:
                last_error = MQBrokerError(reply.code, reply.remark, request_code=code, addr=addr)
                if reply.code == ResponseCode.TOPIC_NOT_EXIST:
                    self._routes.pop(topic, None)
                if reply.code in _RETRY_ON:
                    continue
                raise last_error
            queue = MessageQueue(topic, target.broker_name, int(reply.ext.get("queueId", target.queue_id)))
            return SendResult(status, msg_id, reply.ext.get("msgId", ""), queue, int(reply.ext.get("queueOffset", -1)), reply.ext.get("MSG_REGION", "DefaultRegion"))
        assert last_error is not None
        raise last_error


# -- pull client ----------------------------------------------------------------------------------


def build_subscription(topic: str, expression: str | None, sub_version: int) -> SubscriptionData:
    """A TAG subscription as RocketMQ's FilterAPI builds it: ``*`` has no tags; ``a || b`` two."""
    text = (expression or "").strip()
    if not text or text == SUB_ALL:
        return SubscriptionData(topic, SUB_ALL, (), (), sub_version)
    tags = tuple(dict.fromkeys(t.strip() for t in text.split("||") if t.strip()))
    if not tags:
        return SubscriptionData(topic, SUB_ALL, (), (), sub_version)
    return SubscriptionData(topic, text, tags, tuple(tag_hash(t) for t in tags), sub_version)


class PullPlans(ClientPlans):
    def __init__(self, namesrv_addrs: tuple[str, ...], group: str, *, clock: Clock = SYSTEM_CLOCK, instance_name: str | None = None,
                 timeout_s: float = DEFAULT_TIMEOUT_S, consume_from_where: str = "CONSUME_FROM_LAST_OFFSET",
                 message_model: str = "CLUSTERING") -> None:
        super().__init__(namesrv_addrs, group, clock=clock, instance_name=instance_name, timeout_s=timeout_s)
        self.consume_from_where = consume_from_where
        self.message_model = message_model
        self.subscriptions: dict[str, SubscriptionData] = {}
        self.start_timestamp = clock.now_ms()
        self._progress: dict[MessageQueue, tuple[int, int]] = {}  # mq -> (next offset, last pull time)

    def heartbeat_body(self) -> dict[str, Any]:
        consumers = []
        if self.subscriptions:
            consumers.append({
                "consumeFromWhere": self.consume_from_where,
                "consumeType": "CONSUME_ACTIVELY",
                "groupName": self.group,
                "messageModel": self.message_model,
                "subscriptionDataSet": [s.to_json() for s in self.subscriptions.values()],
                "unitMode": False,
            })
        return {"clientID": self.client_id, "consumerDataSet": consumers, "producerDataSet": []}

    def subscribe(self, topic: str, expression: str = SUB_ALL) -> Plan[int]:
        """Register a subscription and announce it to the brokers of the topic; return how many answered."""
        validate_topic(topic)
        self.subscriptions[topic] = build_subscription(topic, expression, self.clock.now_ms())
        route = yield from self.route(topic)
        with self._lock:
            self._broker_addrs.update(a for a in (b.master_addr for b in route.broker_datas) if a)
        return (yield from self.heartbeat())

    def fetch_subscribe_message_queues(self, topic: str) -> Plan[list[MessageQueue]]:
        """The topic's readable queues, sorted."""
        route = yield from self.route(topic, refresh=True)
        return route.subscribe_queues()

    def pull(self, mq: MessageQueue, offset: int, max_nums: int = 32, sub_expression: str = SUB_ALL,
             suspend_ms: int = 0, commit_offset: int | None = None) -> Plan[PullResult]:
        """Pull up to ``max_nums`` messages from ``offset``; long-poll up to ``suspend_ms`` when there is none."""
        sub = self.subscriptions.get(mq.topic)
        if sub is None or sub.sub_string != (sub_expression.strip() or SUB_ALL):
            sub = build_subscription(mq.topic, sub_expression, self.clock.now_ms())
        addr = yield from self.broker_addr(mq.topic, mq.broker_name)
        sys_flag = PULL_SYS_FLAG_SUBSCRIPTION
        if suspend_ms > 0:
            sys_flag |= PULL_SYS_FLAG_SUSPEND
        if commit_offset is not None:
            sys_flag |= PULL_SYS_FLAG_COMMIT_OFFSET
        ext = {
            "consumerGroup": self.group, "topic": mq.topic, "queueId": mq.queue_id, "queueOffset": offset,
            "maxMsgNums": max_nums, "sysFlag": sys_flag, "commitOffset": commit_offset if commit_offset is not None else 0,
            "suspendTimeoutMillis": max(0, suspend_ms), "subscription": sub.sub_string, "subVersion": sub.sub_version,
            "expressionType": sub.expression_type, "bname": mq.broker_name,
        }
        wait = self.timeout_s + (suspend_ms / 1000 if suspend_ms > 0 else 0)  # a parked pull answers by its suspend time
        reply = yield Call(RequestCode.PULL_MESSAGE, ext, addr=addr, timeout_s=wait)
        status = _PULL_STATUS.get(reply.code)  # type: ignore[call-overload]
        if status is None:
            raise MQBrokerError(reply.code, reply.remark, request_code=RequestCode.PULL_MESSAGE, addr=addr)
        next_begin = int(reply.ext.get("nextBeginOffset", offset))
        min_offset = int(reply.ext.get("minOffset", 0))
        max_offset = int(reply.ext.get("maxOffset", 0))
        messages: list[MessageExt] = []
        if status is PullStatus.FOUND and reply.body:
            messages = inflate_bodies(message_codec.decode_records(reply.body))
            if sub.tags_set:
                messages = [m for m in messages if m.tags in sub.tags_set]
            for m in messages:
                m.properties[PROPERTY_MIN_OFFSET] = str(min_offset)
                m.properties[PROPERTY_MAX_OFFSET] = str(max_offset)
        with self._lock:
            self._progress[mq] = (next_begin, self.clock.now_ms())
        return PullResult(status, next_begin, min_offset, max_offset, tuple(messages), int(reply.ext.get("suggestWhichBrokerId", 0) or 0))

    def _queue_call(self, code: int, mq: MessageQueue, **extra: object) -> Plan[Any]:
        addr = yield from self.broker_addr(mq.topic, mq.broker_name)
        ext: dict[str, object] = {"topic": mq.topic, "queueId": mq.queue_id, "bname": mq.broker_name, **extra}
        return (yield Call(code, ext, addr=addr))

    def query_offset(self, mq: MessageQueue, group: str | None = None) -> Plan[int]:
        """The group's committed offset of ``mq``; -1 when the broker has none (QUERY_NOT_FOUND)."""
        reply = yield from self._queue_call(RequestCode.QUERY_CONSUMER_OFFSET, mq, consumerGroup=group or self.group)
        if reply.code == ResponseCode.QUERY_NOT_FOUND:
            return -1
        return int(check(reply, request_code=RequestCode.QUERY_CONSUMER_OFFSET).ext.get("offset", -1))

    def update_offset(self, mq: MessageQueue, offset: int, group: str | None = None) -> Plan[None]:
        """Commit the group's offset of ``mq`` on its broker (waiting for the answer)."""
        reply = yield from self._queue_call(RequestCode.UPDATE_CONSUMER_OFFSET, mq, consumerGroup=group or self.group, commitOffset=offset)
        check(reply, request_code=RequestCode.UPDATE_CONSUMER_OFFSET)

    def max_offset(self, mq: MessageQueue) -> Plan[int]:
        reply = yield from self._queue_call(RequestCode.GET_MAX_OFFSET, mq)
        return int(check(reply, request_code=RequestCode.GET_MAX_OFFSET).ext.get("offset", 0))

    def min_offset(self, mq: MessageQueue) -> Plan[int]:
        reply = yield from self._queue_call(RequestCode.GET_MIN_OFFSET, mq)
        return int(check(reply, request_code=RequestCode.GET_MIN_OFFSET).ext.get("offset", 0))

    def search_offset(self, mq: MessageQueue, timestamp_ms: int) -> Plan[int]:
        """The offset of the message stored at (or nearest to) ``timestamp_ms``."""
        reply = yield from self._queue_call(RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, mq, timestamp=timestamp_ms)
        return int(check(reply, request_code=RequestCode.SEARCH_OFFSET_BY_TIMESTAMP).ext.get("offset", 0))

    def earliest_msg_store_time(self, mq: MessageQueue) -> Plan[int]:
        reply = yield from self._queue_call(RequestCode.GET_EARLIEST_MSG_STORETIME, mq)
        return int(check(reply, request_code=RequestCode.GET_EARLIEST_MSG_STORETIME).ext.get("timestamp", -1))

    def running_info_body(self) -> bytes:
        """The ConsumerRunningInfo body this client answers GET_CONSUMER_RUNNING_INFO with."""
        with self._lock:
            progress = dict(self._progress)
        mq_table = {mq: {"commitOffset": off, "lastPullTimestamp": ts, "cachedMsgCount": 0, "droped": False, "locked": False} for mq, (off, ts) in progress.items()}
        info = {
            "properties": {
                "PROP_NAMESERVER_ADDR": ";".join(self.namesrv_addrs),
                "PROP_CONSUME_TYPE": "CONSUME_ACTIVELY",
                "PROP_CONSUMEORDERLY": "false",
                "PROP_THREADPOOL_CORE_SIZE": "-1",
                "PROP_CLIENT_VERSION": MQ_VERSION_NAME,
                "PROP_CONSUMER_START_TIMESTAMP": str(self.start_timestamp),
                "consumeFromWhere": self.consume_from_where,
                "messageModel": self.message_model,
            },
            "subscriptionSet": [s.to_json() for s in self.subscriptions.values()],
            "mqTable": mq_table,
            "statusTable": {},
        }
        return json_compat.dumps(info).encode("utf-8")


def _running_info_handler(plans: PullPlans):
    async def handle(ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        group = request.ext_fields.get("consumerGroup")
        if group != plans.group:
            return request.response(ResponseCode.SYSTEM_ERROR, f"The Consumer Group <{group}> not exist in this consumer")
        return request.response(ResponseCode.SUCCESS, body=plans.running_info_body())

    return handle


async def _ignore(ctx: ChannelContext, request: RemotingCommand) -> None:
    return None  # NOTIFY_CONSUMER_IDS_CHANGED: a pull client does no rebalancing


# -- async and blocking front ends ----------------------------------------------------------------


class _AsyncClient:
    driver: AsyncDriver
    plans: ClientPlans

    def _init_async(self, heartbeat_interval_s: float | None) -> None:
        self.heartbeat_interval_s = heartbeat_interval_s
        self._heartbeat_task: asyncio.Task | None = None

    @property
    def client_id(self) -> str:
        return self.plans.client_id

    def _start_heartbeats(self) -> None:
        if self._heartbeat_task is None and self.heartbeat_interval_s:
            self._heartbeat_task = asyncio.get_running_loop().create_task(self._heartbeat_loop())

    async def _heartbeat_loop(self) -> None:
        while True:
            await asyncio.sleep(self.heartbeat_interval_s or HEARTBEAT_INTERVAL_S)
            try:
                await self.driver.run(self.plans.heartbeat())
            except RemotingError as exc:
                log.debug("heartbeat failed: %s", exc)

    async def heartbeat(self) -> int:
        """Send HEART_BEAT now to every broker this client talked to; return how many answered."""
        return await self.driver.run(self.plans.heartbeat())

    async def examine_topic_route_info(self, topic: str) -> TopicRouteData:
        return await self.driver.run(self.plans.route(topic, refresh=True))

    async def close(self) -> None:
        if self._heartbeat_task is not None:
            self._heartbeat_task.cancel()
            await asyncio.gather(self._heartbeat_task, return_exceptions=True)
            self._heartbeat_task = None
        await self.driver.close()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


class _BlockingClient:
    driver: BlockingDriver
    plans: ClientPlans

    def _init_blocking(self, heartbeat_interval_s: float | None) -> None:
        self.heartbeat_interval_s = heartbeat_interval_s
        self._heartbeat_thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._start_lock = threading.Lock()

    @property
    def client_id(self) -> str:
        return self.plans.client_id

    def _start_heartbeats(self) -> None:
        if self._heartbeat_thread is not None or not self.heartbeat_interval_s:
            return
        with self._start_lock:
            if self._heartbeat_thread is None and not self._stop.is_set():
                self._heartbeat_thread = threading.Thread(target=self._heartbeat_loop, name="mq-client-heartbeat", daemon=True)
                self._heartbeat_thread.start()

    def _heartbeat_loop(self) -> None:
        while not self._stop.wait(self.heartbeat_interval_s or HEARTBEAT_INTERVAL_S):
            try:
                self.driver.run(self.plans.heartbeat())
            except RemotingError as exc:
                log.debug("heartbeat failed: %s", exc)

    def heartbeat(self) -> int:
        """Send HEART_BEAT now to every broker this client talked to; return how many answered."""
        return self.driver.run(self.plans.heartbeat())

    def examine_topic_route_info(self, topic: str) -> TopicRouteData:
        return self.driver.run(self.plans.route(topic, refresh=True))

    def close(self) -> None:
        self._stop.set()
        if self._heartbeat_thread is not None:
            self._heartbeat_thread.join(timeout=5.0)
            self._heartbeat_thread = None
        self.driver.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncSimpleProducer(_AsyncClient):
    """Asyncio producer; ``send`` may be awaited concurrently from many tasks (pipelined)."""

    def __init__(self, namesrv_addrs: str | Iterable[str], group: str = DEFAULT_PRODUCER_GROUP, *, timeout_s: float = DEFAULT_TIMEOUT_S,
                 remoting: RemotingClient | None = None, clock: Clock = SYSTEM_CLOCK, instance_name: str | None = None,
                 retry_times: int = RETRY_TIMES_WHEN_SEND_FAILED, compress_over: int = COMPRESS_OVER,
                 heartbeat_interval_s: float | None = HEARTBEAT_INTERVAL_S) -> None:
        self.driver = AsyncDriver(namesrv_addrs, timeout_s, remoting)
        self.plans = ProducerPlans(self.driver.namesrv_addrs, group, clock=clock, instance_name=instance_name,
                                   timeout_s=timeout_s, retry_times=retry_times, compress_over=compress_over)
        self._init_async(heartbeat_interval_s)

    async def send(self, msg: Message, mq: MessageQueue | None = None) -> SendResult:
        """Send one message; to ``mq`` if given, else round robin over the writable queues."""
        self._start_heartbeats()
        return await self.driver.run(self.plans.send(msg, mq))

    async def send_batch(self, msgs: Sequence[Message], mq: MessageQueue | None = None) -> SendResult:
        """Send messages of one topic as one batch (consecutive offsets in one queue)."""
        self._start_heartbeats()
        return await self.driver.run(self.plans.send_batch(list(msgs), mq))

    async def fetch_publish_message_queues(self, topic: str) -> list[MessageQueue]:
        return await self.driver.run(self.plans.publish_queues(topic))


class SimpleProducer(_BlockingClient):
    """Blocking, thread-safe producer (same behaviour as AsyncSimpleProducer)."""

    def __init__(self, namesrv_addrs: str | Iterable[str], group: str = DEFAULT_PRODUCER_GROUP, *, timeout_s: float = DEFAULT_TIMEOUT_S,
                 remoting: BlockingRemotingClient | None = None, clock: Clock = SYSTEM_CLOCK, instance_name: str | None = None,
                 retry_times: int = RETRY_TIMES_WHEN_SEND_FAILED, compress_over: int = COMPRESS_OVER,
                 heartbeat_interval_s: float | None = HEARTBEAT_INTERVAL_S) -> None:
        self.driver = BlockingDriver(namesrv_addrs, timeout_s, remoting)
        self.plans = ProducerPlans(self.driver.namesrv_addrs, group, clock=clock, instance_name=instance_name,
                                   timeout_s=timeout_s, retry_times=retry_times, compress_over=compress_over)
        self._init_blocking(heartbeat_interval_s)

    def send(self, msg: Message, mq: MessageQueue | None = None) -> SendResult:
        self._start_heartbeats()
        return self.driver.run(self.plans.send(msg, mq))

    def send_batch(self, msgs: Sequence[Message], mq: MessageQueue | None = None) -> SendResult:
        self._start_heartbeats()
        return self.driver.run(self.plans.send_batch(list(msgs), mq))

    def fetch_publish_message_queues(self, topic: str) -> list[MessageQueue]:
        return self.driver.run(self.plans.publish_queues(topic))


class AsyncPullClient(_AsyncClient):
    """Asyncio pull client for one consumer group (default TOOLS_CONSUMER, as RocketMQ's tools)."""

    def __init__(self, namesrv_addrs: str | Iterable[str], group: str = TOOLS_CONSUMER_GROUP, *, timeout_s: float = DEFAULT_TIMEOUT_S,
                 remoting: RemotingClient | None = None, clock: Clock = SYSTEM_CLOCK, instance_name: str | None = None,
                 heartbeat_interval_s: float | None = HEARTBEAT_INTERVAL_S) -> None:
        self.driver = AsyncDriver(namesrv_addrs, timeout_s, remoting)
        self.plans = PullPlans(self.driver.namesrv_addrs, group, clock=clock, instance_name=instance_name, timeout_s=timeout_s)
        self.driver.remoting.register_processor(RequestCode.GET_CONSUMER_RUNNING_INFO, _running_info_handler(self.plans))
        self.driver.remoting.register_processor(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, _ignore)
        self._init_async(heartbeat_interval_s)

    @property
    def group(self) -> str:
        return self.plans.group

    async def subscribe(self, topic: str, expression: str = SUB_ALL) -> int:
        """Register a subscription and heartbeat it to the topic's brokers; return how many answered."""
        self._start_heartbeats()
        return await self.driver.run(self.plans.subscribe(topic, expression))

    async def pull(self, mq: MessageQueue, offset: int, max_nums: int = 32, sub_expression: str = SUB_ALL,
                   suspend_ms: int = 0, commit_offset: int | None = None) -> PullResult:
        return await self.driver.run(self.plans.pull(mq, offset, max_nums, sub_expression, suspend_ms, commit_offset))

    async def fetch_subscribe_message_queues(self, topic: str) -> list[MessageQueue]:
        return await self.driver.run(self.plans.fetch_subscribe_message_queues(topic))

    async def query_offset(self, mq: MessageQueue, group: str | None = None) -> int:
        return await self.driver.run(self.plans.query_offset(mq, group))

    async def update_offset(self, mq: MessageQueue, offset: int, group: str | None = None) -> None:
        await self.driver.run(self.plans.update_offset(mq, offset, group))

    async def max_offset(self, mq: MessageQueue) -> int:
        return await self.driver.run(self.plans.max_offset(mq))

    async def min_offset(self, mq: MessageQueue) -> int:
        return await self.driver.run(self.plans.min_offset(mq))

    async def search_offset(self, mq: MessageQueue, timestamp_ms: int) -> int:
        return await self.driver.run(self.plans.search_offset(mq, timestamp_ms))

    async def earliest_msg_store_time(self, mq: MessageQueue) -> int:
        return await self.driver.run(self.plans.earliest_msg_store_time(mq))


class PullClient(_BlockingClient):
    """Blocking, thread-safe pull client (same behaviour as AsyncPullClient)."""

    def __init__(self, namesrv_addrs: str | Iterable[str], group: str = TOOLS_CONSUMER_GROUP, *, timeout_s: float = DEFAULT_TIMEOUT_S,
                 remoting: BlockingRemotingClient | None = None, clock: Clock = SYSTEM_CLOCK, instance_name: str | None = None,
                 heartbeat_interval_s: float | None = HEARTBEAT_INTERVAL_S) -> None:
        self.driver = BlockingDriver(namesrv_addrs, timeout_s, remoting)
        self.plans = PullPlans(self.driver.namesrv_addrs, group, clock=clock, instance_name=instance_name, timeout_s=timeout_s)
        self.driver.remoting.register_processor(RequestCode.GET_CONSUMER_RUNNING_INFO, _running_info_handler(self.plans))
        self.driver.remoting.register_processor(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, _ignore)
        self._init_blocking(heartbeat_interval_s)

    @property
    def group(self) -> str:
        return self.plans.group

    def subscribe(self, topic: str, expression: str = SUB_ALL) -> int:
        self._start_heartbeats()
        return self.driver.run(self.plans.subscribe(topic, expression))

    def pull(self, mq: MessageQueue, offset: int, max_nums: int = 32, sub_expression: str = SUB_ALL,
             suspend_ms: int = 0, commit_offset: int | None = None) -> PullResult:
        return self.driver.run(self.plans.pull(mq, offset, max_nums, sub_expression, suspend_ms, commit_offset))

    def fetch_subscribe_message_queues(self, topic: str) -> list[MessageQueue]:
        return self.driver.run(self.plans.fetch_subscribe_message_queues(topic))

    def query_offset(self, mq: MessageQueue, group: str | None = None) -> int:
        return self.driver.run(self.plans.query_offset(mq, group))

    def update_offset(self, mq: MessageQueue, offset: int, group: str | None = None) -> None:
        self.driver.run(self.plans.update_offset(mq, offset, group))

    def max_offset(self, mq: MessageQueue) -> int:
        return self.driver.run(self.plans.max_offset(mq))

    def min_offset(self, mq: MessageQueue) -> int:
        return self.driver.run(self.plans.min_offset(mq))

    def search_offset(self, mq: MessageQueue, timestamp_ms: int) -> int:
        return self.driver.run(self.plans.search_offset(mq, timestamp_ms))

    def earliest_msg_store_time(self, mq: MessageQueue) -> int:
        return self.driver.run(self.plans.earliest_msg_store_time(mq))


SimplePuller = PullClient  # the name the brief and mqadmin use
AsyncSimplePuller = AsyncPullClient
