"""SEND_MESSAGE (10, V1 header), SEND_MESSAGE_V2 (310, keys a..n), SEND_BATCH_MESSAGE (320).

What the broker does with a send (protocol reference §2.2), in order; the first failing check
answers and nothing is stored:

1. the broker must be writable (NO_PERMISSION);
2. the topic must follow the naming rule (SYSTEM_ERROR) and not be a system topic but RMQ_SYS_TRACE_TOPIC
   (NO_PERMISSION, "Sending message to topic[X] is forbidden");
3. the topic must exist; otherwise it is auto-created from ``defaultTopic`` (TBW102) when
   ``auto_create_topic_enable`` is on, ``%RETRY%`` topics are created with the group's retry
   queue count, and anything else is TOPIC_NOT_EXIST (17);
4. the topic must be writable (NO_PERMISSION);
5. ``queueId`` < 0 picks a random writable queue; ``queueId`` >= max(read, write) queue count is
   SYSTEM_ERROR (RocketMQ's ``msgCheck``; a queue below the read count stays acceptable so a
   producer with a route from before a write-queue shrink still lands in a readable queue);
6. the body must not exceed ``max_message_size`` and the stored properties 32767 bytes
   (MESSAGE_ILLEGAL, 13); transaction messages are refused as RocketMQ refuses them with
   ``rejectTransactionMessage`` set (NO_PERMISSION, "the broker[<ip>] sending transaction
   message is forbidden"): a ``TRAN_MSG=true`` property (but a retry of one: reconsume times
   and a delay level both set, as RocketMQ exempts it) or ``sysFlag`` transaction bits PREPARED
   (0x4) or ROLLBACK (0xC), which the store would keep out of every consume queue, so the
   message would be answered SEND_OK and never consumed (no transaction support here);
7. ``%RETRY%<group>`` sends whose reconsume count reached the maximum go to ``%DLQ%<group>``;
   ``DELAY`` > 0 parks the message in SCHEDULE_TOPIC_XXXX (the schedule service delivers it).

The stored properties drop ``WAIT`` (still honoured for the flush wait) and gain ``CLUSTER``, and, as
RocketMQ 5's broker stamps every message, ``MSG_REGION`` and ``TRACE_ON`` (a 5.x consumer's trace
leaves out every message without a region).
A batch's header properties are appended to each of its messages' own, but for the batch's own
``UNIQ_KEY``: RocketMQ 5.x clients give the batch an id of its own (``MessageClientIDSetter.setUniqID``
on the MessageBatch), which would otherwise override every message's id (RocketMQ's store stopped
appending batch properties for the same reason, apache/rocketmq#9416).
Every response, errors included, carries ``MSG_REGION`` and ``TRACE_ON``.
"""

from __future__ import annotations

import dataclasses
import logging
import random
from typing import TYPE_CHECKING

from brokers.engine.broker.processors.base import Processor, ProcessorRegistry, RequestError, checked_topic
from brokers.engine.common.constants import (
    DLQ_GROUP_TOPIC_PREFIX,
    MAX_PROPERTIES_SIZE,
    RETRY_GROUP_TOPIC_PREFIX,
    RMQ_SYS_TRACE_TOPIC,
)
from brokers.engine.common.message import (
    PROPERTY_CLUSTER,
    PROPERTY_MSG_REGION,
    PROPERTY_TRACE_SWITCH,
    PROPERTY_DELAY_TIME_LEVEL,
    PROPERTY_MAX_RECONSUME_TIMES,
    PROPERTY_RECONSUME_TIME,
    PROPERTY_TRANSACTION_PREPARED,
    PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX,
    PROPERTY_WAIT_STORE_MSG_OK,
    properties_to_string,
    string_to_properties,
)
from brokers.engine.common.message_codec import (
    MULTI_TAGS_FLAG,
    TRANSACTION_PREPARED_TYPE,
    TRANSACTION_ROLLBACK_TYPE,
    TRANSACTION_TYPE_MASK,
    RecordFormatError,
    iter_batch_body,
)
from brokers.engine.common.perm import PERM_RW, is_writeable
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.remoting.channel import ChannelContext
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.errors import RemotingCommandError
from brokers.engine.remoting.headers.produce import SendMessageRequestHeader, SendMessageRequestHeaderV2
from brokers.engine.store.message_inner import MessageExtBatch, MessageExtBrokerInner
from brokers.engine.store.results import PutMessageResult, PutMessageStatus

if TYPE_CHECKING:
    from brokers.engine.broker.broker_context import BrokerContext

log = logging.getLogger("brokers.engine.broker")

# Request version from which the sender's maxReconsumeTimes is honoured (MQVersion V3_4_9).
VERSION_HONOUR_MAX_RECONSUME = 121
TOPIC_NOT_EXIST_HINT = "See http://rocketmq.apache.org/docs/faq/ for further details."


def _send_header(request: RemotingCommand) -> SendMessageRequestHeader:
    """Read the V1 header or the V2 one (short keys, what codes 310/320 normally carry); a V2
    header carries the short keys only (Java's broker reads nothing else from it)."""
    fields = request.ext_fields
    if "topic" not in fields and "b" in fields:
        return SendMessageRequestHeaderV2.decode(request)
    return SendMessageRequestHeader.decode(request)


_DELAY_KEY = PROPERTY_DELAY_TIME_LEVEL + "\x01"  # in a properties string that may carry a delay level

# Topics that passed the name and system-topic checks of a send (bounded: names come from clients).
_SENDABLE_TOPICS_MAX = 10_000


# SendMessageProcessor's remark, with its diskUtil() figures (CL/CQ/INDEX used ratios) filled in.
SERVICE_NOT_AVAILABLE_REMARK = (
    "service not available now. It may be caused by one of the following reasons: the broker's disk "
    "is full [{disk_util}], messages are put to the slave, message store has been shut down, etc."
)
# A commit log write or a SYNC_FLUSH fdatasync failed with an I/O error (not a full disk): the
# message may be in the page cache but not on disk, and the store cannot vouch for it (after a
# failed fdatasync it refuses writes until restarted; running_flags.py). RocketMQ answers a bare
# "UNKNOWN_ERROR"; this says what the producer must assume.
UNKNOWN_ERROR_REMARK = (
    "the disk failed to write or flush the message (I/O error), so the store cannot vouch for it: "
    "it may be lost, send it again once the broker's disk is checked."
)
_PUT_STATUS_CODES = {
    PutMessageStatus.PUT_OK: (ResponseCode.SUCCESS, None),
    PutMessageStatus.FLUSH_DISK_TIMEOUT: (
        ResponseCode.FLUSH_DISK_TIMEOUT,
        "stored, but the disk flush did not confirm in time",
    ),
    PutMessageStatus.FLUSH_SLAVE_TIMEOUT: (
        ResponseCode.FLUSH_SLAVE_TIMEOUT,
        "stored on the master, but no slave acknowledged it in time",
    ),
    PutMessageStatus.SLAVE_NOT_AVAILABLE: (
        ResponseCode.SLAVE_NOT_AVAILABLE,
        "stored on the master, but no slave is available to copy it",
    ),
    PutMessageStatus.CREATE_MAPED_FILE_FAILED: (
        ResponseCode.SYSTEM_ERROR,
        "create mapped file failed, server is busy or broken.",
    ),
    PutMessageStatus.MESSAGE_ILLEGAL: (
        ResponseCode.MESSAGE_ILLEGAL,
        "the message is illegal, maybe msg body or properties length not matched",
    ),
    PutMessageStatus.PROPERTIES_SIZE_EXCEEDED: (
        ResponseCode.MESSAGE_ILLEGAL,
        "the message properties are longer than 32767 bytes",
    ),
    PutMessageStatus.SERVICE_NOT_AVAILABLE: (ResponseCode.SERVICE_NOT_AVAILABLE, SERVICE_NOT_AVAILABLE_REMARK),
    PutMessageStatus.UNKNOWN_ERROR: (ResponseCode.SYSTEM_ERROR, UNKNOWN_ERROR_REMARK),
}


class SendMessageProcessor(Processor):
    def register(self, server: ProcessorRegistry) -> None:
        for code in (RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_BATCH_MESSAGE):
            server.register_processor(code, self.process)

    def __init__(self, broker: BrokerContext) -> None:
        super().__init__(broker)
        self._sendable_topics: set[str] = set()

    def _response_ext(self) -> dict[str, str]:
        config = self.broker.config
        return {"MSG_REGION": config.region_id, "TRACE_ON": "true" if config.trace_on else "false"}

    async def process(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand | None:
        try:
            header = _send_header(request)
            return await self._send(ctx, request, header)
        except RequestError as exc:
            log.info("send from %s refused: %s (code %s)", ctx.remote_addr, exc.remark, exc.code)
            return request.response(exc.code, exc.remark, self._response_ext())
        except RemotingCommandError as exc:  # the header's decode: a field that is not a number, named
            log.info("send from %s refused: %s", ctx.remote_addr, exc)
            return request.response(ResponseCode.SYSTEM_ERROR, str(exc), self._response_ext())

    # -- checks -------------------------------------------------------------------------------

    def _check_topic_name(self, header: SendMessageRequestHeader) -> str:
        broker = self.broker
        if not is_writeable(broker.config.broker_permission):
            raise RequestError(
                ResponseCode.NO_PERMISSION, f"the broker[{broker.config.broker_name}] sending message is forbidden"
            )
        topic = header.topic
        if topic in self._sendable_topics:
            return topic
        checked_topic(topic)
        tcm = broker.topic_config_manager
        # every client may write message traces (RocketMQ forbids only its NOT_ALLOWED_SEND set)
        if tcm.is_system_topic(topic) and topic not in tcm.broker_system_topics and topic != RMQ_SYS_TRACE_TOPIC:
            raise RequestError(ResponseCode.NO_PERMISSION, f"Sending message to topic[{topic}] is forbidden.")
        if len(self._sendable_topics) >= _SENDABLE_TOPICS_MAX:
            self._sendable_topics.clear()
        self._sendable_topics.add(topic)
        return topic

    def _get_or_create_topic(self, ctx: ChannelContext, topic: str, header: SendMessageRequestHeader) -> TopicConfig:
        """The topic's config, auto-created when allowed; the queue id is checked before anything is created."""
        broker = self.broker
        tcm = broker.topic_config_manager
        tc = tcm.select_topic_config(topic)
        create = None
        if tc is None:
            default_topic = header.default_topic
            try:
                checked_topic(default_topic)
            except RequestError:
                default_topic = ""
            tc = tcm.build_auto_create_config(topic, default_topic, header.default_topic_queue_nums)
            if tc is not None:
                create = lambda: tcm.create_topic_in_send_message_method(
                    topic, default_topic, header.default_topic_queue_nums
                )  # noqa: E731
            elif topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
                group = topic[len(RETRY_GROUP_TOPIC_PREFIX) :]
                group_cfg = broker.subscription_group_manager.find_subscription_group_config(group)
                if group_cfg is None:
                    raise RequestError(
                        ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, f"subscription group not exist, {group}"
                    )
                tc = tcm.create_topic_in_send_message_back_method(topic, max(group_cfg.retry_queue_nums, 1), PERM_RW)
            else:
                raise RequestError(
                    ResponseCode.TOPIC_NOT_EXIST,
                    f"topic[{topic}] not exist, apply first please! {TOPIC_NOT_EXIST_HINT}",
                )
        if not is_writeable(tc.perm):
            raise RequestError(
                ResponseCode.NO_PERMISSION, f"the topic[{topic}] sending message is forbidden (perm {tc.perm})"
            )
        valid_ids = max(tc.write_queue_nums, tc.read_queue_nums)
        if header.queue_id >= valid_ids:
            raise RequestError(
                ResponseCode.SYSTEM_ERROR,
                f"request queueId[{header.queue_id}] is illegal, topic {topic} has {tc.write_queue_nums} write queues "
                f"({valid_ids} valid ids), producer: {ctx.remote_addr}",
            )
        if create is not None:
            tc = create() or tc
        return tc

    def _pick_queue(self, tc: TopicConfig, queue_id: int) -> int:
        if queue_id >= 0:
            return queue_id
        if tc.write_queue_nums <= 0:
            raise RequestError(ResponseCode.NO_PERMISSION, f"topic[{tc.topic_name}] has no write queue")
        return random.randrange(tc.write_queue_nums)

    def _check_not_transaction(self, header: SendMessageRequestHeader, props: dict[str, str]) -> None:
        """Refuse a transaction message (see the module docstring, check 6)."""
        prepared = props.get(PROPERTY_TRANSACTION_PREPARED, "").lower() == "true"
        if (
            prepared
            and (header.reconsume_times or 0) > 0
            and props.get(PROPERTY_DELAY_TIME_LEVEL, "0") not in ("", "0")
        ):
            prepared = False  # a retry of a consumed transaction message (clients before 4.6.1)
        if prepared or (header.sys_flag & TRANSACTION_TYPE_MASK) in (
            TRANSACTION_PREPARED_TYPE,
            TRANSACTION_ROLLBACK_TYPE,
        ):
            raise RequestError(
                ResponseCode.NO_PERMISSION,
                f"the broker[{self.broker.config.advertised_ip}] sending transaction message is forbidden",
            )

    def _check_body_size(self, size: int) -> None:
        limit = self.broker.config.max_message_size
        if size > limit:
            raise RequestError(
                ResponseCode.MESSAGE_ILLEGAL, f"the message body size {size} exceeds the maximum of {limit} bytes"
            )

    def _stored_properties(self, props: dict[str, str]) -> tuple[str, bool]:
        """Return (properties string to store, WAIT flag): WAIT dropped, CLUSTER, MSG_REGION and TRACE_ON added."""
        config = self.broker.config
        wait = props.pop(PROPERTY_WAIT_STORE_MSG_OK, "true").strip().lower() != "false"
        props[PROPERTY_CLUSTER] = config.cluster_name
        props[PROPERTY_MSG_REGION] = config.region_id
        props[PROPERTY_TRACE_SWITCH] = "true" if config.trace_on else "false"
        text = properties_to_string(props)
        size = len(text.encode("utf-8"))
        if size > MAX_PROPERTIES_SIZE:
            raise RequestError(
                ResponseCode.MESSAGE_ILLEGAL,
                f"the message properties are {size} bytes, more than the maximum of {MAX_PROPERTIES_SIZE}",
            )
        return text, wait

    # -- retry / DLQ --------------------------------------------------------------------------

    def _handle_retry_and_dlq(
        self, request: RemotingCommand, header: SendMessageRequestHeader, tc: TopicConfig, props: dict[str, str]
    ) -> tuple[TopicConfig, int | None]:
        """For a ``%RETRY%`` send: move it to the DLQ once retries are used up. Returns (topic, queue or None)."""
        topic = tc.topic_name
        if not topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
            return tc, None
        group = topic[len(RETRY_GROUP_TOPIC_PREFIX) :]
        group_cfg = self.broker.subscription_group_manager.find_subscription_group_config(group)
        if group_cfg is None:
            raise RequestError(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, f"subscription group not exist, {group}")
        max_times = group_cfg.retry_max_times
        if request.version >= VERSION_HONOUR_MAX_RECONSUME and header.max_reconsume_times is not None:
            max_times = header.max_reconsume_times
        reconsume = header.reconsume_times or 0
        if reconsume >= max_times:
            dlq = self.broker.topic_config_manager.create_topic_in_send_message_back_method(
                DLQ_GROUP_TOPIC_PREFIX + group, 1, PERM_RW
            )
            props.pop(PROPERTY_DELAY_TIME_LEVEL, None)
            log.info("message for %s reached %d reconsume times, moved to %s", topic, reconsume, dlq.topic_name)
            return dlq, 0
        return tc, None

    # -- the send -----------------------------------------------------------------------------

    async def _send(
        self, ctx: ChannelContext, request: RemotingCommand, header: SendMessageRequestHeader
    ) -> RemotingCommand:
        topic = self._check_topic_name(header)
        if header.batch:
            return await self._send_batch(ctx, request, header, topic)
        broker = self.broker
        self._check_body_size(len(request.body))
        props = string_to_properties(header.properties)
        self._check_not_transaction(header, props)
        header = _retry_counts_from_properties(header, props)
        props_text, wait = self._stored_properties(props)  # size check before any change
        tc = self._get_or_create_topic(ctx, topic, header)
        tc, forced_queue = self._handle_retry_and_dlq(request, header, tc, props)
        if forced_queue is not None:  # moved to the DLQ: DELAY dropped
            props_text = properties_to_string(props)
        queue_id = forced_queue if forced_queue is not None else self._pick_queue(tc, header.queue_id)
        sys_flag = header.sys_flag
        if tc.topic_filter_type == "MULTI_TAG":
            sys_flag |= MULTI_TAGS_FLAG
        msg = MessageExtBrokerInner(
            topic=tc.topic_name,
            queue_id=queue_id,
            body=request.body,
            properties=props,
            flag=header.flag,
            sys_flag=sys_flag,
            born_timestamp=header.born_timestamp,
            born_host=ctx.remote_addr,
            reconsume_times=header.reconsume_times or 0,
            properties_string=props_text,
            wait_store_msg_ok=wait,
        )
        if broker.schedule_message_service is not None:
            msg = broker.schedule_message_service.transform(msg)
        result = await broker.store.put_message(msg)
        return self._put_response(request, result, queue_id)

    async def _send_batch(
        self, ctx: ChannelContext, request: RemotingCommand, header: SendMessageRequestHeader, topic: str
    ) -> RemotingCommand:
        broker = self.broker
        if topic.startswith(RETRY_GROUP_TOPIC_PREFIX):
            raise RequestError(ResponseCode.MESSAGE_ILLEGAL, "a batch cannot be sent to a retry topic")
        self._check_body_size(len(request.body))
        props = string_to_properties(header.properties)
        props.pop(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, None)  # the batch's own id: each message keeps its own
        self._check_not_transaction(header, props)
        batch_props_text, wait = self._stored_properties(props)
        batch_props_size = len(batch_props_text.encode("utf-8")) + 1  # appended after a separator
        try:
            entries = list(iter_batch_body(request.body))
        except RecordFormatError as exc:
            raise RequestError(ResponseCode.MESSAGE_ILLEGAL, f"the batch body is malformed: {exc}") from None
        for i, (_flag, body, props_text) in enumerate(entries):
            self._check_body_size(len(body))
            if _DELAY_KEY in props_text and string_to_properties(props_text).get(
                PROPERTY_DELAY_TIME_LEVEL, "0"
            ) not in ("", "0"):
                raise RequestError(ResponseCode.MESSAGE_ILLEGAL, "a batch message cannot carry a delay level")
            if len(props_text) * 4 + batch_props_size > MAX_PROPERTIES_SIZE:  # might not fit: count the UTF-8 bytes
                size = len(props_text.encode("utf-8")) + batch_props_size
                if size > MAX_PROPERTIES_SIZE:
                    raise RequestError(
                        ResponseCode.MESSAGE_ILLEGAL,
                        f"message {i} of the batch has {size} bytes of properties, more than {MAX_PROPERTIES_SIZE}",
                    )
        if not entries:
            raise RequestError(ResponseCode.MESSAGE_ILLEGAL, "the batch body holds no message")
        tc = self._get_or_create_topic(ctx, topic, header)
        queue_id = self._pick_queue(tc, header.queue_id)
        sys_flag = header.sys_flag | (MULTI_TAGS_FLAG if tc.topic_filter_type == "MULTI_TAG" else 0)
        batch = MessageExtBatch(
            topic=tc.topic_name,
            queue_id=queue_id,
            body=request.body,
            properties=props,
            sys_flag=sys_flag,
            born_timestamp=header.born_timestamp,
            born_host=ctx.remote_addr,
            reconsume_times=header.reconsume_times or 0,
            wait_store_msg_ok=wait,
            entries=entries,
        )
        result = await broker.store.put_messages(batch)
        return self._put_response(request, result, queue_id)

    def _put_response(self, request: RemotingCommand, result: PutMessageResult, queue_id: int) -> RemotingCommand:
        code, remark = _PUT_STATUS_CODES.get(result.status) or (ResponseCode.SYSTEM_ERROR, str(result.status))
        if result.status is PutMessageStatus.SERVICE_NOT_AVAILABLE and remark is not None:  # a template
            remark = remark.format(disk_util=self.broker.store.retention.disk_util())
        ext = self._response_ext()
        if result.stored:  # OK, or stored with a flush/slave status: the client gets the ids (RocketMQ's sendOK)
            self.broker.broker_stats.inc_put(max(result.msg_num, 1), result.wrote_bytes)
            ext["msgId"] = result.msg_id
            ext["queueId"] = str(queue_id)
            ext["queueOffset"] = str(result.queue_offset)
        else:
            self.broker.broker_stats.inc_put_failed()
            log.warning("store refused a message: %s", result.status)
        return request.response(code, remark, ext)


def _retry_counts_from_properties(header: SendMessageRequestHeader, props: dict[str, str]) -> SendMessageRequestHeader:
    """The header with RECONSUME_TIME / MAX_RECONSUME_TIMES properties taken where it lacks the counts.

    Java producers move them into header fields ``j``/``l``; some clients only set the properties.
    """
    try:
        reconsume, max_reconsume = header.reconsume_times, header.max_reconsume_times
        if reconsume is None:
            reconsume = int(props.get(PROPERTY_RECONSUME_TIME, "0"))
        if max_reconsume is None and PROPERTY_MAX_RECONSUME_TIMES in props:
            max_reconsume = int(props[PROPERTY_MAX_RECONSUME_TIMES])
        return dataclasses.replace(header, reconsume_times=reconsume, max_reconsume_times=max_reconsume)
    except ValueError:
        raise RequestError(
            ResponseCode.MESSAGE_ILLEGAL, "RECONSUME_TIME / MAX_RECONSUME_TIMES properties are not numbers"
        ) from None
