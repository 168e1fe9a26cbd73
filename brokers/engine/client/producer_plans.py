"""ProducerPlans: the send operations as plans (no I/O), shared by SimpleProducer and Producer.

No load balancing beyond RocketMQ's default: route lookup on the name servers (falling back to
the TBW102 template route for a topic that does not exist yet, so the broker auto-creates it,
as RocketMQ's producer does), SEND_MESSAGE_V2 with the one-letter header keys,
SEND_BATCH_MESSAGE with a batch body, a UNIQ_KEY per message (§5.9), zlib for bodies of
COMPRESS_OVER bytes or more, round robin over the writable queues with retries on a queue of
another broker. The simple producers (:mod:`.simple_producer`) run these plans as they are; the
load-balancing :class:`~.producer.Producer` picks the queue and runs
the ``send`` / ``send_batch`` plans on it. Results are :class:`~.send_result.SendResult`.
"""

from __future__ import annotations

import itertools
import random
import zlib
from collections.abc import Sequence
from typing import Any, NamedTuple

from brokers.engine.client.driver import DEFAULT_TIMEOUT_S
from brokers.engine.client.admin_errors import broker_error
from brokers.engine.client.errors import CLIENT_ERROR, MQBrokerError, MQClientError
from brokers.engine.client.identity import UniqIdGenerator
from brokers.engine.client.plan import Call, Plan
from brokers.engine.client.route_cache import ClientPlans
from brokers.engine.client.send_result import SendResult, SendStatus
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
    KEY_SEPARATOR,
    NAME_VALUE_SEPARATOR,
    PROPERTY_DELAY_TIME_LEVEL,
    PROPERTY_KEYS,
    PROPERTY_SEPARATOR,
    PROPERTY_TAGS,
    PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX,
    PROPERTY_WAIT_STORE_MSG_OK,
    Message,
    properties_to_string,
)
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.topic_validator import validate_topic
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.errors import RemotingError
from brokers.engine.remoting.headers.produce import SendMessageRequestHeaderV2

__all__ = [
    "COMPRESS_LEVEL",
    "COMPRESS_OVER",
    "DEFAULT_PRODUCER_GROUP",
    "NOT_ALLOWED_SEND_TOPICS",
    "RETRY_TIMES_WHEN_SEND_FAILED",
    "Outgoing",
    "ProducerPlans",
    "retryable",
]

DEFAULT_PRODUCER_GROUP = "DEFAULT_PRODUCER"  # RocketMQ's MixAll.DEFAULT_PRODUCER_GROUP
COMPRESS_OVER = 4096  # compressMsgBodyOverHowmuch; bodies this size or larger are zlib-compressed
COMPRESS_LEVEL = 5  # RocketMQ's default zlib level
RETRY_TIMES_WHEN_SEND_FAILED = 2  # extra attempts on another queue (retryTimesWhenSendFailed)
# Topics producers may not send to (RocketMQ's TopicValidator.NOT_ALLOWED_SEND_TOPIC_SET).
NOT_ALLOWED_SEND_TOPICS = frozenset(
    {SCHEDULE_TOPIC, RMQ_SYS_TRANS_HALF_TOPIC, RMQ_SYS_TRANS_OP_HALF_TOPIC, SELF_TEST_TOPIC, OFFSET_MOVED_EVENT}
)
# Send response codes after which another queue is tried (DefaultMQProducerImpl.sendDefaultImpl).
_RETRY_ON = frozenset(
    {
        ResponseCode.TOPIC_NOT_EXIST,
        ResponseCode.SERVICE_NOT_AVAILABLE,
        ResponseCode.SYSTEM_ERROR,
        ResponseCode.NO_PERMISSION,
        ResponseCode.SYSTEM_BUSY,
    }
)


_WAIT_ONLY = properties_to_string({PROPERTY_WAIT_STORE_MSG_OK: "true"})  # a batch request's own properties
_WAIT_ITEM = PROPERTY_SEPARATOR + _WAIT_ONLY
_UNIQ_ITEM = PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX + NAME_VALUE_SEPARATOR
_TAGS_ITEM = PROPERTY_TAGS + NAME_VALUE_SEPARATOR
_KEYS_ITEM = PROPERTY_KEYS + NAME_VALUE_SEPARATOR


_SEND_STATUS = {
    ResponseCode.SUCCESS: SendStatus.SEND_OK,
    ResponseCode.FLUSH_DISK_TIMEOUT: SendStatus.FLUSH_DISK_TIMEOUT,
    ResponseCode.FLUSH_SLAVE_TIMEOUT: SendStatus.FLUSH_SLAVE_TIMEOUT,
    ResponseCode.SLAVE_NOT_AVAILABLE: SendStatus.SLAVE_NOT_AVAILABLE,
}


class Outgoing(NamedTuple):
    """A send ready for the wire: what :meth:`ProducerPlans.prepare` (or ``prepare_batch``) made of the message(s)."""

    code: int  # SEND_MESSAGE_V2 or SEND_BATCH_MESSAGE
    topic: str
    properties: str  # the properties string of the request header (UNIQ_KEY and WAIT included)
    body: bytes  # the message body (maybe compressed), or a batch body
    sys_flag: int
    flag: int
    batch: bool
    msg_id: str  # the UNIQ_KEY, comma-joined for a batch


def _check_sendable(topic: str) -> None:
    if topic in NOT_ALLOWED_SEND_TOPICS:
        raise MQClientError(CLIENT_ERROR, f"sending to topic {topic!r} is not allowed")


class ProducerPlans(ClientPlans):
    """Send plans: queue selection, message checks, compression, retries on another broker."""

    def __init__(
        self,
        namesrv_addrs: tuple[str, ...],
        group: str,
        *,
        clock: Clock = SYSTEM_CLOCK,
        instance_name: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        retry_times: int = RETRY_TIMES_WHEN_SEND_FAILED,
        compress_over: int = COMPRESS_OVER,
    ) -> None:
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
        return self._pick_queue(topic, queues, last_broker)

    def _pick_queue(self, topic: str, queues: list[MessageQueue], last_broker: str | None) -> MessageQueue:
        """Round robin over ``queues``, avoiding the broker of the last failed attempt."""
        if not queues:
            raise MQClientError(CLIENT_ERROR, f"topic {topic!r} has no writable queue")
        start = next(self._send_index)
        if last_broker is not None:
            for i in range(len(queues)):
                mq = queues[(start + i) % len(queues)]
                if mq.broker_name != last_broker:
                    return mq
        return queues[start % len(queues)]

    def cached_target(
        self, topic: str, mq: MessageQueue | None, last_broker: str | None
    ) -> tuple[MessageQueue, str] | None:
        """(queue, broker address) for the next attempt from the cached route, without I/O.

        None when the route is not cached (or stale), or the broker has not been told who we
        are yet: the send plan fetches and registers first.
        """
        if mq is None:
            queues = self.cached_publish_queues(topic)
            if queues is None:
                return None
            mq = self._pick_queue(topic, queues, last_broker)
        addr = self.cached_broker_addr(topic, mq.broker_name)
        if addr is None or addr not in self._heartbeated:
            return None
        return mq, addr

    def wire_properties(self, msg: Message, *, wait: bool) -> tuple[str, str]:
        """(properties string, UNIQ_KEY) of ``msg`` as the wire carries them: its properties, TAGS
        and KEYS (``Message.all_properties``), a fresh UNIQ_KEY unless it has one and, with
        ``wait``, WAIT=true unless set.

        A message without properties of its own (tags and keys set as fields, the common case)
        gets the same string written out directly, without the dict in between."""
        if msg.properties:
            props = msg.all_properties()
            if (
                PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX not in props
            ):  # setdefault would make (and waste) an id every time
                props[PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX] = self.uniq_ids.next_id()
            if wait:
                props.setdefault(PROPERTY_WAIT_STORE_MSG_OK, "true")
            return properties_to_string(props), props[PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX]
        uniq = self.uniq_ids.next_id()
        text = _UNIQ_ITEM + uniq
        keys = msg.keys
        if keys:
            if not isinstance(keys, str):
                keys = KEY_SEPARATOR.join(keys)
            if keys:
                text = _KEYS_ITEM + keys + PROPERTY_SEPARATOR + text
        if msg.tags:
            text = _TAGS_ITEM + msg.tags + PROPERTY_SEPARATOR + text
        return (text + _WAIT_ITEM if wait else text), uniq

    def prepare(self, msg: Message) -> Outgoing:
        """Validate one message and encode what goes on the wire (UNIQ_KEY and WAIT added, body compressed)."""
        validate_topic(msg.topic)
        _check_sendable(msg.topic)
        if not msg.body:
            raise MQClientError(CLIENT_ERROR, "the message body is empty")
        if len(msg.body) > MAX_MESSAGE_SIZE:
            raise MQClientError(
                CLIENT_ERROR, f"the message body is {len(msg.body)} bytes, the limit is {MAX_MESSAGE_SIZE}"
            )
        properties, uniq = self.wire_properties(msg, wait=True)
        body, sys_flag = bytes(msg.body), 0
        if self.compress_over and len(body) >= self.compress_over:
            body, sys_flag = zlib.compress(body, COMPRESS_LEVEL), message_codec.COMPRESSED_FLAG
        return Outgoing(RequestCode.SEND_MESSAGE_V2, msg.topic, properties, body, sys_flag, msg.flag, False, uniq)

    def prepare_batch(self, msgs: Sequence[Message]) -> Outgoing:
        """Validate messages of one topic and encode them as one SEND_BATCH_MESSAGE body."""
        if not msgs:
            raise MQClientError(CLIENT_ERROR, "the batch is empty")
        topic = msgs[0].topic
        validate_topic(topic)
        if topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
            raise MQClientError(CLIENT_ERROR, "retry topics and delayed messages cannot be batched")
        entries: list[bytes] = []
        ids: list[str] = []
        for m in msgs:
            if m.topic != topic:
                raise MQClientError(CLIENT_ERROR, "every message of a batch must have the same topic")
            if m.properties.get(PROPERTY_DELAY_TIME_LEVEL):
                raise MQClientError(CLIENT_ERROR, "retry topics and delayed messages cannot be batched")
            if not m.body:
                raise MQClientError(CLIENT_ERROR, "a message body in the batch is empty")
            properties, uniq = self.wire_properties(m, wait=False)
            ids.append(uniq)
            entries.append(message_codec.encode_batch_entry(m.flag, bytes(m.body), properties))
        _check_sendable(topic)
        body = b"".join(entries)
        if len(body) > MAX_MESSAGE_SIZE:
            raise MQClientError(CLIENT_ERROR, f"the batch is {len(body)} bytes, the limit is {MAX_MESSAGE_SIZE}")
        return Outgoing(RequestCode.SEND_BATCH_MESSAGE, topic, _WAIT_ONLY, body, 0, 0, True, ",".join(ids))

    def attempts(self, mq: MessageQueue | None) -> int:
        """One attempt to a given queue; with round robin, 1 + retry_times (another broker each)."""
        return 1 if mq is not None else 1 + max(0, self.retry_times)

    def send_ext(self, out: Outgoing, target: MessageQueue) -> dict[str, str]:
        """The SEND_MESSAGE_V2 / SEND_BATCH_MESSAGE header (one-letter keys)."""
        return SendMessageRequestHeaderV2(
            producer_group=self.group,
            topic=out.topic,
            default_topic=AUTO_CREATE_TOPIC_KEY_TOPIC,
            default_topic_queue_nums=DEFAULT_TOPIC_QUEUE_NUMS,
            queue_id=target.queue_id,
            sys_flag=out.sys_flag,
            born_timestamp=self.clock.now_ms(),
            flag=out.flag,
            properties=out.properties,
            reconsume_times=0,
            batch=out.batch,
            broker_name=target.broker_name,
        ).encode()

    def send_result(
        self, out: Outgoing, target: MessageQueue, addr: str, code: int, remark: str | None, ext: dict[str, str]
    ) -> SendResult:
        """The SendResult of a response; MQBrokerError when the broker refused (``retryable`` says whether to try another queue)."""
        status = _SEND_STATUS.get(code)  # type: ignore[call-overload]
        if status is None:
            if code == ResponseCode.TOPIC_NOT_EXIST:
                self._routes.pop(out.topic, None)
            raise broker_error(code, remark, request_code=out.code, addr=addr)
        queue_id = int(ext.get("queueId", target.queue_id))
        queue = target if queue_id == target.queue_id else MessageQueue(out.topic, target.broker_name, queue_id)
        return SendResult(
            status,
            out.msg_id,
            ext.get("msgId", ""),
            queue,
            int(ext.get("queueOffset", -1)),
            ext.get("MSG_REGION", "DefaultRegion"),
        )

    def send(self, msg: Message, mq: MessageQueue | None = None) -> Plan[SendResult]:
        """Send one message to ``mq``, or round robin over writable queues (retrying another queue)."""
        return (yield from self.deliver(self.prepare(msg), mq))

    def send_batch(self, msgs: Sequence[Message], mq: MessageQueue | None = None) -> Plan[SendResult]:
        """Send messages of one topic in one SEND_BATCH_MESSAGE; they get consecutive queue offsets."""
        return (yield from self.deliver(self.prepare_batch(msgs), mq))

    def deliver(
        self, out: Outgoing, mq: MessageQueue | None, attempts: int | None = None, last_broker: str | None = None
    ) -> Plan[SendResult]:
        """Send a prepared message: ``attempts`` tries (default :meth:`attempts`), another broker after a failure."""
        last_error: RemotingError | None = None
        for _ in range(self.attempts(mq) if attempts is None else attempts):
            target = mq if mq is not None else (yield from self._select_queue(out.topic, last_broker))
            last_broker = target.broker_name
            addr = yield from self.broker_addr(out.topic, target.broker_name, allow_template=True)
            if addr not in self._heartbeated:
                yield from self._first_contact(addr)
            try:
                reply = yield Call(out.code, self.send_ext(out, target), out.body, addr=addr, timeout_s=self.timeout_s)
                return self.send_result(out, target, addr, reply.code, reply.remark, reply.ext)
            except RemotingError as exc:
                if not retryable(exc):
                    raise
                last_error = exc
        assert last_error is not None
        raise last_error


def retryable(exc: RemotingError) -> bool:
    """A send failure after which another queue is tried: no answer, or a refusal in ``_RETRY_ON``."""
    return not isinstance(exc, MQBrokerError) or exc.code in _RETRY_ON
