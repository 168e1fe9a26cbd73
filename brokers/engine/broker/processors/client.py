"""Client housekeeping: HEART_BEAT (34), UNREGISTER_CLIENT (35), GET_CONSUMER_LIST_BY_GROUP (38),
CHECK_CLIENT_CONFIG (46), CONSUMER_SEND_MSG_BACK (36), LOCK_BATCH_MQ (41), UNLOCK_BATCH_MQ (42).

CONSUMER_SEND_MSG_BACK (§2.3, §7.5): the consumed message is looked up by its commit log
offset and written again, to ``%RETRY%<group>`` with ``DELAY`` = the requested level (0 means
3 + reconsume times) and reconsume times + 1, or to ``%DLQ%<group>`` once the reconsume times
reached the maximum (or the level is negative). With DELAY set, the schedule service holds the
retry in SCHEDULE_TOPIC_XXXX until its level's delay has passed.
"""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Any

from brokers.engine.broker.client_manager import ClientChannelInfo
from brokers.engine.broker.heartbeat import HeartbeatData, HeartbeatLimits, InvalidHeartbeatError, SubscriptionData
from brokers.engine.broker.processors.base import (
    Processor,
    ProcessorRegistry,
    RequestError,
    checked_group,
    guarded,
)
from brokers.engine.broker.processors.property_filter import compiled_filter, is_tag_type
from brokers.engine.broker.processors.send import VERSION_HONOUR_MAX_RECONSUME
from brokers.engine.common import json_compat
from brokers.engine.common.constants import DLQ_GROUP_TOPIC_PREFIX, RETRY_GROUP_TOPIC_PREFIX
from brokers.engine.common.message import (
    PROPERTY_DELAY_TIME_LEVEL,
    PROPERTY_ORIGIN_MESSAGE_ID,
    PROPERTY_RETRY_TOPIC,
    PROPERTY_LAST_ERROR,
    PROPERTY_WAIT_STORE_MSG_OK,
    last_error_text,
    properties_to_string,
)
from brokers.engine.common.message_codec import RecordFormatError, decode_record
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.perm import PERM_RW, is_writeable
from brokers.engine.common.topic_validator import InvalidNameError, validate_topic
from brokers.engine.remoting.channel import ChannelContext
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.headers.brokers import GetConsumerListByGroupRequestHeader, UnregisterClientRequestHeader
from brokers.engine.remoting.headers.consume import ConsumerSendMsgBackRequestHeader
from brokers.engine.remoting.limits import limit_log
from brokers.engine.store.message_inner import MessageExtBrokerInner


log = logging.getLogger("brokers.engine.broker")

MAX_DELAY_LEVEL = 18
REGISTER_SLICE = 64  # groups a heartbeat registers between two turns of the event loop
HEARTBEAT_INLINE_BYTES = 16 * 1024  # a heartbeat body past this is read on a worker thread


def _parse_json_body(request: RemotingCommand, what: str) -> Any:
    if not request.body:
        raise RequestError(ResponseCode.SYSTEM_ERROR, f"the {what} body is empty")
    try:
        return json_compat.loads(request.body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise RequestError(ResponseCode.SYSTEM_ERROR, f"the {what} body is not JSON: {exc}") from None


class ClientManageProcessor(Processor):
    def register(self, server: ProcessorRegistry) -> None:
        server.register_processor(RequestCode.HEART_BEAT, self.heart_beat)
        server.limit_body(RequestCode.HEART_BEAT, self.broker.config.max_heartbeat_bytes, "max_heartbeat_bytes")
        server.register_processor(RequestCode.UNREGISTER_CLIENT, self.unregister_client)
        server.register_processor(RequestCode.GET_CONSUMER_LIST_BY_GROUP, self.get_consumer_list_by_group)
        server.register_processor(RequestCode.CHECK_CLIENT_CONFIG, self.check_client_config)
        server.register_processor(RequestCode.CONSUMER_SEND_MSG_BACK, self.consumer_send_msg_back)
        server.register_processor(RequestCode.LOCK_BATCH_MQ, self.lock_batch_mq)
        server.register_processor(RequestCode.UNLOCK_BATCH_MQ, self.unlock_batch_mq)

    # -- heartbeat ----------------------------------------------------------------------------

    @guarded
    async def heart_beat(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        config = self.broker.config
        if len(request.body) > config.max_heartbeat_bytes:
            limit_log.refused(
                "heartbeat-bytes",
                ctx.remote_addr,
                "heartbeat body of %d bytes (cap %d); refused",
                len(request.body),
                config.max_heartbeat_bytes,
            )
            raise RequestError(
                ResponseCode.SYSTEM_ERROR,
                f"the heartbeat body of {len(request.body)} bytes exceeds the limit "
                f"of {config.max_heartbeat_bytes} (max_heartbeat_bytes)",
            )

        def read() -> HeartbeatData:
            return HeartbeatData.from_json(
                _parse_json_body(request, "heartbeat"),
                config.subscription_limits,
                config.max_heartbeat_tags,
                HeartbeatLimits(config.max_heartbeat_groups, config.max_heartbeat_subscriptions),
            )

        try:
            # a large heartbeat is read on a worker thread: the event loop takes the GIL back every few
            # milliseconds instead of waiting out the whole parse (10 ms per 1,000 subscriptions)
            data = await asyncio.to_thread(read) if len(request.body) > HEARTBEAT_INLINE_BYTES else read()
        except InvalidHeartbeatError as exc:
            limit_log.refused("heartbeat", ctx.remote_addr, "heartbeat refused: %s", exc)
            raise RequestError(ResponseCode.SYSTEM_ERROR, f"the heartbeat body is malformed: {exc}") from None
        broker = self.broker
        for consumer in data.consumers:
            checked_group(consumer.group_name)
        for group in data.producer_groups:
            checked_group(group)
        self._check_new_groups(data, ctx.remote_addr)
        now = broker.clock.monotonic()
        for i, consumer in enumerate(data.consumers):
            if i and not i % REGISTER_SLICE:
                await asyncio.sleep(0)  # a large heartbeat registers in slices: other connections run between them
            group_cfg = broker.subscription_group_manager.find_subscription_group_config(consumer.group_name)
            notify = broker.config.notify_consumer_ids_changed_enable
            if group_cfg is not None:
                notify = notify and group_cfg.notify_consumer_ids_changed_enable
                if group_cfg.retry_queue_nums > 0:
                    self._create_retry_topic(consumer.group_name, group_cfg.retry_queue_nums)
            subs = [s for s in consumer.subscriptions if _topic_ok(s)]
            info = ClientChannelInfo(ctx, data.client_id, request.language, request.version, now)
            broker.client_manager.register_consumer(
                consumer.group_name,
                info,
                consumer.consume_type,
                consumer.message_model,
                consumer.consume_from_where,
                subs,
                notify=notify,
            )
        for i, group in enumerate(data.producer_groups):
            if i and not i % REGISTER_SLICE:
                await asyncio.sleep(0)
            broker.client_manager.register_producer(
                group, ClientChannelInfo(ctx, data.client_id, request.language, request.version, now)
            )
        ctx.attributes["clientId"] = data.client_id
        return request.response(ResponseCode.SUCCESS)

    def _check_new_groups(self, data: HeartbeatData, peer: str) -> None:
        """Refuse a heartbeat that would auto-create more groups than one heartbeat may."""
        sgm, cap = self.broker.subscription_group_manager, self.broker.config.max_auto_create_groups_per_heartbeat
        if not sgm.auto_create or len(data.consumers) <= cap:
            return
        new = {c.group_name for c in data.consumers} - sgm.subscription_group_table.keys()
        if len(new) > cap:
            limit_log.refused(
                "groups-per-heartbeat",
                peer,
                "heartbeat of %s would auto-create %d groups (cap %d); refused",
                data.client_id,
                len(new),
                cap,
            )
            raise RequestError(
                ResponseCode.SYSTEM_ERROR,
                f"the heartbeat would auto-create {len(new)} subscription groups, more than the limit of {cap}",
            )

    def _create_retry_topic(self, group: str, queue_nums: int) -> None:
        topic = RETRY_GROUP_TOPIC_PREFIX + group
        try:
            validate_topic(topic)
        except InvalidNameError:
            log.warning("group %s is too long for a retry topic; retries are not possible", group)
            return
        self.broker.topic_config_manager.create_topic_in_send_message_back_method(topic, queue_nums, PERM_RW)

    @guarded
    async def unregister_client(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand | None:
        header = UnregisterClientRequestHeader.decode(request)
        client_id, producer_group, consumer_group = header.client_id, header.producer_group, header.consumer_group
        broker = self.broker
        if producer_group:
            broker.client_manager.unregister_producer(producer_group, ctx, client_id)
        if consumer_group:
            group_cfg = broker.subscription_group_manager.subscription_group_table.get(consumer_group)
            notify = broker.config.notify_consumer_ids_changed_enable and (
                group_cfg is None or group_cfg.notify_consumer_ids_changed_enable
            )
            broker.client_manager.unregister_consumer(consumer_group, ctx, client_id, notify=notify)
        return None if request.is_oneway else request.response(ResponseCode.SUCCESS)

    @guarded
    async def get_consumer_list_by_group(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        group = GetConsumerListByGroupRequestHeader.decode(request).consumer_group
        info = self.broker.client_manager.get_consumer_group_info(group)
        ids = info.all_client_ids() if info else []
        if not ids:
            return request.response(ResponseCode.SYSTEM_ERROR, f"no consumer for this group, {group}")
        return request.response(
            ResponseCode.SUCCESS, None, None, json_compat.dumps({"consumerIdList": ids}).encode("utf-8")
        )

    @guarded
    async def check_client_config(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        """What a Java consumer asks before it starts with a SQL92 subscription: can this broker filter
        by it (``enable_property_filter``), and does the expression compile (``property_filter.py``)."""
        body = _parse_json_body(request, "check client config")
        sub = body.get("subscriptionData") if isinstance(body, dict) else None
        if not isinstance(sub, dict) or is_tag_type(str(sub.get("expressionType") or "")):
            return request.response(ResponseCode.SUCCESS)
        expression = sub.get("subString")
        compiled_filter(
            str(sub["expressionType"]),
            expression if isinstance(expression, str) else "",
            enabled=self.broker.config.enable_property_filter,
        )
        return request.response(ResponseCode.SUCCESS)

    # -- sendback -----------------------------------------------------------------------------

    @guarded
    async def consumer_send_msg_back(self, ctx: ChannelContext | None, request: RemotingCommand) -> RemotingCommand:
        broker = self.broker
        header = ConsumerSendMsgBackRequestHeader.decode(request)
        offset, group, delay_level = header.offset, checked_group(header.group), header.delay_level
        origin_msg_id, max_reconsume_header = header.origin_msg_id, header.max_reconsume_times
        group_cfg = broker.subscription_group_manager.find_subscription_group_config(group)
        if group_cfg is None:
            raise RequestError(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, f"subscription group not exist, {group}")
        if not is_writeable(broker.config.broker_permission):
            raise RequestError(
                ResponseCode.NO_PERMISSION, f"the broker[{broker.config.broker_name}] sending message is forbidden"
            )
        if group_cfg.retry_queue_nums <= 0:
            return request.response(ResponseCode.SUCCESS)  # retries disabled for the group: drop
        retry_topic = RETRY_GROUP_TOPIC_PREFIX + group
        try:
            validate_topic(retry_topic)
        except InvalidNameError as exc:
            raise RequestError(ResponseCode.SYSTEM_ERROR, f"group {group} cannot have a retry topic: {exc}") from None
        tc = broker.topic_config_manager.create_topic_in_send_message_back_method(
            retry_topic, group_cfg.retry_queue_nums, PERM_RW
        )
        if not is_writeable(tc.perm):
            raise RequestError(ResponseCode.NO_PERMISSION, f"the topic[{retry_topic}] sending message is forbidden")
        if offset < 0:
            raise RequestError(ResponseCode.SYSTEM_ERROR, f"look message by offset failed, {offset}")
        record = broker.store.look_message_by_offset(offset)
        if record is None:
            raise RequestError(ResponseCode.SYSTEM_ERROR, f"look message by offset failed, {offset}")
        try:
            msg = decode_record(record)
        except RecordFormatError as exc:
            raise RequestError(ResponseCode.SYSTEM_ERROR, f"look message by offset failed, {offset}: {exc}") from None
        props = dict(msg.properties)
        props.setdefault(PROPERTY_RETRY_TOPIC, msg.topic)
        props.pop(PROPERTY_WAIT_STORE_MSG_OK, None)
        max_times = group_cfg.retry_max_times
        if request.version >= VERSION_HONOUR_MAX_RECONSUME and max_reconsume_header is not None:
            max_times = max_reconsume_header
        topic, queue_id = retry_topic, random.randrange(max(tc.write_queue_nums, 1))
        if msg.reconsume_times >= max_times or delay_level < 0:
            topic, queue_id = DLQ_GROUP_TOPIC_PREFIX + group, 0
            dlq = broker.topic_config_manager.create_topic_in_send_message_back_method(topic, 1, PERM_RW)
            if not is_writeable(dlq.perm):
                raise RequestError(ResponseCode.NO_PERMISSION, f"the topic[{topic}] sending message is forbidden")
            props.pop(PROPERTY_DELAY_TIME_LEVEL, None)
        else:
            level = delay_level if delay_level > 0 else 3 + msg.reconsume_times
            props[PROPERTY_DELAY_TIME_LEVEL] = str(min(level, MAX_DELAY_LEVEL))
        props[PROPERTY_ORIGIN_MESSAGE_ID] = props.get(PROPERTY_ORIGIN_MESSAGE_ID) or origin_msg_id or msg.msg_id
        last_error = last_error_text(header.last_error or "")  # Gantry's consumers say why (a field RocketMQ's lack)
        if last_error:
            props[PROPERTY_LAST_ERROR] = last_error
        text = properties_to_string(props)
        inner = MessageExtBrokerInner(
            topic=topic,
            queue_id=queue_id,
            body=msg.body,
            properties=props,
            flag=msg.flag,
            sys_flag=msg.sys_flag & ~0x30,  # host kinds are re-derived by the store
            born_timestamp=msg.born_timestamp,
            born_host=msg.born_host,
            reconsume_times=msg.reconsume_times + 1,
            properties_string=text,
        )
        if broker.schedule_message_service is not None:
            inner = broker.schedule_message_service.transform(inner)
        result = await broker.store.put_message(inner)
        if result.stored:  # stored, whatever the flush or a SYNC_MASTER's slave said: no second copy
            broker.broker_stats.inc_put(1, result.wrote_bytes)
            return request.response(ResponseCode.SUCCESS)
        raise RequestError(ResponseCode.SYSTEM_ERROR, f"sending the message back failed: {result.status.value}")

    # -- orderly locks ------------------------------------------------------------------------

    def _lock_body(self, request: RemotingCommand) -> tuple[str, str, list[MessageQueue]]:
        body = _parse_json_body(request, "lock")
        if not isinstance(body, dict):
            raise RequestError(ResponseCode.SYSTEM_ERROR, "the lock body is not a JSON object")
        group, client_id = body.get("consumerGroup"), body.get("clientId")
        if not isinstance(group, str) or not isinstance(client_id, str) or not client_id:
            raise RequestError(ResponseCode.SYSTEM_ERROR, "the lock body needs consumerGroup and clientId")
        checked_group(group)
        queues = body.get("mqSet") or []
        cap = self.broker.config.max_lock_batch_queues
        if isinstance(queues, list) and len(queues) > cap:
            raise RequestError(
                ResponseCode.SYSTEM_ERROR,
                f"the lock body names {len(queues)} queues, more than the limit of {cap} (max_lock_batch_queues)",
            )
        try:
            mqs = [MessageQueue.from_json(m) for m in queues]
        except (KeyError, TypeError, ValueError) as exc:
            raise RequestError(ResponseCode.SYSTEM_ERROR, f"the lock body has a malformed mqSet entry: {exc}") from None
        return group, client_id, mqs

    @guarded
    async def lock_batch_mq(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        group, client_id, mqs = self._lock_body(request)
        held = self.broker.rebalance_lock_manager.try_lock_batch(group, mqs, client_id)
        body = json_compat.dumps({"lockOKMQSet": [mq.to_json() for mq in sorted(held)]}).encode("utf-8")
        return request.response(ResponseCode.SUCCESS, None, None, body)

    @guarded
    async def unlock_batch_mq(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand | None:
        group, client_id, mqs = self._lock_body(request)
        self.broker.rebalance_lock_manager.unlock_batch(group, mqs, client_id)
        return None if request.is_oneway else request.response(ResponseCode.SUCCESS)


def _topic_ok(sub: SubscriptionData) -> bool:
    try:
        validate_topic(sub.topic)
        return True
    except InvalidNameError:
        log.warning("ignoring a subscription to an illegal topic name %r", sub.topic)
        return False
