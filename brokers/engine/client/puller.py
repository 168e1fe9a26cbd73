"""The pull client: AsyncPullClient (asyncio) and PullClient (blocking), for mqadmin, tests and benchmarks.

PULL_MESSAGE carries the subscription in the request (sysFlag bit 2), so no heartbeat is needed
to pull; tags are re-filtered by string on the client (the broker filters by tag hash). Also:
offsets (query/update/min/max/search by time) and queue discovery. ``subscribe`` registers a
subscription that heartbeats announce to the brokers (so it shows in consumer connection
info), and the client answers GET_CONSUMER_RUNNING_INFO with what it pulled. No rebalancing
and no push consumption.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from brokers.engine.client.admin_bodies import inflate_bodies
from brokers.engine.client.credentials import acl_signer
from brokers.engine.client.driver import (
    DEFAULT_TIMEOUT_S,
    AsyncDriver,
    BlockingDriver,
    async_operation,
    blocking_operation,
)
from brokers.engine.client.admin_errors import broker_error
from brokers.engine.client.front_end import HEARTBEAT_INTERVAL_S, AsyncFrontEnd, BlockingFrontEnd, _FrontEnd
from brokers.engine.client.plan import Call, Plan, check
from brokers.engine.client.route_cache import ClientPlans
from brokers.engine.common import json_compat, message_codec
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.common.constants import MASTER_ID, MQ_VERSION_NAME
from brokers.engine.common.message import PROPERTY_MAX_OFFSET, PROPERTY_MIN_OFFSET, MessageExt
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.subscription import EXPRESSION_TAG, SUB_ALL, SubscriptionData, build_subscription_data
from brokers.engine.common.topic_validator import validate_topic
from brokers.engine.remoting.blocking import BlockingRemotingClient
from brokers.engine.remoting.channel import ChannelContext, Handler
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.errors import RemotingCommandError, RemotingError
from brokers.engine.remoting.headers.consume import PullMessageRequestHeader
from brokers.engine.remoting.headers.groups import GetConsumerRunningInfoRequestHeader
from brokers.engine.remoting.headers.offsets import (
    GetEarliestMsgStoretimeRequestHeader,
    GetMaxOffsetRequestHeader,
    GetMinOffsetRequestHeader,
    QueryConsumerOffsetRequestHeader,
    QueueRequestHeader,
    SearchOffsetRequestHeader,
    UpdateConsumerOffsetRequestHeader,
    queue_fields,
)
from brokers.engine.remoting.tls import TlsConfig

__all__ = [
    "PULL_SYS_FLAG_COMMIT_OFFSET",
    "PULL_SYS_FLAG_SUBSCRIPTION",
    "PULL_SYS_FLAG_SUSPEND",
    "SUB_ALL",
    "TOOLS_CONSUMER_GROUP",
    "AsyncPullClient",
    "AsyncSimplePuller",
    "PullClient",
    "PullPlans",
    "PullResult",
    "PullStatus",
    "SimplePuller",
    "build_subscription",
]

TOOLS_CONSUMER_GROUP = "TOOLS_CONSUMER"  # the group RocketMQ's tools pull with; brokers pre-create it
PULL_SYS_FLAG_COMMIT_OFFSET = 0x1
PULL_SYS_FLAG_SUSPEND = 0x2
PULL_SYS_FLAG_SUBSCRIPTION = 0x4


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
class PullResult:
    status: PullStatus
    next_begin_offset: int
    min_offset: int
    max_offset: int
    messages: tuple[MessageExt, ...] = ()
    suggest_which_broker_id: int = 0


def build_subscription(
    topic: str, expression: str | None, sub_version: int, expression_type: str = EXPRESSION_TAG
) -> SubscriptionData:
    """A subscription as RocketMQ's FilterAPI builds it: TAG ``*`` has no tags, ``a || b`` two; a SQL92
    selector (``expression_type="SQL92"``, filtered by the broker) is kept as written, trimmed."""
    if expression_type.upper() != EXPRESSION_TAG:
        expression = (expression or "").strip()
    return build_subscription_data(topic, expression, expression_type, sub_version)


class PullPlans(ClientPlans):
    """Pull, offset and subscription plans of one consumer group, and its running info."""

    def __init__(
        self,
        namesrv_addrs: tuple[str, ...],
        group: str,
        *,
        clock: Clock = SYSTEM_CLOCK,
        instance_name: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        consume_from_where: str = "CONSUME_FROM_LAST_OFFSET",
        message_model: str = "CLUSTERING",
    ) -> None:
        super().__init__(namesrv_addrs, group, clock=clock, instance_name=instance_name, timeout_s=timeout_s)
        self.consume_from_where = consume_from_where
        self.message_model = message_model
        self.subscriptions: dict[str, SubscriptionData] = {}
        self.start_timestamp = clock.now_ms()
        self._progress: dict[MessageQueue, tuple[int, int]] = {}  # mq -> (next offset, last pull time)
        self._pull_from_which_node: dict[MessageQueue, int] = {}  # mq -> suggestWhichBrokerId of its last answer

    def heartbeat_body(self) -> dict[str, Any]:
        consumers = []
        if self.subscriptions:
            consumers.append(
                {
                    "consumeFromWhere": self.consume_from_where,
                    "consumeType": "CONSUME_ACTIVELY",
                    "groupName": self.group,
                    "messageModel": self.message_model,
                    "subscriptionDataSet": [s.to_json() for s in self.subscriptions.values()],
                    "unitMode": False,
                }
            )
        return {"clientID": self.client_id, "consumerDataSet": consumers, "producerDataSet": []}

    def subscribe(self, topic: str, expression: str = SUB_ALL) -> Plan[int]:
        """Register a subscription and announce it to the brokers of the topic; return how many answered."""
        validate_topic(topic)
        self.subscriptions[topic] = build_subscription(topic, expression, self.clock.now_ms())
        route = yield from self.route(topic)
        with self._lock:
            self._broker_addrs.update(a for b in route.broker_datas for a in b.broker_addrs.values() if a)  # slaves too
        return (yield from self.heartbeat())

    def fetch_subscribe_message_queues(self, topic: str) -> Plan[list[MessageQueue]]:
        """The topic's readable queues, sorted."""
        route = yield from self.route(topic, refresh=True)
        return route.subscribe_queues()

    def pull_from_which_node(self, mq: MessageQueue) -> int:
        """The broker id the last pull answer of ``mq`` suggested (0, the master, before any)."""
        return self._pull_from_which_node.get(mq, MASTER_ID)

    def pull(
        self,
        mq: MessageQueue,
        offset: int,
        max_nums: int = 32,
        sub_expression: str = SUB_ALL,
        suspend_ms: int = 0,
        commit_offset: int | None = None,
    ) -> Plan[PullResult]:
        """Pull up to ``max_nums`` messages from ``offset``; long-poll up to ``suspend_ms`` when there is none.

        The request goes to the broker id the last answer suggested, else the master, else a slave
        (see :mod:`.broker_addressing`); a commit offset rides along only to a master, as in RocketMQ.
        An address that fails is marked unreachable and the error is raised (the caller retries)."""
        broker_id, addr = yield from self.subscribe_addr(mq.topic, mq.broker_name, self.pull_from_which_node(mq))
        if broker_id != MASTER_ID:
            commit_offset = None
        sub, ext, wait = self.pull_request(mq, offset, max_nums, sub_expression, suspend_ms, commit_offset)
        try:
            reply = yield Call(RequestCode.PULL_MESSAGE, ext, addr=addr, timeout_s=wait)
        except RemotingError:
            self.mark_unreachable(addr)
            raise
        return self.pull_result(mq, offset, sub, addr, reply.code, reply.remark, reply.ext, reply.body)

    def pull_request(
        self,
        mq: MessageQueue,
        offset: int,
        max_nums: int,
        sub_expression: str,
        suspend_ms: int,
        commit_offset: int | None,
    ) -> tuple[SubscriptionData, dict[str, str], float]:
        """(subscription, PULL_MESSAGE header, seconds to wait for the answer) of one pull."""
        sub = self.subscriptions.get(mq.topic)
        if sub is None or sub.sub_string != (sub_expression.strip() or SUB_ALL):
            sub = build_subscription(mq.topic, sub_expression, self.clock.now_ms())
        sys_flag = PULL_SYS_FLAG_SUBSCRIPTION
        if suspend_ms > 0:
            sys_flag |= PULL_SYS_FLAG_SUSPEND
        if commit_offset is not None:
            sys_flag |= PULL_SYS_FLAG_COMMIT_OFFSET
        ext = PullMessageRequestHeader(
            **queue_fields(mq),
            consumer_group=self.group,
            queue_offset=offset,
            max_msg_nums=max_nums,
            sys_flag=sys_flag,
            commit_offset=commit_offset if commit_offset is not None else 0,
            suspend_timeout_millis=max(0, suspend_ms),
            subscription=sub.sub_string,
            sub_version=sub.sub_version,
            expression_type=sub.expression_type,
        ).encode()
        wait = self.timeout_s + (
            suspend_ms / 1000 if suspend_ms > 0 else 0
        )  # a parked pull answers by its suspend time
        return sub, ext, wait

    def pull_result(
        self,
        mq: MessageQueue,
        offset: int,
        sub: SubscriptionData,
        addr: str,
        code: int,
        remark: str | None,
        ext: dict[str, str],
        body: bytes,
    ) -> PullResult:
        """The PullResult of a PULL_MESSAGE response (records decoded, tags re-filtered); MQBrokerError otherwise."""
        status = _PULL_STATUS.get(code)  # type: ignore[call-overload]
        if status is None:
            raise broker_error(code, remark, request_code=RequestCode.PULL_MESSAGE, addr=addr)
        next_begin = int(ext.get("nextBeginOffset", offset))
        min_offset = int(ext.get("minOffset", 0))
        max_offset = int(ext.get("maxOffset", 0))
        messages: list[MessageExt] = []
        if status is PullStatus.FOUND and body:
            messages = inflate_bodies(message_codec.decode_records(body))
            if sub.tags_set:
                messages = [m for m in messages if m.tags in sub.tags_set]
            min_text, max_text = str(min_offset), str(max_offset)
            for m in messages:
                props = m.properties
                props[PROPERTY_MIN_OFFSET] = min_text
                props[PROPERTY_MAX_OFFSET] = max_text
        suggest = int(ext.get("suggestWhichBrokerId", 0) or 0)
        with self._lock:
            self._progress[mq] = (next_begin, self.clock.now_ms())
            self._pull_from_which_node[mq] = suggest
        return PullResult(status, next_begin, min_offset, max_offset, tuple(messages), suggest)

    def _queue_call(self, code: int, mq: MessageQueue, header: QueueRequestHeader) -> Plan[Any]:
        """One request about ``mq`` to the master of its broker name, else a slave (findBrokerAddressInAdmin);
        when that address fails, once more to the group's next reachable address, if there is one."""
        ext = header.encode()
        _, addr = yield from self.admin_addr(mq.topic, mq.broker_name)
        try:
            return (yield Call(code, ext, addr=addr))
        except RemotingError:
            self.mark_unreachable(addr)
            _, other = yield from self.admin_addr(mq.topic, mq.broker_name)
            if other == addr:
                raise
        return (yield Call(code, ext, addr=other))

    def query_offset(self, mq: MessageQueue, group: str | None = None) -> Plan[int]:
        """The group's committed offset of ``mq``; -1 when the broker has none (QUERY_NOT_FOUND)."""
        header = QueryConsumerOffsetRequestHeader(**queue_fields(mq), consumer_group=group or self.group)
        reply = yield from self._queue_call(RequestCode.QUERY_CONSUMER_OFFSET, mq, header)
        if reply.code == ResponseCode.QUERY_NOT_FOUND:
            return -1
        return int(check(reply, request_code=RequestCode.QUERY_CONSUMER_OFFSET).ext.get("offset", -1))

    def update_offset(self, mq: MessageQueue, offset: int, group: str | None = None) -> Plan[None]:
        """Commit the group's offset of ``mq`` on its broker (waiting for the answer)."""
        header = UpdateConsumerOffsetRequestHeader(
            topic=mq.topic,
            queue_id=mq.queue_id,
            broker_name=mq.broker_name,
            consumer_group=group or self.group,
            commit_offset=offset,
        )
        reply = yield from self._queue_call(RequestCode.UPDATE_CONSUMER_OFFSET, mq, header)
        check(reply, request_code=RequestCode.UPDATE_CONSUMER_OFFSET)

    def max_offset(self, mq: MessageQueue) -> Plan[int]:
        reply = yield from self._queue_call(
            RequestCode.GET_MAX_OFFSET,
            mq,
            GetMaxOffsetRequestHeader(**queue_fields(mq)),
        )
        return int(check(reply, request_code=RequestCode.GET_MAX_OFFSET).ext.get("offset", 0))

    def min_offset(self, mq: MessageQueue) -> Plan[int]:
        reply = yield from self._queue_call(
            RequestCode.GET_MIN_OFFSET,
            mq,
            GetMinOffsetRequestHeader(**queue_fields(mq)),
        )
        return int(check(reply, request_code=RequestCode.GET_MIN_OFFSET).ext.get("offset", 0))

    def search_offset(self, mq: MessageQueue, timestamp_ms: int) -> Plan[int]:
        """The offset of the message stored at (or nearest to) ``timestamp_ms``."""
        header = SearchOffsetRequestHeader(**queue_fields(mq), timestamp=timestamp_ms)
        reply = yield from self._queue_call(RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, mq, header)
        return int(check(reply, request_code=RequestCode.SEARCH_OFFSET_BY_TIMESTAMP).ext.get("offset", 0))

    def earliest_msg_store_time(self, mq: MessageQueue) -> Plan[int]:
        header = GetEarliestMsgStoretimeRequestHeader(**queue_fields(mq))
        reply = yield from self._queue_call(RequestCode.GET_EARLIEST_MSG_STORETIME, mq, header)
        return int(check(reply, request_code=RequestCode.GET_EARLIEST_MSG_STORETIME).ext.get("timestamp", -1))

    def running_info_body(self) -> bytes:
        """The ConsumerRunningInfo body this client answers GET_CONSUMER_RUNNING_INFO with."""
        with self._lock:
            progress = dict(self._progress)
        mq_table = {
            mq: {"commitOffset": off, "lastPullTimestamp": ts, "cachedMsgCount": 0, "droped": False, "locked": False}
            for mq, (off, ts) in progress.items()
        }
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


def _running_info_handler(plans: PullPlans) -> Handler:
    """Answer GET_CONSUMER_RUNNING_INFO for the client's own group with :meth:`PullPlans.running_info_body`."""

    async def handle(ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        try:
            group = GetConsumerRunningInfoRequestHeader.decode(request).consumer_group
        except RemotingCommandError as exc:
            return request.response(ResponseCode.SYSTEM_ERROR, str(exc))
        if group != plans.group:
            return request.response(
                ResponseCode.SYSTEM_ERROR, f"The Consumer Group <{group}> not exist in this consumer"
            )
        return request.response(ResponseCode.SUCCESS, body=plans.running_info_body())

    return handle


async def _ignore(ctx: ChannelContext, request: RemotingCommand) -> None:
    return None  # NOTIFY_CONSUMER_IDS_CHANGED: a pull client does no rebalancing


class _PullFrontEnd(_FrontEnd):
    """What both pull clients add to their front end: PullPlans, and answers to broker requests."""

    plans: PullPlans

    def _init_plans(
        self,
        driver: AsyncDriver | BlockingDriver,
        group: str,
        clock: Clock,
        instance_name: str | None,
        timeout_s: float,
    ) -> None:
        self.plans = PullPlans(
            driver.namesrv_addrs, group, clock=clock, instance_name=instance_name, timeout_s=timeout_s
        )
        driver.remoting.register_processor(RequestCode.GET_CONSUMER_RUNNING_INFO, _running_info_handler(self.plans))
        driver.remoting.register_processor(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, _ignore)

    @property
    def group(self) -> str:
        return self.plans.group


class AsyncPullClient(_PullFrontEnd, AsyncFrontEnd):
    """Asyncio pull client for one consumer group (default TOOLS_CONSUMER, as RocketMQ's tools)."""

    def __init__(
        self,
        namesrv_addrs: str | Iterable[str],
        group: str = TOOLS_CONSUMER_GROUP,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        remoting: RemotingClient | None = None,
        clock: Clock = SYSTEM_CLOCK,
        instance_name: str | None = None,
        heartbeat_interval_s: float | None = HEARTBEAT_INTERVAL_S,
        access_key: str | None = None,
        secret_key: str | None = None,
        tls: TlsConfig | None = None,
    ) -> None:
        self.driver = AsyncDriver(
            namesrv_addrs, timeout_s, remoting, signer=acl_signer(access_key, secret_key), tls=tls
        )
        self._init_plans(self.driver, group, clock, instance_name, timeout_s)
        self._init_async(heartbeat_interval_s)

    async def subscribe(self, topic: str, expression: str = SUB_ALL) -> int:
        """Register a subscription and heartbeat it to the topic's brokers; return how many answered."""
        self._start_heartbeats()
        return await self.driver.run(self.plans.subscribe(topic, expression))

    async def pull(
        self,
        mq: MessageQueue,
        offset: int,
        max_nums: int = 32,
        sub_expression: str = SUB_ALL,
        suspend_ms: int = 0,
        commit_offset: int | None = None,
    ) -> PullResult:
        """Pull up to ``max_nums`` messages from ``offset``; long-poll up to ``suspend_ms`` when there is none.

        With the broker's address cached the request goes straight to the connection; otherwise
        the pull plan looks the route up first.
        """
        plans = self.plans
        found = plans.cached_subscribe_addr(mq.topic, mq.broker_name, plans.pull_from_which_node(mq))
        if found is None:
            return await self.driver.run(plans.pull(mq, offset, max_nums, sub_expression, suspend_ms, commit_offset))
        broker_id, addr = found
        sub, ext, wait = plans.pull_request(
            mq, offset, max_nums, sub_expression, suspend_ms, commit_offset if broker_id == MASTER_ID else None
        )
        try:
            response = await self.driver.remoting.invoke(
                addr, RemotingCommand.request(RequestCode.PULL_MESSAGE, ext), wait
            )
        except RemotingError:
            plans.mark_unreachable(addr)
            raise
        return plans.pull_result(
            mq, offset, sub, addr, response.code, response.remark, response.ext_fields, response.body
        )

    fetch_subscribe_message_queues = async_operation(PullPlans.fetch_subscribe_message_queues)
    query_offset = async_operation(PullPlans.query_offset)
    update_offset = async_operation(PullPlans.update_offset)
    max_offset = async_operation(PullPlans.max_offset)
    min_offset = async_operation(PullPlans.min_offset)
    search_offset = async_operation(PullPlans.search_offset)
    earliest_msg_store_time = async_operation(PullPlans.earliest_msg_store_time)


class PullClient(_PullFrontEnd, BlockingFrontEnd):
    """Blocking, thread-safe pull client (same behaviour as AsyncPullClient)."""

    def __init__(
        self,
        namesrv_addrs: str | Iterable[str],
        group: str = TOOLS_CONSUMER_GROUP,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        remoting: BlockingRemotingClient | None = None,
        clock: Clock = SYSTEM_CLOCK,
        instance_name: str | None = None,
        heartbeat_interval_s: float | None = HEARTBEAT_INTERVAL_S,
        access_key: str | None = None,
        secret_key: str | None = None,
        tls: TlsConfig | None = None,
    ) -> None:
        self.driver = BlockingDriver(
            namesrv_addrs, timeout_s, remoting, signer=acl_signer(access_key, secret_key), tls=tls
        )
        self._init_plans(self.driver, group, clock, instance_name, timeout_s)
        self._init_blocking(heartbeat_interval_s)

    def subscribe(self, topic: str, expression: str = SUB_ALL) -> int:
        self._start_heartbeats()
        return self.driver.run(self.plans.subscribe(topic, expression))

    pull = blocking_operation(PullPlans.pull)
    fetch_subscribe_message_queues = blocking_operation(PullPlans.fetch_subscribe_message_queues)
    query_offset = blocking_operation(PullPlans.query_offset)
    update_offset = blocking_operation(PullPlans.update_offset)
    max_offset = blocking_operation(PullPlans.max_offset)
    min_offset = blocking_operation(PullPlans.min_offset)
    search_offset = blocking_operation(PullPlans.search_offset)
    earliest_msg_store_time = blocking_operation(PullPlans.earliest_msg_store_time)


SimplePuller = PullClient  # the name the brief and mqadmin use
AsyncSimplePuller = AsyncPullClient
