"""MQAdminClient: every admin call the console needs, over the RocketMQ 4.x wire protocol.

Each operation is written once, as a generator that yields the requests it needs (a
:class:`Call`, or a :class:`Fanout` of calls sent together) and receives the replies; it builds
the request headers and parses the bodies and never does I/O itself. Two thin drivers run
these plans:

- :class:`AsyncDriver` over :class:`~brokers.engine.remoting.client.RemotingClient` (asyncio;
  fanouts run concurrently), behind :class:`MQAdminClient`;
- :class:`BlockingDriver` over :class:`~brokers.engine.remoting.blocking.BlockingRemotingClient`
  (thread-safe, for Django and Celery), behind :class:`BlockingMQAdminClient`.

A call without an address goes to the name servers: each is tried in turn, starting from the
last one that answered, until one answers. Failures are all :class:`RemotingError` subclasses:
:class:`MQBrokerError` for a non-success response (carrying ``code`` and ``remark``),
:class:`MQClientError` for client-side refusals, and the transport's RemotingConnectError /
RemotingTimeoutError when nobody answered. Illegal topic or group names and topic configs are
refused before any request leaves, with InvalidNameError / InvalidTopicConfigError (ValueError).
Results are frozen dataclasses; bodies are read with the tolerant fastjson reader (bare integer
keys, inline MessageQueue keys).
"""
from __future__ import annotations

import asyncio
import functools
import inspect
import zlib
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from brokers.engine.common import json_compat, message_codec
from brokers.engine.common.constants import AUTO_CREATE_TOPIC_KEY_TOPIC, MASTER_ID, RETRY_GROUP_TOPIC_PREFIX
from brokers.engine.common.message import PROPERTY_KEYS, PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, MessageExt
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.perm import PERM_READ, PERM_WRITE
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.common.validation import validate_group, validate_topic
from brokers.engine.remoting.blocking import BlockingRemotingClient
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.errors import RemotingConnectError, RemotingError, ResponseError

__all__ = [
    "AdminPlans", "AsyncDriver", "BlockingDriver", "BlockingMQAdminClient", "BrokerData", "BrokerInfo", "Call",
    "ClusterInfo", "ConsumeStats", "ConsumeStatus", "Connection", "ConsumerConnection",
    "ConsumerRunningInfo", "Fanout", "MQAdminClient", "MQBrokerError", "MQClientError",
    "OffsetWrapper", "Plan", "ProcessQueueInfo", "ProducerConnection", "QueueData", "Reply",
    "SubscriptionData", "TopicOffset", "TopicRouteData", "TopicStats", "parse_namesrv_addrs",
]

T = TypeVar("T")
DEFAULT_TIMEOUT_S = 3.0  # RocketMQ's mqClientApiTimeout
_COMPRESSION_TYPE_MASK = 0x700  # message sysFlag bits 8-10
_COMPRESSION_ZLIB = 0x300
MAX_TIMESTAMP = (1 << 63) - 1  # Long.MAX_VALUE, the open end of a QUERY_MESSAGE time range
ORDER_TOPIC_CONFIG = "ORDER_TOPIC_CONFIG"  # name server KV namespace of order-topic layouts

# -- errors -------------------------------------------------------------------------------------

CLIENT_ERROR = -1  # code of failures detected on the client side (MQClientException's -1)

_FRIENDLY = {
    ResponseCode.SYSTEM_ERROR: "the server failed to process the request",
    ResponseCode.SYSTEM_BUSY: "the server is busy, try again later",
    ResponseCode.REQUEST_CODE_NOT_SUPPORTED: "the server does not support this request",
    ResponseCode.FLUSH_DISK_TIMEOUT: "stored, but the disk flush was not confirmed in time",
    ResponseCode.SLAVE_NOT_AVAILABLE: "stored, but no slave is available",
    ResponseCode.FLUSH_SLAVE_TIMEOUT: "stored, but the slave did not confirm in time",
    ResponseCode.MESSAGE_ILLEGAL: "the message is illegal (too large, or bad properties)",
    ResponseCode.SERVICE_NOT_AVAILABLE: "the broker's store is not writable",
    ResponseCode.NO_PERMISSION: "no permission for this operation on the broker or topic",
    ResponseCode.TOPIC_NOT_EXIST: "the topic does not exist",
    ResponseCode.TOPIC_EXIST_ALREADY: "the topic exists already",
    ResponseCode.QUERY_NOT_FOUND: "nothing found",
    ResponseCode.SUBSCRIPTION_PARSE_FAILED: "the subscription expression does not parse",
    ResponseCode.SUBSCRIPTION_NOT_EXIST: "the group has no subscription for this topic",
    ResponseCode.SUBSCRIPTION_NOT_LATEST: "the subscription is not the latest",
    ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST: "the consumer group does not exist",
    ResponseCode.CONSUMER_NOT_ONLINE: "the consumer group is not online",
    ResponseCode.CONSUME_MSG_TIMEOUT: "the consumer did not answer in time",
    ResponseCode.FLOW_CONTROL: "flow control, try again later",
}


class MQClientError(ResponseError):
    """An admin or client call failed; ``code`` is a response code, or -1 for a client-side check.

    A subclass of RemotingError, so ``except RemotingError`` catches every failure of a call.
    """

    def __init__(self, code: int, remark: str | None, *, request_code: int | None = None, addr: str | None = None) -> None:
        super().__init__(code, remark, request_code=request_code, addr=addr)

    @property
    def code_name(self) -> str:
        try:
            return ResponseCode(self.code).name
        except ValueError:
            return "CLIENT_ERROR" if self.code == CLIENT_ERROR else "UNKNOWN"

    def _describe(self) -> str:
        if self.code == CLIENT_ERROR:
            return self.remark or "client error"
        friendly = _FRIENDLY.get(self.code, "the request failed")  # type: ignore[call-overload]
        where = f" at {self.addr}" if self.addr else ""
        remark = f": {self.remark.strip()}" if self.remark and self.remark.strip() else ""
        return f"{friendly} ({self.code_name}, code {self.code}){where}{remark}"

    def __str__(self) -> str:
        return self._describe()


class MQBrokerError(MQClientError):
    """A name server or broker answered with a non-success code."""


# -- call plans and drivers ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Call:
    """One request of a plan; ``addr=None`` means "the name servers, in turn"."""

    code: int
    ext_fields: dict[str, object] | None = None
    body: bytes = b""
    addr: str | None = None
    timeout_s: float | None = None
    oneway: bool = False


@dataclass(frozen=True, slots=True)
class Fanout:
    """Several calls sent together; the plan receives one Reply or RemotingError per call."""

    calls: tuple[Call, ...]


@dataclass(frozen=True, slots=True)
class Reply:
    """A response and the address that sent it (None for oneway calls)."""

    addr: str
    command: RemotingCommand | None

    @property
    def code(self) -> int:
        return self.command.code if self.command is not None else ResponseCode.SUCCESS

    @property
    def remark(self) -> str | None:
        return self.command.remark if self.command is not None else None

    @property
    def ext(self) -> dict[str, str]:
        return self.command.ext_fields if self.command is not None else {}

    @property
    def body(self) -> bytes:
        return self.command.body if self.command is not None else b""


Plan = Generator["Call | Fanout", Any, T]


def parse_namesrv_addrs(value: str | Iterable[str]) -> tuple[str, ...]:
    """Accept RocketMQ's ``;``-separated form (commas too) or a list; raise ValueError when empty."""
    parts = value.replace(",", ";").split(";") if isinstance(value, str) else [p for v in value for p in str(v).replace(",", ";").split(";")]
    addrs = tuple(dict.fromkeys(p.strip() for p in parts if p.strip()))
    if not addrs:
        raise ValueError("no name server address given")
    for addr in addrs:
        host, sep, port = addr.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"name server address {addr!r} is not host:port")
    return addrs


def check(reply: Reply, *ok: int, request_code: int | None = None) -> Reply:
    """Return ``reply`` if its code is SUCCESS (or one of ``ok``), else raise MQBrokerError."""
    if reply.code == ResponseCode.SUCCESS or reply.code in ok:
        return reply
    raise MQBrokerError(reply.code, reply.remark, request_code=request_code, addr=reply.addr)


async def _send_on(client: RemotingClient, addr: str, call: Call, timeout: float) -> Reply:
    """Send one call on an asyncio client (a fresh request, so a retry gets a fresh opaque)."""
    request = RemotingCommand.request(call.code, call.ext_fields, call.body, oneway=call.oneway)
    if call.oneway:
        await client.invoke_oneway(addr, request, timeout)
        return Reply(addr, None)
    return Reply(addr, await client.invoke(addr, request, timeout))


class _DriverBase:
    def __init__(self, namesrv_addrs: str | Iterable[str], timeout_s: float) -> None:
        self.namesrv_addrs = parse_namesrv_addrs(namesrv_addrs)
        self.timeout_s = timeout_s
        self._preferred = 0  # index of the name server that answered last

    def _namesrv_order(self) -> list[str]:
        n, start = len(self.namesrv_addrs), self._preferred
        return [self.namesrv_addrs[(start + i) % n] for i in range(n)]

    def _answered(self, addr: str) -> None:
        self._preferred = self.namesrv_addrs.index(addr)

    @staticmethod
    def _no_namesrv(errors: list[tuple[str, Exception]]) -> RemotingConnectError:
        detail = "; ".join(f"{a}: {e}" for a, e in errors)
        return RemotingConnectError(f"no name server answered ({detail})", ";".join(a for a, _ in errors))

    @staticmethod
    def _step(plan: Plan, value: Any, error: BaseException | None) -> Call | Fanout:
        return plan.throw(error) if error is not None else plan.send(value)


class AsyncDriver(_DriverBase):
    """Run plans over an asyncio RemotingClient; a Fanout's calls run concurrently."""

    def __init__(self, namesrv_addrs: str | Iterable[str], timeout_s: float = DEFAULT_TIMEOUT_S, remoting: RemotingClient | None = None) -> None:
        super().__init__(namesrv_addrs, timeout_s)
        self.remoting = remoting or RemotingClient()
        self._owns_remoting = remoting is None

    async def run(self, plan: Plan[T]) -> T:
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                step = self._step(plan, value, error)
            except StopIteration as stop:
                return stop.value
            value, error = None, None
            try:
                if isinstance(step, Fanout):
                    value = await asyncio.gather(*(self._one_or_error(c) for c in step.calls))
                else:
                    value = await self.invoke(step)
            except RemotingError as exc:
                error = exc

    async def _one_or_error(self, call: Call) -> Reply | RemotingError:
        try:
            return await self.invoke(call)
        except RemotingError as exc:
            return exc

    async def invoke(self, call: Call) -> Reply:
        timeout = call.timeout_s or self.timeout_s
        if call.addr is not None:
            return await self._send(call.addr, call, timeout)
        errors: list[tuple[str, Exception]] = []
        for addr in self._namesrv_order():
            try:
                reply = await self._send(addr, call, timeout)
            except RemotingError as exc:
                errors.append((addr, exc))
                continue
            self._answered(addr)
            return reply
        raise self._no_namesrv(errors)

    async def _send(self, addr: str, call: Call, timeout: float) -> Reply:
        return await _send_on(self.remoting, addr, call, timeout)

    async def close(self) -> None:
        if self._owns_remoting:
            await self.remoting.close()


class BlockingDriver(_DriverBase):
    """Run plans over a BlockingRemotingClient from any thread; a Fanout runs on its loop at once."""

    def __init__(self, namesrv_addrs: str | Iterable[str], timeout_s: float = DEFAULT_TIMEOUT_S, remoting: BlockingRemotingClient | None = None) -> None:
        super().__init__(namesrv_addrs, timeout_s)
        self.remoting = remoting or BlockingRemotingClient()
        self._owns_remoting = remoting is None

    def run(self, plan: Plan[T]) -> T:
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                step = self._step(plan, value, error)
            except StopIteration as stop:
                return stop.value
            value, error = None, None
            try:
                value = self._fanout(step) if isinstance(step, Fanout) else self.invoke(step)
            except RemotingError as exc:
                error = exc

    def _fanout(self, fanout: Fanout) -> list[Reply | RemotingError]:
        calls = [c for c in fanout.calls]
        if any(c.addr is None for c in calls) or len(calls) <= 1:
            out: list[Reply | RemotingError] = []
            for c in calls:
                try:
                    out.append(self.invoke(c))
                except RemotingError as exc:
                    out.append(exc)
            return out
        client = self.remoting.client

        async def one(c: Call) -> Reply | RemotingError:
            try:
                return await _send_on(client, c.addr, c, c.timeout_s or self.timeout_s)  # type: ignore[arg-type]
            except RemotingError as exc:
                return exc

        async def gather() -> list[Reply | RemotingError]:
            return list(await asyncio.gather(*(one(c) for c in calls)))

        return self.remoting.run(gather(), max(c.timeout_s or self.timeout_s for c in calls))

    def invoke(self, call: Call) -> Reply:
        timeout = call.timeout_s or self.timeout_s
        if call.addr is not None:
            return self._send(call.addr, call, timeout)
        errors: list[tuple[str, Exception]] = []
        for addr in self._namesrv_order():
            try:
                reply = self._send(addr, call, timeout)
            except RemotingError as exc:
                errors.append((addr, exc))
                continue
            self._answered(addr)
            return reply
        raise self._no_namesrv(errors)

    def _send(self, addr: str, call: Call, timeout: float) -> Reply:
        request = RemotingCommand.request(call.code, call.ext_fields, call.body, oneway=call.oneway)
        if call.oneway:
            self.remoting.invoke_oneway(addr, request, timeout)
            return Reply(addr, None)
        return Reply(addr, self.remoting.invoke(addr, request, timeout))

    def close(self) -> None:
        if self._owns_remoting:
            self.remoting.close()


# -- result types -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BrokerData:
    """A broker name's addresses by broker id (0 = master)."""

    cluster: str
    broker_name: str
    broker_addrs: dict[int, str]

    @property
    def master_addr(self) -> str | None:
        return self.broker_addrs.get(MASTER_ID)

    def select_broker_addr(self) -> str | None:
        """The master, else the slave with the lowest id (RocketMQ's selectBrokerAddr)."""
        if self.master_addr:
            return self.master_addr
        return self.broker_addrs[min(self.broker_addrs)] if self.broker_addrs else None

    def to_json(self) -> dict:
        return {"brokerAddrs": {str(k): v for k, v in sorted(self.broker_addrs.items())}, "brokerName": self.broker_name, "cluster": self.cluster}


@dataclass(frozen=True, slots=True)
class BrokerInfo:
    """One broker process: its cluster, name, id and address."""

    cluster: str
    broker_name: str
    broker_id: int
    addr: str


@dataclass(frozen=True, slots=True)
class ClusterInfo:
    """What the name server knows of clusters and brokers (GET_BROKER_CLUSTER_INFO)."""

    brokers: tuple[BrokerInfo, ...]  # sorted by cluster, broker name, broker id
    clusters: dict[str, tuple[str, ...]]  # cluster name -> broker names
    broker_datas: dict[str, BrokerData]  # broker name -> addresses

    def master_addrs(self, cluster: str | None = None) -> list[str]:
        """Master addresses of one cluster (or of all), sorted by broker name."""
        names = self.clusters.get(cluster, ()) if cluster is not None else tuple(self.broker_datas)
        out = []
        for name in sorted(names):
            data = self.broker_datas.get(name)
            if data is not None and data.master_addr:
                out.append(data.master_addr)
        return out

    def cluster_of(self, broker_name: str) -> str | None:
        data = self.broker_datas.get(broker_name)
        return data.cluster if data is not None else None


@dataclass(frozen=True, slots=True)
class QueueData:
    """A topic's queues and perm on one broker name."""

    broker_name: str
    read_queue_nums: int
    write_queue_nums: int
    perm: int
    topic_sys_flag: int = 0

    def to_json(self) -> dict:
        return {"brokerName": self.broker_name, "perm": self.perm, "readQueueNums": self.read_queue_nums, "topicSysFlag": self.topic_sys_flag, "writeQueueNums": self.write_queue_nums}


@dataclass(frozen=True, slots=True)
class TopicRouteData:
    """Where a topic lives (GET_ROUTEINFO_BY_TOPIC): queue datas and broker datas, by broker name."""

    topic: str
    queue_datas: tuple[QueueData, ...]
    broker_datas: tuple[BrokerData, ...]
    order_topic_conf: str | None = None
    filter_server_table: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def broker_data(self, broker_name: str) -> BrokerData | None:
        return next((b for b in self.broker_datas if b.broker_name == broker_name), None)

    def master_addr(self, broker_name: str) -> str | None:
        data = self.broker_data(broker_name)
        return data.master_addr if data is not None else None

    def publish_queues(self) -> list[MessageQueue]:
        """Writable queues on brokers with a master, sorted (RocketMQ's topicRouteData2TopicPublishInfo)."""
        out = []
        for qd in sorted(self.queue_datas, key=lambda q: q.broker_name):
            if qd.perm & PERM_WRITE and self.master_addr(qd.broker_name):
                out.extend(MessageQueue(self.topic, qd.broker_name, i) for i in range(qd.write_queue_nums))
        return out

    def subscribe_queues(self) -> list[MessageQueue]:
        """Readable queues, sorted (RocketMQ's topicRouteData2TopicSubscribeInfo)."""
        out = []
        for qd in self.queue_datas:
            if qd.perm & PERM_READ:
                out.extend(MessageQueue(self.topic, qd.broker_name, i) for i in range(qd.read_queue_nums))
        return sorted(out)

    def to_json(self) -> dict:
        out: dict[str, object] = {
            "brokerDatas": [b.to_json() for b in self.broker_datas],
            "filterServerTable": {k: list(v) for k, v in self.filter_server_table.items()},
            "queueDatas": [q.to_json() for q in self.queue_datas],
        }
        if self.order_topic_conf:
            out["orderTopicConf"] = self.order_topic_conf
        return out


@dataclass(frozen=True, slots=True)
class TopicOffset:
    min_offset: int
    max_offset: int
    last_update_timestamp: int  # store time of the message at max_offset - 1; 0 when empty


@dataclass(frozen=True, slots=True)
class TopicStats:
    """Per queue min/max offsets of a topic, from every broker of its route."""

    topic: str
    offset_table: dict[MessageQueue, TopicOffset]

    def items(self) -> list[tuple[MessageQueue, TopicOffset]]:
        return sorted(self.offset_table.items())

    @property
    def total_messages(self) -> int:
        return sum(o.max_offset - o.min_offset for o in self.offset_table.values())


@dataclass(frozen=True, slots=True)
class OffsetWrapper:
    broker_offset: int  # queue max offset
    consumer_offset: int  # committed offset, 0 when none
    last_timestamp: int  # store time of the message at consumer_offset - 1; 0 when unknown

    @property
    def diff(self) -> int:
        return self.broker_offset - self.consumer_offset


@dataclass(frozen=True, slots=True)
class ConsumeStats:
    """A consumer group's progress per queue (GET_CONSUME_STATS, merged over brokers)."""

    group: str
    topic: str | None
    offset_table: dict[MessageQueue, OffsetWrapper]
    consume_tps: float

    def items(self) -> list[tuple[MessageQueue, OffsetWrapper]]:
        return sorted(self.offset_table.items())

    @property
    def diff_total(self) -> int:
        return sum(w.diff for w in self.offset_table.values())


@dataclass(frozen=True, slots=True)
class SubscriptionData:
    """One topic subscription of a consumer (heartbeat bodies, connection info)."""

    topic: str
    sub_string: str = "*"
    tags_set: tuple[str, ...] = ()
    code_set: tuple[int, ...] = ()
    sub_version: int = 0
    expression_type: str = "TAG"
    class_filter_mode: bool = False

    def to_json(self) -> dict:
        return {
            "classFilterMode": self.class_filter_mode,
            "codeSet": list(self.code_set),
            "expressionType": self.expression_type,
            "subString": self.sub_string,
            "subVersion": self.sub_version,
            "tagsSet": list(self.tags_set),
            "topic": self.topic,
        }

    @classmethod
    def from_json(cls, data: dict) -> SubscriptionData:
        return cls(
            topic=str(data.get("topic", "")),
            sub_string=str(data.get("subString", "*")),
            tags_set=tuple(str(t) for t in data.get("tagsSet") or ()),
            code_set=tuple(int(c) for c in data.get("codeSet") or ()),
            sub_version=int(data.get("subVersion") or 0),
            expression_type=str(data.get("expressionType") or "TAG"),
            class_filter_mode=bool(data.get("classFilterMode", False)),
        )


@dataclass(frozen=True, slots=True)
class Connection:
    client_id: str
    client_addr: str
    language: str
    version: int


@dataclass(frozen=True, slots=True)
class ConsumerConnection:
    """The live connections and subscriptions of a consumer group, merged over its brokers."""

    connections: tuple[Connection, ...]
    subscription_table: dict[str, SubscriptionData]
    consume_type: str | None
    message_model: str | None
    consume_from_where: str | None


@dataclass(frozen=True, slots=True)
class ProducerConnection:
    connections: tuple[Connection, ...]


@dataclass(frozen=True, slots=True)
class ProcessQueueInfo:
    """A consumer's view of one queue (ConsumerRunningInfo.mqTable values)."""

    commit_offset: int = 0
    cached_msg_min_offset: int = 0
    cached_msg_max_offset: int = 0
    cached_msg_count: int = 0
    cached_msg_size_in_mib: int = 0
    locked: bool = False
    droped: bool = False  # (sic) RocketMQ's property name
    last_pull_timestamp: int = 0
    last_consume_timestamp: int = 0


@dataclass(frozen=True, slots=True)
class ConsumeStatus:
    pull_rt: float = 0.0
    pull_tps: float = 0.0
    consume_rt: float = 0.0
    consume_ok_tps: float = 0.0
    consume_failed_tps: float = 0.0
    consume_failed_msgs: int = 0


@dataclass(frozen=True, slots=True)
class ConsumerRunningInfo:
    """What one consumer client reports about itself (GET_CONSUMER_RUNNING_INFO)."""

    properties: dict[str, str]
    subscriptions: tuple[SubscriptionData, ...]
    mq_table: dict[MessageQueue, ProcessQueueInfo]
    status_table: dict[str, ConsumeStatus]
    jstack: str | None = None


# -- body parsing -------------------------------------------------------------------------------


def _load(body: bytes) -> Any:
    if not body:
        return {}
    return json_compat.loads(body)


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def message_queue_from_key(key: Any) -> MessageQueue:
    """Turn a MessageQueue map key as the tolerant reader returns it into a MessageQueue."""
    if isinstance(key, MessageQueue):
        return key
    if isinstance(key, str):
        key = json_compat.loads(key)
    if isinstance(key, dict):
        return MessageQueue.from_json(key)
    if isinstance(key, (tuple, frozenset, list)):
        items = list(key)
        if items and all(isinstance(i, tuple) and len(i) == 2 for i in items):
            return MessageQueue.from_json(dict(items))
        if len(items) == 3:
            return MessageQueue(str(items[0]), str(items[1]), int(items[2]))
    raise MQClientError(CLIENT_ERROR, f"unexpected MessageQueue key in a response body: {key!r}")


def parse_broker_data(data: dict) -> BrokerData:
    addrs = {int(k): str(v) for k, v in _dict(data.get("brokerAddrs")).items()}
    return BrokerData(str(data.get("cluster", "")), str(data.get("brokerName", "")), addrs)


def parse_cluster_info(body: bytes) -> ClusterInfo:
    obj = _dict(_load(body))
    datas = {str(name): parse_broker_data(_dict(bd)) for name, bd in _dict(obj.get("brokerAddrTable")).items()}
    clusters = {str(c): tuple(sorted(str(n) for n in names or ())) for c, names in _dict(obj.get("clusterAddrTable")).items()}
    brokers = []
    for name, data in datas.items():
        cluster = data.cluster or next((c for c, names in clusters.items() if name in names), "")
        brokers.extend(BrokerInfo(cluster, name, bid, addr) for bid, addr in data.broker_addrs.items())
    brokers.sort(key=lambda b: (b.cluster, b.broker_name, b.broker_id))
    return ClusterInfo(tuple(brokers), clusters, datas)


def parse_topic_route(topic: str, body: bytes) -> TopicRouteData:
    obj = _dict(_load(body))
    queue_datas = tuple(
        sorted(
            (
                QueueData(
                    broker_name=str(q.get("brokerName", "")),
                    read_queue_nums=int(q.get("readQueueNums", 0)),
                    write_queue_nums=int(q.get("writeQueueNums", 0)),
                    perm=int(q.get("perm", 0)),
                    topic_sys_flag=int(q.get("topicSysFlag", q.get("topicSynFlag", 0)) or 0),
                )
                for q in map(_dict, obj.get("queueDatas") or ())
            ),
            key=lambda q: q.broker_name,
        )
    )
    broker_datas = tuple(sorted((parse_broker_data(_dict(b)) for b in obj.get("brokerDatas") or ()), key=lambda b: b.broker_name))
    filters = {str(k): tuple(str(a) for a in v or ()) for k, v in _dict(obj.get("filterServerTable")).items()}
    order = obj.get("orderTopicConf")
    return TopicRouteData(topic, queue_datas, broker_datas, str(order) if order else None, filters)


def parse_topic_list(body: bytes) -> list[str]:
    return sorted(str(t) for t in _dict(_load(body)).get("topicList") or ())


def parse_kv_table(body: bytes) -> dict[str, str]:
    return {str(k): str(v) for k, v in _dict(_dict(_load(body)).get("table")).items()}


def parse_subscription_table(obj: dict) -> dict[str, SubscriptionData]:
    return {str(t): SubscriptionData.from_json(_dict(s)) for t, s in _dict(obj).items()}


def parse_connections(obj: dict) -> tuple[Connection, ...]:
    conns = (
        Connection(str(c.get("clientId", "")), str(c.get("clientAddr", "")), str(c.get("language", "")), int(c.get("version", 0) or 0))
        for c in map(_dict, obj.get("connectionSet") or ())
    )
    return tuple(sorted(conns, key=lambda c: (c.client_id, c.client_addr)))


def parse_consumer_running_info(body: bytes) -> ConsumerRunningInfo:
    obj = _dict(_load(body))
    mq_table = {}
    for key, value in _dict(obj.get("mqTable")).items():
        v = _dict(value)
        mq_table[message_queue_from_key(key)] = ProcessQueueInfo(
            commit_offset=int(v.get("commitOffset", 0) or 0),
            cached_msg_min_offset=int(v.get("cachedMsgMinOffset", 0) or 0),
            cached_msg_max_offset=int(v.get("cachedMsgMaxOffset", 0) or 0),
            cached_msg_count=int(v.get("cachedMsgCount", 0) or 0),
            cached_msg_size_in_mib=int(v.get("cachedMsgSizeInMiB", 0) or 0),
            locked=bool(v.get("locked", False)),
            droped=bool(v.get("droped", False)),
            last_pull_timestamp=int(v.get("lastPullTimestamp", 0) or 0),
            last_consume_timestamp=int(v.get("lastConsumeTimestamp", 0) or 0),
        )
    status = {}
    for topic, value in _dict(obj.get("statusTable")).items():
        v = _dict(value)
        status[str(topic)] = ConsumeStatus(
            pull_rt=float(v.get("pullRT", 0) or 0),
            pull_tps=float(v.get("pullTPS", 0) or 0),
            consume_rt=float(v.get("consumeRT", 0) or 0),
            consume_ok_tps=float(v.get("consumeOKTPS", 0) or 0),
            consume_failed_tps=float(v.get("consumeFailedTPS", 0) or 0),
            consume_failed_msgs=int(v.get("consumeFailedMsgs", 0) or 0),
        )
    subs = tuple(SubscriptionData.from_json(_dict(s)) for s in obj.get("subscriptionSet") or ())
    props = {str(k): str(v) for k, v in _dict(obj.get("properties")).items()}
    jstack = obj.get("jstack")
    return ConsumerRunningInfo(props, subs, mq_table, status, str(jstack) if jstack else None)


def decode_offset_msg_id(msg_id: str) -> tuple[str, int]:
    """Return (store host "ip:port", commit-log offset) of an offset message id; MQClientError if malformed."""
    try:
        addr, offset = message_codec.parse_offset_msg_id(msg_id.strip())
    except (ValueError, TypeError) as exc:
        raise MQClientError(CLIENT_ERROR, f"{msg_id!r} is not an offset message id: {exc}") from None
    port = int(addr.rpartition(":")[2])
    if not 0 < port < 65536 or offset < 0:
        # A UNIQ_KEY has the same length; its bytes decode to a port or offset out of range.
        raise MQClientError(CLIENT_ERROR, f"{msg_id!r} is not an offset message id (it decodes to {addr}, offset {offset})")
    return addr, offset


def inflate_bodies(messages: list[MessageExt]) -> list[MessageExt]:
    """Decompress zlib bodies in place (sysFlag bit 0 with compression type 0 or ZLIB), as consumers do.

    LZ4 and ZSTD bodies (4.9.4+ Java producers, on request only) are left as stored.
    """
    for msg in messages:
        if msg.sys_flag & message_codec.COMPRESSED_FLAG and msg.sys_flag & _COMPRESSION_TYPE_MASK in (0, _COMPRESSION_ZLIB):
            try:
                msg.body = zlib.decompress(msg.body)
            except zlib.error:
                pass  # not zlib after all: hand over the stored bytes
    return messages


def key_matches(msg: MessageExt, topic: str, key: str) -> bool:
    """Index hits are hash hits: keep a message only if its KEYS or UNIQ_KEY really holds ``key``."""
    if msg.topic != topic:
        return False
    keys = (msg.properties.get(PROPERTY_KEYS) or "").split(" ")
    return key in keys or msg.properties.get(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX) == key


def _first_error(replies: list[Reply | RemotingError], request_code: int, *ok: int) -> None:
    for r in replies:
        if isinstance(r, RemotingError):
            raise r
        check(r, *ok, request_code=request_code)


# -- the operations, as plans ---------------------------------------------------------------------


class AdminPlans:
    """Every admin operation as a plan (see the module docstring); no I/O, no state besides the addresses."""

    def __init__(self, namesrv_addrs: tuple[str, ...]) -> None:
        self.namesrv_addrs = namesrv_addrs

    # name server reads

    def examine_broker_cluster_info(self) -> Plan[ClusterInfo]:
        """Return clusters, broker names and broker addresses as the name server holds them."""
        reply = check((yield Call(RequestCode.GET_BROKER_CLUSTER_INFO)), request_code=RequestCode.GET_BROKER_CLUSTER_INFO)
        return parse_cluster_info(reply.body)

    def get_all_topic_list(self) -> Plan[list[str]]:
        """Return every topic the name server routes (system, retry and DLQ topics included), sorted."""
        reply = check((yield Call(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER)), request_code=RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER)
        return parse_topic_list(reply.body)

    def get_topics_by_cluster(self, cluster: str) -> Plan[list[str]]:
        """Return the topics with queues on any broker of ``cluster``, sorted."""
        reply = check((yield Call(RequestCode.GET_TOPICS_BY_CLUSTER, {"cluster": cluster})), request_code=RequestCode.GET_TOPICS_BY_CLUSTER)
        return parse_topic_list(reply.body)

    def examine_topic_route_info(self, topic: str) -> Plan[TopicRouteData]:
        """Return the topic's route; MQBrokerError TOPIC_NOT_EXIST when the name server has none."""
        validate_topic(topic)
        reply = check((yield Call(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": topic})), request_code=RequestCode.GET_ROUTEINFO_BY_TOPIC)
        return parse_topic_route(topic, reply.body)

    def _route_or_none(self, topic: str) -> Plan[TopicRouteData | None]:
        try:
            return (yield from self.examine_topic_route_info(topic))
        except MQBrokerError as exc:
            if exc.code == ResponseCode.TOPIC_NOT_EXIST:
                return None
            raise

    def _group_broker_addrs(self, group: str, topic: str | None = None) -> Plan[list[str]]:
        """Brokers that may know a group: its retry topic's route, the topic's route, else every master."""
        addrs: dict[str, None] = {}
        for t in (RETRY_GROUP_TOPIC_PREFIX + group, topic):
            if t is None:
                continue
            route = yield from self._route_or_none(t)
            if route is not None:
                addrs.update((a, None) for a in (b.select_broker_addr() for b in route.broker_datas) if a)
        if not addrs:
            info = yield from self.examine_broker_cluster_info()
            addrs.update((a, None) for a in info.master_addrs())
        return list(addrs)

    # broker reads

    def get_broker_runtime_info(self, addr: str) -> Plan[dict[str, str]]:
        """Return the broker's runtime figures (GET_BROKER_RUNTIME_INFO KV table)."""
        reply = check((yield Call(RequestCode.GET_BROKER_RUNTIME_INFO, addr=addr)), request_code=RequestCode.GET_BROKER_RUNTIME_INFO)
        return parse_kv_table(reply.body)

    def get_all_topic_config(self, broker_addr: str) -> Plan[dict[str, TopicConfig]]:
        """Return the broker's topic configs by topic name (its topics.json content)."""
        reply = check((yield Call(RequestCode.GET_ALL_TOPIC_CONFIG, addr=broker_addr)), request_code=RequestCode.GET_ALL_TOPIC_CONFIG)
        table = _dict(_dict(_load(reply.body)).get("topicConfigTable"))
        return {str(name): TopicConfig.from_json(_dict(cfg)) for name, cfg in sorted(table.items())}

    def examine_topic_stats(self, topic: str) -> Plan[TopicStats]:
        """Return min/max offset and last update time of every queue of the topic on every broker of its route."""
        route = yield from self.examine_topic_route_info(topic)
        calls = tuple(Call(RequestCode.GET_TOPIC_STATS_INFO, {"topic": topic}, addr=a) for a in (b.select_broker_addr() for b in route.broker_datas) if a)
        replies = yield Fanout(calls)
        _first_error(replies, RequestCode.GET_TOPIC_STATS_INFO)
        table: dict[MessageQueue, TopicOffset] = {}
        for reply in replies:
            for key, value in _dict(_dict(_load(reply.body)).get("offsetTable")).items():
                v = _dict(value)
                table[message_queue_from_key(key)] = TopicOffset(int(v.get("minOffset", 0)), int(v.get("maxOffset", 0)), int(v.get("lastUpdateTimestamp", 0)))
        return TopicStats(topic, dict(sorted(table.items())))

    def examine_consume_stats(self, group: str, topic: str | None = None) -> Plan[ConsumeStats]:
        """Return the group's broker offset, consumer offset and last timestamp per queue, and its TPS."""
        validate_group(group)
        addrs = yield from self._group_broker_addrs(group, topic)
        ext: dict[str, object] = {"consumerGroup": group}
        if topic is not None:
            ext["topic"] = topic
        replies = yield Fanout(tuple(Call(RequestCode.GET_CONSUME_STATS, ext, addr=a) for a in addrs))
        table: dict[MessageQueue, OffsetWrapper] = {}
        tps = 0.0
        answered = [r for r in replies if isinstance(r, Reply) and r.code == ResponseCode.SUCCESS]
        if not answered:
            _first_error(replies, RequestCode.GET_CONSUME_STATS)
        for reply in answered:
            obj = _dict(_load(reply.body))
            tps += float(obj.get("consumeTps", 0) or 0)
            for key, value in _dict(obj.get("offsetTable")).items():
                v = _dict(value)
                mq = message_queue_from_key(key)
                if topic is None or mq.topic == topic:
                    table[mq] = OffsetWrapper(int(v.get("brokerOffset", 0)), int(v.get("consumerOffset", 0)), int(v.get("lastTimestamp", 0)))
        return ConsumeStats(group, topic, dict(sorted(table.items())), tps)

    def examine_consumer_connection_info(self, group: str) -> Plan[ConsumerConnection]:
        """Return the group's live connections and subscriptions, merged over its brokers.

        MQBrokerError CONSUMER_NOT_ONLINE when no broker has a connection of the group.
        """
        validate_group(group)
        addrs = yield from self._group_broker_addrs(group)
        replies = yield Fanout(tuple(Call(RequestCode.GET_CONSUMER_CONNECTION_LIST, {"consumerGroup": group}, addr=a) for a in addrs))
        answered = [r for r in replies if isinstance(r, Reply) and r.code == ResponseCode.SUCCESS]
        if not answered:
            errors = [r for r in replies if not (isinstance(r, Reply) and r.code == ResponseCode.CONSUMER_NOT_ONLINE)]
            _first_error(errors, RequestCode.GET_CONSUMER_CONNECTION_LIST)
            raise MQBrokerError(ResponseCode.CONSUMER_NOT_ONLINE, f"the consumer group [{group}] not online", request_code=RequestCode.GET_CONSUMER_CONNECTION_LIST)
        conns: dict[str, Connection] = {}  # one per client id: a client has a connection to each broker
        subs: dict[str, SubscriptionData] = {}
        consume_type = message_model = from_where = None
        for reply in answered:
            obj = _dict(_load(reply.body))
            for c in parse_connections(obj):
                conns.setdefault(c.client_id, c)
            subs.update(parse_subscription_table(obj.get("subscriptionTable") or {}))
            consume_type = consume_type or obj.get("consumeType")
            message_model = message_model or obj.get("messageModel")
            from_where = from_where or obj.get("consumeFromWhere")
        return ConsumerConnection(tuple(sorted(conns.values(), key=lambda c: c.client_id)), dict(sorted(subs.items())), consume_type, message_model, from_where)

    def examine_producer_connection_info(self, group: str, topic: str) -> Plan[ProducerConnection]:
        """Return the producer group's live connections on the brokers of ``topic``."""
        validate_group(group)
        route = yield from self.examine_topic_route_info(topic)
        addrs = [a for a in (b.select_broker_addr() for b in route.broker_datas) if a]
        replies = yield Fanout(tuple(Call(RequestCode.GET_PRODUCER_CONNECTION_LIST, {"producerGroup": group}, addr=a) for a in addrs))
        answered = [r for r in replies if isinstance(r, Reply) and r.code == ResponseCode.SUCCESS]
        if not answered:
            _first_error(replies, RequestCode.GET_PRODUCER_CONNECTION_LIST)
        conns: dict[str, Connection] = {}
        for reply in answered:
            for c in parse_connections(_dict(_load(reply.body))):
                conns.setdefault(c.client_id, c)
        return ProducerConnection(tuple(sorted(conns.values(), key=lambda c: c.client_id)))

    def get_consumer_running_info(self, group: str, client_id: str, jstack: bool = False) -> Plan[ConsumerRunningInfo]:
        """Ask a consumer client, through a broker it is connected to, for its running info."""
        validate_group(group)
        addrs = yield from self._group_broker_addrs(group)
        last: RemotingError | None = None
        for addr in addrs:
            try:
                reply = yield Call(
                    RequestCode.GET_CONSUMER_RUNNING_INFO,
                    {"consumerGroup": group, "clientId": client_id, "jstackEnable": jstack},
                    addr=addr,
                    timeout_s=12.0,  # the broker waits up to 10 s for the client
                )
                check(reply, request_code=RequestCode.GET_CONSUMER_RUNNING_INFO)
            except RemotingError as exc:
                last = exc
                continue
            return parse_consumer_running_info(reply.body)
        raise last or MQClientError(CLIENT_ERROR, f"no broker to ask for consumer group {group}")

    def query_message_by_key(self, topic: str, key: str, max_num: int = 32, begin_ts: int = 0, end_ts: int = MAX_TIMESTAMP, *, unique_key: bool = False) -> Plan[list[MessageExt]]:
        """Return the messages of ``topic`` whose KEYS (or UNIQ_KEY) hold ``key``, from every broker of its route."""
        route = yield from self.examine_topic_route_info(topic)
        ext = {"topic": topic, "key": key, "maxNum": max_num, "beginTimestamp": begin_ts, "endTimestamp": end_ts, "_UNIQUE_KEY_QUERY": unique_key}
        addrs = [a for a in (b.select_broker_addr() for b in route.broker_datas) if a]
        replies = yield Fanout(tuple(Call(RequestCode.QUERY_MESSAGE, ext, addr=a) for a in addrs))
        _first_error(replies, RequestCode.QUERY_MESSAGE, ResponseCode.QUERY_NOT_FOUND)
        found: dict[str, MessageExt] = {}
        for reply in replies:
            if reply.code == ResponseCode.SUCCESS and reply.body:
                for msg in inflate_bodies(message_codec.decode_records(reply.body)):
                    if key_matches(msg, topic, key):
                        found.setdefault(msg.msg_id or f"{msg.store_host}/{msg.commit_log_offset}", msg)
        return sorted(found.values(), key=lambda m: (m.store_timestamp, m.msg_id))

    def view_message(self, offset_msg_id: str) -> Plan[MessageExt]:
        """Return the message of an offset message id, asking the store host encoded in the id."""
        addr, offset = decode_offset_msg_id(offset_msg_id)
        reply = check((yield Call(RequestCode.VIEW_MESSAGE_BY_ID, {"offset": offset}, addr=addr)), request_code=RequestCode.VIEW_MESSAGE_BY_ID)
        records = inflate_bodies(message_codec.decode_records(reply.body))
        if not records:
            raise MQBrokerError(ResponseCode.SYSTEM_ERROR, f"empty body for message {offset_msg_id}", addr=addr)
        return records[0]

    # writes

    def create_or_update_topic(self, broker_addr: str, config: TopicConfig) -> Plan[None]:
        """Create or update the topic on one broker (which re-registers with the name servers)."""
        validate_topic(config.topic_name)
        config.validate()
        ext = {
            "topic": config.topic_name,
            "defaultTopic": AUTO_CREATE_TOPIC_KEY_TOPIC,
            "readQueueNums": config.read_queue_nums,
            "writeQueueNums": config.write_queue_nums,
            "perm": config.perm,
            "topicFilterType": config.topic_filter_type,
            "topicSysFlag": config.topic_sys_flag,
            "order": config.order,
        }
        check((yield Call(RequestCode.UPDATE_AND_CREATE_TOPIC, ext, addr=broker_addr)), request_code=RequestCode.UPDATE_AND_CREATE_TOPIC)

    def create_or_update_topic_in_cluster(self, cluster: str, config: TopicConfig) -> Plan[list[str]]:
        """Create or update the topic on every master of ``cluster``; return their addresses."""
        validate_topic(config.topic_name)
        config.validate()
        info = yield from self.examine_broker_cluster_info()
        if cluster not in info.clusters:
            raise MQClientError(CLIENT_ERROR, f"cluster {cluster!r} is not known to the name server (known: {', '.join(sorted(info.clusters)) or 'none'})")
        addrs = info.master_addrs(cluster)
        if not addrs:
            raise MQClientError(CLIENT_ERROR, f"cluster {cluster!r} has no master broker")
        for addr in addrs:
            yield from self.create_or_update_topic(addr, config)
        if config.order:
            conf = ";".join(f"{name}:{config.write_queue_nums}" for name in sorted(info.clusters[cluster]) if info.broker_datas.get(name) and info.broker_datas[name].master_addr)
            yield from self.put_kv_config(ORDER_TOPIC_CONFIG, config.topic_name, conf)
        return addrs

    def put_kv_config(self, namespace: str, key: str, value: str) -> Plan[None]:
        """Store a KV config entry on every name server."""
        replies = yield Fanout(tuple(Call(RequestCode.PUT_KV_CONFIG, {"namespace": namespace, "key": key, "value": value}, addr=a) for a in self.namesrv_addrs))
        _first_error(replies, RequestCode.PUT_KV_CONFIG)

    def get_kv_config(self, namespace: str, key: str) -> Plan[str | None]:
        """Return a name server KV config value, None when absent."""
        reply = yield Call(RequestCode.GET_KV_CONFIG, {"namespace": namespace, "key": key})
        if reply.code == ResponseCode.QUERY_NOT_FOUND:
            return None
        return check(reply, request_code=RequestCode.GET_KV_CONFIG).ext.get("value")

    def delete_topic(self, topic: str, cluster: str | None = None, broker_addrs: str | Iterable[str] | None = None) -> Plan[list[str]]:
        """Delete the topic on brokers (those given, the masters of ``cluster``, or those of its route), then on every name server.

        Returns the broker addresses it was deleted on.
        """
        validate_topic(topic)
        if broker_addrs is not None:
            addrs = [broker_addrs] if isinstance(broker_addrs, str) else list(broker_addrs)
        elif cluster is not None:
            info = yield from self.examine_broker_cluster_info()
            if cluster not in info.clusters:
                raise MQClientError(CLIENT_ERROR, f"cluster {cluster!r} is not known to the name server")
            addrs = info.master_addrs(cluster)
        else:
            route = yield from self._route_or_none(topic)
            addrs = [a for a in (b.master_addr for b in route.broker_datas) if a] if route else []
        replies = yield Fanout(tuple(Call(RequestCode.DELETE_TOPIC_IN_BROKER, {"topic": topic}, addr=a) for a in addrs))
        _first_error(replies, RequestCode.DELETE_TOPIC_IN_BROKER)
        ext: dict[str, object] = {"topic": topic}
        if cluster is not None:
            ext["clusterName"] = cluster
        replies = yield Fanout(tuple(Call(RequestCode.DELETE_TOPIC_IN_NAMESRV, ext, addr=a) for a in self.namesrv_addrs))
        if not any(isinstance(r, Reply) and r.code == ResponseCode.SUCCESS for r in replies):
            _first_error(replies, RequestCode.DELETE_TOPIC_IN_NAMESRV)
        return addrs

    def wipe_write_perm_of_broker(self, namesrv_addr: str, broker_name: str) -> Plan[int]:
        """Clear the WRITE bit of the broker's queue data on one name server; return the topics touched."""
        reply = check((yield Call(RequestCode.WIPE_WRITE_PERM_OF_BROKER, {"brokerName": broker_name}, addr=namesrv_addr)), request_code=RequestCode.WIPE_WRITE_PERM_OF_BROKER)
        return int(reply.ext.get("wipeTopicCount", 0) or 0)

    def add_write_perm_of_broker(self, namesrv_addr: str, broker_name: str) -> Plan[int]:
        """Give the broker's queue data READ|WRITE on one name server; return the topics touched."""
        reply = check((yield Call(RequestCode.ADD_WRITE_PERM_OF_BROKER, {"brokerName": broker_name}, addr=namesrv_addr)), request_code=RequestCode.ADD_WRITE_PERM_OF_BROKER)
        return int(reply.ext.get("addTopicCount", 0) or 0)


# -- the two clients ------------------------------------------------------------------------------


def _unwrap_plan_annotation(operation: Callable[..., Any], plan_fn: Callable[..., Any]) -> None:
    """Annotate the client method with what the plan returns (``Plan[X]`` -> ``X``)."""
    annotations = dict(plan_fn.__annotations__)
    ret = annotations.get("return")
    if isinstance(ret, str) and ret.startswith("Plan[") and ret.endswith("]"):
        annotations["return"] = ret[5:-1]
    operation.__annotations__ = annotations
    operation.__signature__ = inspect.signature(plan_fn).replace(return_annotation=annotations.get("return"))  # type: ignore[attr-defined]


def async_operation(plan_fn: Callable[..., Plan[T]]) -> Callable[..., Any]:
    @functools.wraps(plan_fn)
    async def operation(self: MQAdminClient, *args: Any, **kwargs: Any) -> Any:
        return await self.driver.run(plan_fn(self.plans, *args, **kwargs))

    _unwrap_plan_annotation(operation, plan_fn)
    return operation


def blocking_operation(plan_fn: Callable[..., Plan[T]]) -> Callable[..., Any]:
    @functools.wraps(plan_fn)
    def operation(self: BlockingMQAdminClient, *args: Any, **kwargs: Any) -> Any:
        return self.driver.run(plan_fn(self.plans, *args, **kwargs))

    _unwrap_plan_annotation(operation, plan_fn)
    return operation


class _AdminBase:
    driver: AsyncDriver | BlockingDriver
    plans: AdminPlans

    @property
    def namesrv_addrs(self) -> tuple[str, ...]:
        return self.driver.namesrv_addrs

    @property
    def namesrv_addr_string(self) -> str:
        """The name servers in RocketMQ's ``;``-separated form."""
        return ";".join(self.driver.namesrv_addrs)

    @property
    def timeout_s(self) -> float:
        return self.driver.timeout_s


class MQAdminClient(_AdminBase):
    """Asyncio admin client: each operation of :class:`AdminPlans` as a coroutine method.

    Use it from tasks of one event loop; close it with ``await admin.close()``.
    """

    def __init__(self, namesrv_addrs: str | Iterable[str], timeout_s: float = DEFAULT_TIMEOUT_S, *, remoting: RemotingClient | None = None) -> None:
        self.driver = AsyncDriver(namesrv_addrs, timeout_s, remoting)
        self.plans = AdminPlans(self.driver.namesrv_addrs)

    async def close(self) -> None:
        await self.driver.close()

    async def __aenter__(self) -> MQAdminClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    examine_broker_cluster_info = async_operation(AdminPlans.examine_broker_cluster_info)
    get_all_topic_list = async_operation(AdminPlans.get_all_topic_list)
    get_topics_by_cluster = async_operation(AdminPlans.get_topics_by_cluster)
    examine_topic_route_info = async_operation(AdminPlans.examine_topic_route_info)
    get_broker_runtime_info = async_operation(AdminPlans.get_broker_runtime_info)
    get_all_topic_config = async_operation(AdminPlans.get_all_topic_config)
    examine_topic_stats = async_operation(AdminPlans.examine_topic_stats)
    examine_consume_stats = async_operation(AdminPlans.examine_consume_stats)
    examine_consumer_connection_info = async_operation(AdminPlans.examine_consumer_connection_info)
    examine_producer_connection_info = async_operation(AdminPlans.examine_producer_connection_info)
    get_consumer_running_info = async_operation(AdminPlans.get_consumer_running_info)
    query_message_by_key = async_operation(AdminPlans.query_message_by_key)
    view_message = async_operation(AdminPlans.view_message)
    create_or_update_topic = async_operation(AdminPlans.create_or_update_topic)
    create_or_update_topic_in_cluster = async_operation(AdminPlans.create_or_update_topic_in_cluster)
    put_kv_config = async_operation(AdminPlans.put_kv_config)
    get_kv_config = async_operation(AdminPlans.get_kv_config)
    delete_topic = async_operation(AdminPlans.delete_topic)
    wipe_write_perm_of_broker = async_operation(AdminPlans.wipe_write_perm_of_broker)
    add_write_perm_of_broker = async_operation(AdminPlans.add_write_perm_of_broker)


class BlockingMQAdminClient(_AdminBase):
    """Thread-safe blocking admin client for Django and Celery; same operations as MQAdminClient."""

    def __init__(self, namesrv_addrs: str | Iterable[str], timeout_s: float = DEFAULT_TIMEOUT_S, *, remoting: BlockingRemotingClient | None = None) -> None:
        self.driver = BlockingDriver(namesrv_addrs, timeout_s, remoting)
        self.plans = AdminPlans(self.driver.namesrv_addrs)

    def close(self) -> None:
        self.driver.close()

    def __enter__(self) -> BlockingMQAdminClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    examine_broker_cluster_info = blocking_operation(AdminPlans.examine_broker_cluster_info)
    get_all_topic_list = blocking_operation(AdminPlans.get_all_topic_list)
    get_topics_by_cluster = blocking_operation(AdminPlans.get_topics_by_cluster)
    examine_topic_route_info = blocking_operation(AdminPlans.examine_topic_route_info)
    get_broker_runtime_info = blocking_operation(AdminPlans.get_broker_runtime_info)
    get_all_topic_config = blocking_operation(AdminPlans.get_all_topic_config)
    examine_topic_stats = blocking_operation(AdminPlans.examine_topic_stats)
    examine_consume_stats = blocking_operation(AdminPlans.examine_consume_stats)
    examine_consumer_connection_info = blocking_operation(AdminPlans.examine_consumer_connection_info)
    examine_producer_connection_info = blocking_operation(AdminPlans.examine_producer_connection_info)
    get_consumer_running_info = blocking_operation(AdminPlans.get_consumer_running_info)
    query_message_by_key = blocking_operation(AdminPlans.query_message_by_key)
    view_message = blocking_operation(AdminPlans.view_message)
    create_or_update_topic = blocking_operation(AdminPlans.create_or_update_topic)
    create_or_update_topic_in_cluster = blocking_operation(AdminPlans.create_or_update_topic_in_cluster)
    put_kv_config = blocking_operation(AdminPlans.put_kv_config)
    get_kv_config = blocking_operation(AdminPlans.get_kv_config)
    delete_topic = blocking_operation(AdminPlans.delete_topic)
    wipe_write_perm_of_broker = blocking_operation(AdminPlans.wipe_write_perm_of_broker)
    add_write_perm_of_broker = blocking_operation(AdminPlans.add_write_perm_of_broker)
