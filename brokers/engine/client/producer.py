"""The simple producer: AsyncSimpleProducer (asyncio, pipelined) and SimpleProducer (blocking).

No load balancing beyond RocketMQ's default: route lookup on the name servers (falling back to
the TBW102 template route for a topic that does not exist yet, so the broker auto-creates it,
as RocketMQ's producer does), SEND_MESSAGE_V2 with the one-letter header keys,
SEND_BATCH_MESSAGE with a batch body, a UNIQ_KEY per message (§5.9), zlib for bodies of
COMPRESS_OVER bytes or more, round robin over the writable queues with retries on a queue of
another broker. The async producer pipelines: any number of ``send`` calls may be in flight at
once on one connection per broker.
"""
from __future__ import annotations

import itertools
import random
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from brokers.engine.client.driver import DEFAULT_TIMEOUT_S, AsyncDriver, BlockingDriver
from brokers.engine.client.errors import CLIENT_ERROR, MQBrokerError, MQClientError
from brokers.engine.client.front_end import HEARTBEAT_INTERVAL_S, AsyncFrontEnd, BlockingFrontEnd
from brokers.engine.client.identity import UniqIdGenerator
from brokers.engine.client.plan import Call, Plan
from brokers.engine.client.route_cache import ClientPlans
from brokers.engine.common import message_codec
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.common.constants import (
    AUTO_CREATE_TOPIC_KEY_TOPIC,
    DEFAULT_TOPIC_QUEUE_NUMS,
    MAX_MESSAGE_SIZE,
    OFFSET_MOVED_EVENT,
    RETRY_GROUP_TOPIC_PREFIX,
    RMQ_SYS_TRANS_HALF_TOPIC,
    RMQ_SYS_TRANS_OP_HALF_TOPIC,
    SCHEDULE_TOPIC,
    SELF_TEST_TOPIC,
)
from brokers.engine.common.message import (
    PROPERTY_DELAY_TIME_LEVEL,
    PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX,
    PROPERTY_WAIT_STORE_MSG_OK,
    Message,
    properties_to_string,
)
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.validation import validate_topic
from brokers.engine.remoting.blocking import BlockingRemotingClient
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.errors import RemotingError

__all__ = [
    "COMPRESS_LEVEL", "COMPRESS_OVER", "DEFAULT_PRODUCER_GROUP", "NOT_ALLOWED_SEND_TOPICS", "RETRY_TIMES_WHEN_SEND_FAILED",
    "AsyncSimpleProducer", "ProducerPlans", "SendResult", "SendStatus", "SimpleProducer",
]

DEFAULT_PRODUCER_GROUP = "DEFAULT_PRODUCER"  # RocketMQ's MixAll.DEFAULT_PRODUCER_GROUP
COMPRESS_OVER = 4096  # compressMsgBodyOverHowmuch; bodies this size or larger are zlib-compressed
COMPRESS_LEVEL = 5  # RocketMQ's default zlib level
RETRY_TIMES_WHEN_SEND_FAILED = 2  # extra attempts on another queue (retryTimesWhenSendFailed)
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


@dataclass(frozen=True, slots=True)
class SendResult:
    """Outcome of a stored send; ``msg_id`` is the UNIQ_KEY (comma-joined for a batch)."""

    status: SendStatus
    msg_id: str
    offset_msg_id: str  # store host + commit-log offset; comma-joined for a batch
    message_queue: MessageQueue
    queue_offset: int  # of the first message for a batch
    region_id: str = "DefaultRegion"


def _check_sendable(topic: str) -> None:
    if topic in NOT_ALLOWED_SEND_TOPICS:
        raise MQClientError(CLIENT_ERROR, f"sending to topic {topic!r} is not allowed")


class ProducerPlans(ClientPlans):
    """Send plans: queue selection, message checks, compression, retries on another broker."""

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
        body = self.encoded_heartbeat()
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

    def _properties(self, msg: Message) -> dict[str, str]:
        """The message's properties, with a fresh UNIQ_KEY unless it has one."""
        props = msg.all_properties()
        props.setdefault(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, self.uniq_ids.next_id())
        return props

    def _prepare(self, msg: Message) -> tuple[dict[str, str], bytes, int]:
        """Validate a message; return (properties with UNIQ_KEY and WAIT, wire body, sysFlag)."""
        validate_topic(msg.topic)
        _check_sendable(msg.topic)
        if not msg.body:
            raise MQClientError(CLIENT_ERROR, "the message body is empty")
        if len(msg.body) > MAX_MESSAGE_SIZE:
            raise MQClientError(CLIENT_ERROR, f"the message body is {len(msg.body)} bytes, the limit is {MAX_MESSAGE_SIZE}")
        props = self._properties(msg)
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
            props = self._properties(m)
            entries.append(message_codec.BatchEntry(m.flag, bytes(m.body), props))
        _check_sendable(topic)
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


class AsyncSimpleProducer(AsyncFrontEnd):
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


class SimpleProducer(BlockingFrontEnd):
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
