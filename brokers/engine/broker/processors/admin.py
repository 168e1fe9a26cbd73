"""Admin requests served by the broker (protocol reference §2.6): topics, subscription groups,
offsets, statistics, connections, runtime info, and calls forwarded to clients.

Writes check their whole input before changing anything: topic names follow the naming rule
and may not be system topics, queue numbers are within 0..MAX_QUEUE_NUMS (common/queue_nums.py), perm within 0..7, the
``attributes`` modification follows RocketMQ 5's rules (``common/topic_attributes.py``).
UPDATE_AND_CREATE_TOPIC answers only after the new config is on disk and every name server was
told (each independently). Topic and subscription-group changes answer SUCCESS only once every slave
subscribed to this master's config pushes has them on disk, else SLAVE_NOT_AVAILABLE naming the
slaves that did not confirm (``config_push.py``). Bodies keyed by MessageQueue use fastjson's inline-object-key form
(§4.1), because their readers are Java admin tools.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from brokers.engine.broker.broker_context import BrokerContext
from brokers.engine.broker.client_manager import ClientChannelInfo, ConsumerGroupInfo
from brokers.engine.broker.processors.base import (
    Processor,
    ProcessorRegistry,
    RequestError,
    checked_group,
    checked_new_topic,
    checked_topic,
    guarded,
)
from brokers.engine.common.subscription_group_config import InvalidSubscriptionGroupError, SubscriptionGroupConfig
from brokers.engine.common import json_compat
from brokers.engine.common.perm import PERM_MAX, PERM_MIN, is_valid_perm
from brokers.engine.common.queue_nums import MAX_QUEUE_NUMS, MIN_QUEUE_NUMS, is_valid_queue_nums
from brokers.engine.common.message_codec import parse_offset_msg_id
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.topic_attributes import (
    MESSAGE_TYPE,
    InvalidAttributeError,
    alter_attributes,
    parse_attribute_modification,
)
from brokers.engine.common.topic_config import InvalidTopicConfigError, TopicConfig
from brokers.engine.common.topic_message_type import MIXED
from brokers.engine.common.topic_validator import InvalidNameError
from brokers.engine.remoting.channel import ChannelContext
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.errors import RemotingError, RemotingTimeoutError
from brokers.engine.remoting.headers.brokers import (
    GetProducerConnectionListRequestHeader,
    GetSubscriptionGroupConfigRequestHeader,
    GetTopicConfigRequestHeader,
    QueryTopicConsumeByWhoRequestHeader,
)
from brokers.engine.remoting.headers.groups import (
    DeleteSubscriptionGroupRequestHeader,
    GetConsumerConnectionListRequestHeader,
    GetConsumerRunningInfoRequestHeader,
    GetConsumeStatsRequestHeader,
)
from brokers.engine.remoting.headers.offsets import ResetOffsetRequestHeader
from brokers.engine.remoting.headers.pushes import (
    ConsumeMessageDirectlyResultRequestHeader,
    ResetConsumerClientOffsetRequestHeader,
)
from brokers.engine.remoting.headers.topics import (
    CreateTopicRequestHeader,
    DeleteTopicRequestHeader,
    GetTopicStatsInfoRequestHeader,
)

log = logging.getLogger("brokers.engine.broker")

VERSION_CONSUMER_RUNNING_INFO = 62  # MQVersion V3_1_8_SNAPSHOT: clients older cannot answer 307/309


def _json_body(value: object) -> bytes:
    return json_compat.dumps(value).encode("utf-8")


def consume_stats_tables(
    broker: BrokerContext, group: str, topics: Iterable[str], *, write_queues: bool = False, order_only: bool = False
) -> list[tuple[str, dict[MessageQueue, dict[str, Any]]]]:
    """Per topic of ``topics``, the group's OffsetWrapper of each queue (brokerOffset,
    consumerOffset, lastTimestamp), as RocketMQ's ConsumeStats offsetTable holds them.

    Topics without a config are left out, and so are topics an online group no longer subscribes.
    GET_CONSUME_STATS counts the read queues, GET_BROKER_CONSUME_STATS the write queues
    (``write_queues``) and, with ``order_only`` (its isOrder), keeps ordered topics only.
    """
    group_info = broker.client_manager.get_consumer_group_info(group)
    broker_name = broker.config.broker_name
    out: list[tuple[str, dict[MessageQueue, dict[str, Any]]]] = []
    for topic in topics:
        tc = broker.topic_config_manager.select_topic_config(topic)
        if tc is None or (order_only and not tc.order):
            continue
        if group_info is not None and group_info.subscription_table and topic not in group_info.subscription_table:
            continue  # the group is online and no longer subscribes the topic
        table: dict[MessageQueue, dict[str, Any]] = {}
        for queue_id in range(tc.write_queue_nums if write_queues else tc.read_queue_nums):
            broker_offset = max(broker.store.get_max_offset_in_queue(topic, queue_id), 0)
            consumer_offset = max(broker.consumer_offset_manager.query_offset(group, topic, queue_id), 0)
            last = 0
            if consumer_offset > 0:
                last = max(broker.store.get_message_store_timestamp(topic, queue_id, consumer_offset - 1), 0)
            table[MessageQueue(topic, broker_name, queue_id)] = {
                "brokerOffset": broker_offset,
                "consumerOffset": consumer_offset,
                "lastTimestamp": last,
            }
        out.append((topic, table))
    return out


def consume_stats_json(table: dict[MessageQueue, dict[str, Any]], consume_tps: float = 0.0) -> dict[str, Any]:
    """RocketMQ's ConsumeStats: the offset table keyed by MessageQueue (inline keys when written)."""
    return {"consumeTps": consume_tps, "offsetTable": table}


def consumer_connection_json(info: ConsumerGroupInfo) -> dict[str, Any]:
    """RocketMQ's ConsumerConnection body of an online group (GET_CONSUMER_CONNECTION_LIST)."""
    return {
        "connectionSet": [c.to_connection_json() for c in info.all_channels()],
        "consumeFromWhere": info.consume_from_where,
        "consumeType": info.consume_type,
        "messageModel": info.message_model,
        "subscriptionTable": {t: s.to_json() for t, s in info.subscription_table.items()},
    }


class AdminBrokerProcessor(Processor):
    def register(self, server: ProcessorRegistry) -> None:
        handlers = {
            RequestCode.UPDATE_AND_CREATE_TOPIC: self.update_and_create_topic,
            RequestCode.DELETE_TOPIC_IN_BROKER: self.delete_topic,
            RequestCode.GET_ALL_TOPIC_CONFIG: self.get_all_topic_config,
            RequestCode.GET_TOPIC_CONFIG: self.get_topic_config,
            RequestCode.GET_SUBSCRIPTIONGROUP_CONFIG: self.get_subscription_group,
            RequestCode.GET_TOPIC_STATS_INFO: self.get_topic_stats_info,
            RequestCode.GET_CONSUME_STATS: self.get_consume_stats,
            RequestCode.GET_CONSUMER_CONNECTION_LIST: self.get_consumer_connection_list,
            RequestCode.GET_PRODUCER_CONNECTION_LIST: self.get_producer_connection_list,
            RequestCode.GET_ALL_PRODUCER_INFO: self.get_all_producer_info,
            RequestCode.GET_BROKER_RUNTIME_INFO: self.get_broker_runtime_info,
            RequestCode.GET_ALL_CONSUMER_OFFSET: self.get_all_consumer_offset,
            RequestCode.GET_ALL_DELAY_OFFSET: self.get_all_delay_offset,
            RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG: self.get_all_subscription_group,
            RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: self.update_and_create_subscription_group,
            RequestCode.DELETE_SUBSCRIPTIONGROUP: self.delete_subscription_group,
            RequestCode.GET_BROKER_CONFIG: self.get_broker_config,
            RequestCode.QUERY_TOPIC_CONSUME_BY_WHO: self.query_topic_consume_by_who,
            RequestCode.INVOKE_BROKER_TO_RESET_OFFSET: self.reset_offset,
            RequestCode.GET_CONSUMER_RUNNING_INFO: self.get_consumer_running_info,
            RequestCode.CONSUME_MESSAGE_DIRECTLY: self.consume_message_directly,
        }
        for code, handler in handlers.items():
            server.register_processor(code, handler)

    # -- topics -------------------------------------------------------------------------------

    def _user_topic(self, topic: str) -> str:
        return checked_new_topic(topic, self.broker.topic_config_manager.broker_system_topics)

    @guarded
    async def update_and_create_topic(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        header = CreateTopicRequestHeader.decode(request)
        topic = self._user_topic(header.topic)
        read, write, perm = header.read_queue_nums, header.write_queue_nums, header.perm
        filter_type, sys_flag = header.topic_filter_type, header.topic_sys_flag
        for name, value in (("readQueueNums", read), ("writeQueueNums", write)):
            if not is_valid_queue_nums(value):
                raise RequestError(
                    ResponseCode.SYSTEM_ERROR,
                    f"{name} {value} is out of range, it must be within {MIN_QUEUE_NUMS}..{MAX_QUEUE_NUMS}",
                )
        if not is_valid_perm(perm):
            raise RequestError(
                ResponseCode.SYSTEM_ERROR, f"perm {perm} is out of range, it must be within {PERM_MIN}..{PERM_MAX}"
            )
        tcm = self.broker.topic_config_manager
        old = tcm.select_topic_config(topic)
        attributes = self._altered_attributes(header.attributes, old)
        try:
            tc = TopicConfig(
                topic, read, write, perm, filter_type, sys_flag, old.order if old else False, attributes
            ).validate()
        except InvalidTopicConfigError as exc:
            raise RequestError(ResponseCode.SYSTEM_ERROR, str(exc)) from None
        tcm.update_topic_config(tc)
        pushes = self.broker.config_push.take_started()
        await self.broker.register_broker_all()
        return await self.broker.config_push.settled_response(
            request, f"topic {topic} {'updated' if old else 'created'}", pushes
        )

    def _altered_attributes(self, text: str | None, old: TopicConfig | None) -> dict[str, str]:
        """The topic's attributes after the request's ``attributes`` modification (topic_attributes.py);
        MIXED only with ``enable_mixed_message_type`` (INVALID_PARAMETER, as RocketMQ answers)."""
        try:
            modification = parse_attribute_modification(text)
            if modification.get("+" + MESSAGE_TYPE) == MIXED and not self.broker.config.enable_mixed_message_type:
                raise RequestError(
                    ResponseCode.INVALID_PARAMETER,
                    f"attribute {MESSAGE_TYPE}: MIXED message type is not supported (enableMixedMessageType is false)",
                )
            return alter_attributes(
                create=old is None, current=old.attributes if old else {}, modification=modification
            )
        except InvalidAttributeError as exc:
            raise RequestError(ResponseCode.SYSTEM_ERROR, str(exc)) from None

    @guarded
    async def delete_topic(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        topic = self._user_topic(DeleteTopicRequestHeader.decode(request).topic)
        broker = self.broker
        broker.topic_config_manager.delete_topic_config(topic)
        pushes = broker.config_push.take_started()
        broker.consumer_offset_manager.remove_topic(topic)
        broker.store.delete_topics({topic})
        broker.request_register()
        return await broker.config_push.settled_response(request, f"topic {topic} deleted", pushes)

    @guarded
    async def get_all_topic_config(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        return request.response(
            ResponseCode.SUCCESS, None, None, _json_body(self.broker.topic_config_manager.build_serialize_wrapper())
        )

    @guarded
    async def get_topic_config(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        """GET_TOPIC_CONFIG (351, RocketMQ 5.x): the topic's config as TopicConfigAndQueueMapping (no
        static-topic mapping: Gantry has none); TOPIC_NOT_EXIST when this broker does not have it."""
        topic = checked_topic(GetTopicConfigRequestHeader.decode(request).topic)
        tc = self.broker.topic_config_manager.select_topic_config(topic)
        if tc is None:
            return request.response(ResponseCode.TOPIC_NOT_EXIST, f"No topic in this broker. topic: {topic}")
        return request.response(ResponseCode.SUCCESS, None, None, _json_body(tc.to_json()))

    @guarded
    async def get_topic_stats_info(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        topic = checked_topic(GetTopicStatsInfoRequestHeader.decode(request).topic)
        tc = self.broker.topic_config_manager.select_topic_config(topic)
        if tc is None:
            return request.response(ResponseCode.TOPIC_NOT_EXIST, f"topic[{topic}] not exist")
        store, broker_name = self.broker.store, self.broker.config.broker_name
        table: dict[MessageQueue, dict[str, Any]] = {}
        for queue_id in range(tc.write_queue_nums):
            min_offset = max(store.get_min_offset_in_queue(topic, queue_id), 0)
            max_offset = max(store.get_max_offset_in_queue(topic, queue_id), 0)
            last = store.get_message_store_timestamp(topic, queue_id, max_offset - 1) if max_offset > 0 else 0
            table[MessageQueue(topic, broker_name, queue_id)] = {
                "lastUpdateTimestamp": max(last, 0),
                "maxOffset": max_offset,
                "minOffset": min_offset,
            }
        return request.response(ResponseCode.SUCCESS, None, None, _json_body({"offsetTable": table}))

    # -- consumers ----------------------------------------------------------------------------

    @guarded
    async def get_consume_stats(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        broker = self.broker
        header = GetConsumeStatsRequestHeader.decode(request)
        group = checked_group(header.consumer_group)
        if header.topic is not None:
            topic = checked_topic(header.topic)
            if broker.topic_config_manager.select_topic_config(topic) is None:
                return request.response(ResponseCode.TOPIC_NOT_EXIST, f"topic[{topic}] not exist")
            topics = [topic]
        else:
            topics = sorted(broker.consumer_offset_manager.which_topic_by_consumer(group))
        table: dict[MessageQueue, dict[str, Any]] = {}
        tps = 0.0
        for topic, topic_table in consume_stats_tables(broker, group, topics):
            table.update(topic_table)
            tps += broker.broker_stats.group_get.tps(group, topic)
        return request.response(ResponseCode.SUCCESS, None, None, _json_body(consume_stats_json(table, tps)))

    @guarded
    async def get_consumer_connection_list(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        group = GetConsumerConnectionListRequestHeader.decode(request).consumer_group
        info = self.broker.client_manager.get_consumer_group_info(group)
        if info is None or not info.channel_info_table:
            return request.response(ResponseCode.CONSUMER_NOT_ONLINE, f"the consumer group[{group}] not online")
        return request.response(ResponseCode.SUCCESS, None, None, _json_body(consumer_connection_json(info)))

    @guarded
    async def get_producer_connection_list(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        group = GetProducerConnectionListRequestHeader.decode(request).producer_group
        connections = self.broker.client_manager.producer_connections(group)
        if not connections:
            return request.response(ResponseCode.SYSTEM_ERROR, f"the producer group[{group}] not exist")
        return request.response(
            ResponseCode.SUCCESS,
            None,
            None,
            _json_body({"connectionSet": [c.to_connection_json() for c in connections]}),
        )

    @guarded
    async def get_all_producer_info(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        """GET_ALL_PRODUCER_INFO (328, RocketMQ 5's ProducerTableInfo): every producer group and its clients."""
        manager = self.broker.client_manager
        now_ms, now = manager.clock.now_ms(), manager.clock.monotonic()
        data = {
            group: [
                {
                    "clientId": i.client_id,
                    "remoteIP": i.client_addr,
                    "language": i.language,
                    "version": i.version,
                    "lastUpdateTimestamp": now_ms - int((now - i.last_update) * 1000),
                }
                for i in members.values()
            ]
            for group, members in sorted(manager.producer_table.items())
        }
        return request.response(ResponseCode.SUCCESS, None, None, _json_body({"data": data}))

    @guarded
    async def query_topic_consume_by_who(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        topic = checked_topic(QueryTopicConsumeByWhoRequestHeader.decode(request).topic)
        groups = self.broker.client_manager.query_topic_consume_by_who(topic)
        groups |= self.broker.consumer_offset_manager.which_group_by_topic(topic)
        return request.response(ResponseCode.SUCCESS, None, None, _json_body({"groupList": sorted(groups)}))

    @guarded
    async def get_all_consumer_offset(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        return request.response(
            ResponseCode.SUCCESS, None, None, _json_body(self.broker.consumer_offset_manager.encode())
        )

    @guarded
    async def get_all_delay_offset(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        service = self.broker.schedule_message_service
        table = service.encode() if service is not None else {"offsetTable": {}}
        return request.response(ResponseCode.SUCCESS, None, None, _json_body(table))

    @guarded
    async def reset_offset(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        """INVOKE_BROKER_TO_RESET_OFFSET (222): compute per-queue offsets and push them to the group.

        Every write queue to ``timestamp`` (-1: each queue's max offset), or, with RocketMQ 5's
        ``queueId`` (default -1: all), that one queue, to ``offset`` when given (within the
        queue's min..max offset), else by the timestamp.
        """
        broker = self.broker
        header = ResetOffsetRequestHeader.decode(request)
        topic, group = checked_topic(header.topic), checked_group(header.group)
        timestamp, is_force, one_queue, offset = header.timestamp, header.is_force, header.queue_id, header.offset
        tc = broker.topic_config_manager.select_topic_config(topic)
        if tc is None:
            return request.response(ResponseCode.SYSTEM_ERROR, f"[reset-offset] topic not exist: {topic}")
        if one_queue >= tc.write_queue_nums:
            return request.response(
                ResponseCode.SYSTEM_ERROR,
                f"[reset-offset] {topic} has {tc.write_queue_nums} write queues, no queue {one_queue}",
            )
        store = broker.store
        if (
            one_queue >= 0
            and offset is not None
            and offset >= 0
            and not (
                store.get_min_offset_in_queue(topic, one_queue)
                <= offset
                <= store.get_max_offset_in_queue(topic, one_queue)
            )
        ):
            return request.response(
                ResponseCode.SYSTEM_ERROR, f"[reset-offset] offset {offset} is outside {topic}:{one_queue}'s offsets"
            )
        table: dict[MessageQueue, int] = {}
        for queue_id in range(tc.write_queue_nums) if one_queue < 0 else (one_queue,):
            committed = broker.consumer_offset_manager.query_offset(group, topic, queue_id)
            if committed < 0:
                return request.response(
                    ResponseCode.SYSTEM_ERROR,
                    f"the consumer group[{group}] has no committed offset for {topic}:{queue_id}",
                )
            if one_queue >= 0 and offset is not None and offset >= 0:
                target = offset
            elif timestamp == -1:
                target = store.get_max_offset_in_queue(topic, queue_id)
            else:
                target = store.get_offset_in_queue_by_time(topic, queue_id, timestamp)
            target = max(target, 0)
            table[MessageQueue(topic, broker.config.broker_name, queue_id)] = (
                target if is_force or target < committed else committed
            )
        info = broker.client_manager.get_consumer_group_info(group)
        if info is None or not info.channel_info_table:
            return request.response(ResponseCode.CONSUMER_NOT_ONLINE, f"the consumer group[{group}] not online")
        body = _json_body({"offsetTable": table})
        push_ext = ResetConsumerClientOffsetRequestHeader(
            topic=topic, group=group, timestamp=timestamp, is_force=is_force
        ).encode()
        for member in info.all_channels():
            push_body = body
            if member.language == "CPP":
                push_body = _json_body({"offsetTable": [dict(mq.to_json(), offset=o) for mq, o in table.items()]})
            push = RemotingCommand.request(RequestCode.RESET_CONSUMER_CLIENT_OFFSET, push_ext, push_body, oneway=True)
            try:
                await member.ctx.invoke_oneway(push)
            except RemotingError as exc:
                log.info("reset-offset push to %s failed: %s", member.client_id, exc)
        return request.response(ResponseCode.SUCCESS, None, None, body)

    # -- subscription groups ------------------------------------------------------------------

    @guarded
    async def get_all_subscription_group(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        return request.response(
            ResponseCode.SUCCESS, None, None, _json_body(self.broker.subscription_group_manager.encode())
        )

    @guarded
    async def get_subscription_group(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        """GET_SUBSCRIPTIONGROUP_CONFIG (352, RocketMQ 5.x): one group's config; SUBSCRIPTION_GROUP_NOT_EXIST
        when this broker does not have it (the cluster-mode proxy reads fifo and retries from it). A read:
        unlike a heartbeat or a pull, it never auto-creates the group."""
        group = checked_group(GetSubscriptionGroupConfigRequestHeader.decode(request).group)
        cfg = self.broker.subscription_group_manager.subscription_group_table.get(group)
        if cfg is None:
            return request.response(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, "No group in this broker")
        return request.response(ResponseCode.SUCCESS, None, None, _json_body(cfg.to_json()))

    @guarded
    async def update_and_create_subscription_group(
        self, ctx: ChannelContext, request: RemotingCommand
    ) -> RemotingCommand:
        if not request.body:
            raise RequestError(ResponseCode.SYSTEM_ERROR, "the subscription group config body is empty")
        try:
            cfg = SubscriptionGroupConfig.from_json(json_compat.loads(request.body)).validate()
        except (ValueError, UnicodeDecodeError, InvalidNameError, InvalidSubscriptionGroupError) as exc:
            raise RequestError(ResponseCode.SYSTEM_ERROR, f"the subscription group config is illegal: {exc}") from None
        self.broker.subscription_group_manager.update_subscription_group_config(cfg)
        pushes = self.broker.config_push.take_started()
        return await self.broker.config_push.settled_response(
            request, f"subscription group {cfg.group_name} saved", pushes
        )

    @guarded
    async def delete_subscription_group(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        header = DeleteSubscriptionGroupRequestHeader.decode(request)
        group = checked_group(header.group_name)
        self.broker.subscription_group_manager.delete_subscription_group_config(group)
        pushes = self.broker.config_push.take_started()
        if header.clean_offset:
            self.broker.consumer_offset_manager.remove_group(group)
        return await self.broker.config_push.settled_response(request, f"subscription group {group} deleted", pushes)

    # -- broker -------------------------------------------------------------------------------

    @guarded
    async def get_broker_runtime_info(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        return request.response(ResponseCode.SUCCESS, None, None, _json_body({"table": self.broker.runtime_info()}))

    @guarded
    async def get_broker_config(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        lines = [f"{k}={v}" for k, v in sorted(self.broker.config_properties().items())]
        version = json_compat.dumps(self.broker.topic_config_manager.data_version.to_json())
        return request.response(
            ResponseCode.SUCCESS, None, {"version": version}, ("\n".join(lines) + "\n").encode("utf-8")
        )

    # -- forwarded to a client ----------------------------------------------------------------

    def _client(self, group: str, client_id: str) -> ClientChannelInfo:
        info = self.broker.client_manager.get_consumer_group_info(group)
        member = info.find_channel(client_id) if info else None
        if member is None:
            raise RequestError(ResponseCode.SYSTEM_ERROR, f"The Consumer <{client_id}> <{group}> not online")
        if member.version < VERSION_CONSUMER_RUNNING_INFO:
            raise RequestError(
                ResponseCode.SYSTEM_ERROR,
                f"The Consumer <{client_id}> version <{member.version}> too low to finish, please upgrade it",
            )
        return member

    async def _forward(
        self, request: RemotingCommand, member: ClientChannelInfo, forward: RemotingCommand
    ) -> RemotingCommand:
        try:
            answer = await member.ctx.invoke(forward, self.broker.config.client_forward_timeout_s)
        except RemotingTimeoutError as exc:
            return request.response(
                ResponseCode.CONSUME_MSG_TIMEOUT, f"consumer <{member.client_id}> did not answer in time: {exc}"
            )
        except RemotingError as exc:
            return request.response(ResponseCode.SYSTEM_ERROR, f"invoke consumer <{member.client_id}> failed: {exc}")
        return request.response(answer.code, answer.remark, answer.ext_fields, answer.body)

    @guarded
    async def get_consumer_running_info(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        header = GetConsumerRunningInfoRequestHeader.decode(request)
        member = self._client(header.consumer_group, header.client_id)
        forward = RemotingCommand.request(RequestCode.GET_CONSUMER_RUNNING_INFO, header.encode())
        return await self._forward(request, member, forward)

    @guarded
    async def consume_message_directly(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        header = ConsumeMessageDirectlyResultRequestHeader.decode(request)
        group, client_id, msg_id = header.consumer_group, header.client_id, header.msg_id
        try:
            _, offset = parse_offset_msg_id(msg_id)
        except ValueError as exc:
            raise RequestError(
                ResponseCode.SYSTEM_ERROR, f"msgId {msg_id!r} is not an offset message id: {exc}"
            ) from None
        record = self.broker.store.look_message_by_offset(offset)
        if record is None:
            raise RequestError(ResponseCode.SYSTEM_ERROR, f"can not find message by the offset, {offset}")
        member = self._client(group, client_id)
        ext = ConsumeMessageDirectlyResultRequestHeader(
            consumer_group=group, client_id=client_id, msg_id=msg_id, broker_name=self.broker.config.broker_name
        ).encode()
        return await self._forward(
            request, member, RemotingCommand.request(RequestCode.CONSUME_MESSAGE_DIRECTLY, ext, record)
        )
