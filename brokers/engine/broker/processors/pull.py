"""PULL_MESSAGE (11): read a batch of records from one queue, long-polling when there is none.
RocketMQ 5.x's lite pull consumer sends LITE_PULL_MESSAGE (361) with the same header; it is served
the same way, as RocketMQ's broker does.

Request header (protocol reference §2.3): consumerGroup, topic, queueId, queueOffset,
maxMsgNums, sysFlag, commitOffset, suspendTimeoutMillis, subscription, subVersion,
expressionType. sysFlag bits: 0x1 commit ``commitOffset``, 0x2 suspend allowed, 0x4 the
subscription is in the request (otherwise the one registered by heartbeat is used). A SQL92
subscription (``expressionType`` SQL92) needs ``enable_property_filter``: records then pass the
tag codes and the compiled selector, asked with each record's properties from the commit log
(``property_filter.py``); 1 SYSTEM_ERROR when filtering is off, 23 SUBSCRIPTION_PARSE_FAILED for
an expression that does not compile. A parked SQL92 pull wakes only for a matching message.

Response header on 0/19/20/21: nextBeginOffset, minOffset, maxOffset, suggestWhichBrokerId
(always all four; the suggestion and a slave's offset rules in ``pull_suggestion.py``). Body (code 0): the raw records concatenated. Store status -> code:

    FOUND -> 0 SUCCESS                       NO_MATCHED_MESSAGE, MESSAGE_WAS_REMOVING -> 20
    OFFSET_OVERFLOW_ONE, OFFSET_FOUND_NULL -> 19 (long-poll eligible)
    NO_MESSAGE_IN_QUEUE, NO_MATCHED_LOGIC_QUEUE -> 19 at offset 0 (long-poll eligible), else 21
    OFFSET_TOO_SMALL, OFFSET_OVERFLOW_BADLY -> 21
"""

from __future__ import annotations

import logging

from brokers.engine.broker.heartbeat import InvalidSubscriptionError, build_subscription_data
from brokers.engine.broker.processors.base import (
    Processor,
    ProcessorRegistry,
    RequestError,
    checked_group,
    checked_topic,
)
from brokers.engine.broker.processors.property_filter import pull_message_filter
from brokers.engine.broker.pull_request_hold_service import PropertyProbe, PullRequest
from brokers.engine.broker.pull_suggestion import slave_pull_answer, suggest_which_broker_id
from brokers.engine.common.perm import is_readable
from brokers.engine.remoting.channel import ChannelContext
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.errors import RemotingCommandError
from brokers.engine.remoting.headers.consume import PullMessageRequestHeader
from brokers.engine.store.ha.ha_config import SLAVE
from brokers.engine.store.message_store import MessageFilter, MessageStore
from brokers.engine.store.results import GetMessageStatus

log = logging.getLogger("brokers.engine.broker")

FLAG_COMMIT_OFFSET = 0x1
FLAG_SUSPEND = 0x2
FLAG_SUBSCRIPTION = 0x4
MAX_PULL_MSG_NUMS = 1024  # a sanity bound on maxMsgNums; the store caps bytes on its own

_STATUS_CODES = {
    GetMessageStatus.FOUND: ResponseCode.SUCCESS,
    GetMessageStatus.NO_MATCHED_MESSAGE: ResponseCode.PULL_RETRY_IMMEDIATELY,
    GetMessageStatus.MESSAGE_WAS_REMOVING: ResponseCode.PULL_RETRY_IMMEDIATELY,
    GetMessageStatus.OFFSET_OVERFLOW_ONE: ResponseCode.PULL_NOT_FOUND,
    GetMessageStatus.OFFSET_FOUND_NULL: ResponseCode.PULL_NOT_FOUND,
    GetMessageStatus.OFFSET_TOO_SMALL: ResponseCode.PULL_OFFSET_MOVED,
    GetMessageStatus.OFFSET_OVERFLOW_BADLY: ResponseCode.PULL_OFFSET_MOVED,
}


class PullMessageProcessor(Processor):
    def register(self, server: ProcessorRegistry) -> None:
        server.register_processor(RequestCode.PULL_MESSAGE, self.process)
        server.register_processor(RequestCode.LITE_PULL_MESSAGE, self.process)

    async def process(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand | None:
        """Serve a pull from a client (long polling allowed)."""
        return await self._process(ctx, request, broker_allow_suspend=True)

    async def execute_request_when_wakeup(
        self, ctx: ChannelContext, request: RemotingCommand
    ) -> RemotingCommand | None:
        """Re-run a parked pull; it answers now whatever the store has."""
        return await self._process(ctx, request, broker_allow_suspend=False)

    async def _process(
        self, ctx: ChannelContext, request: RemotingCommand, *, broker_allow_suspend: bool
    ) -> RemotingCommand | None:
        try:
            return self._pull(ctx, request, broker_allow_suspend)
        except RequestError as exc:
            return request.response(exc.code, exc.remark)
        except RemotingCommandError as exc:  # the header's decode: a missing or bad field, named
            return request.response(ResponseCode.SYSTEM_ERROR, str(exc))

    def _pull(
        self, ctx: ChannelContext, request: RemotingCommand, broker_allow_suspend: bool
    ) -> RemotingCommand | None:
        broker = self.broker
        config = broker.config
        header = PullMessageRequestHeader.decode(request)
        group, topic = checked_group(header.consumer_group), checked_topic(header.topic)
        queue_id, queue_offset, max_msg_nums = header.queue_id, header.queue_offset, header.max_msg_nums
        sys_flag, commit_offset = header.sys_flag, header.commit_offset
        suspend_ms, sub_version = header.suspend_timeout_millis, header.sub_version
        has_suspend = bool(sys_flag & FLAG_SUSPEND)
        has_commit = bool(sys_flag & FLAG_COMMIT_OFFSET)
        has_subscription = bool(sys_flag & FLAG_SUBSCRIPTION)

        if not is_readable(config.broker_permission):
            raise RequestError(
                ResponseCode.NO_PERMISSION, f"the broker[{config.broker_name}] pulling message is forbidden"
            )
        group_cfg = broker.subscription_group_manager.find_subscription_group_config(group)
        if group_cfg is None:
            raise RequestError(
                ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, f"subscription group [{group}] does not exist"
            )
        if not group_cfg.consume_enable:
            raise RequestError(ResponseCode.NO_PERMISSION, f"subscription group no permission, {group}")
        tc = broker.topic_config_manager.select_topic_config(topic)
        if tc is None:
            raise RequestError(ResponseCode.TOPIC_NOT_EXIST, f"topic[{topic}] not exist, apply first please!")
        if not is_readable(tc.perm):
            raise RequestError(ResponseCode.NO_PERMISSION, f"the topic[{topic}] pulling message is forbidden")
        if queue_id < 0 or queue_id >= tc.read_queue_nums:
            raise RequestError(
                ResponseCode.SYSTEM_ERROR,
                f"queueId[{queue_id}] is illegal, topic:[{topic}] topicConfig.readQueueNums:[{tc.read_queue_nums}] consumer:[{ctx.remote_addr}]",
            )
        if queue_offset < 0:
            raise RequestError(ResponseCode.SYSTEM_ERROR, f"queueOffset {queue_offset} is negative")
        if max_msg_nums <= 0:
            raise RequestError(ResponseCode.SYSTEM_ERROR, f"maxMsgNums {max_msg_nums} must be positive")

        if has_subscription:
            try:
                subscription = build_subscription_data(
                    topic,
                    header.subscription,
                    header.expression_type,
                    sub_version,
                    config.subscription_limits,
                )
            except InvalidSubscriptionError as exc:
                raise RequestError(
                    ResponseCode.SUBSCRIPTION_PARSE_FAILED, f"parse the consumer's subscription failed: {exc}"
                ) from None
        else:
            group_info = broker.client_manager.get_consumer_group_info(group)
            if group_info is None:
                raise RequestError(
                    ResponseCode.SUBSCRIPTION_NOT_EXIST, f"the consumer's group info not exist, group {group}"
                )
            if not group_cfg.consume_broadcast_enable and group_info.message_model == "BROADCASTING":
                raise RequestError(
                    ResponseCode.NO_PERMISSION, f"the consumer group[{group}] can not consume by broadcast way"
                )
            online = group_info.subscription_table.get(topic)
            if online is None:
                raise RequestError(
                    ResponseCode.SUBSCRIPTION_NOT_EXIST,
                    f"the consumer's subscription not exist, group {group} topic {topic}",
                )
            subscription = online
            if subscription.sub_version < sub_version:
                raise RequestError(
                    ResponseCode.SUBSCRIPTION_NOT_LATEST,
                    f"the consumer's subscription not latest, group {group} topic {topic}",
                )
        message_filter = pull_message_filter(subscription, enabled=config.enable_property_filter)  # None for TAG
        tag_codes = subscription.tag_codes()

        result = broker.store.get_message(
            group,
            topic,
            queue_id,
            queue_offset,
            min(max_msg_nums, MAX_PULL_MSG_NUMS),
            tag_codes,
            message_filter=message_filter,
        )
        code: int | None = _STATUS_CODES.get(result.status)
        if result.status in (GetMessageStatus.NO_MESSAGE_IN_QUEUE, GetMessageStatus.NO_MATCHED_LOGIC_QUEUE):
            code = ResponseCode.PULL_NOT_FOUND if queue_offset == 0 else ResponseCode.PULL_OFFSET_MOVED
        if code is None:
            code = ResponseCode.SYSTEM_ERROR
        suggest = suggest_which_broker_id(
            slave_read_enable=config.slave_read_enable,
            suggest_pulling_from_slave=result.suggest_pulling_from_slave,
            which_broker_when_consume_slowly=group_cfg.which_broker_when_consume_slowly,
            group_broker_id=group_cfg.broker_id,
        )
        next_begin = result.next_begin_offset
        if broker.store.broker_role == SLAVE:
            code, next_begin, suggest = slave_pull_answer(
                code, result.status, queue_offset, next_begin, suggest, group_cfg.broker_id
            )
        ext = {
            "nextBeginOffset": next_begin,
            "minOffset": result.min_offset,
            "maxOffset": result.max_offset,
            "suggestWhichBrokerId": suggest,
        }
        if has_commit and commit_offset >= 0 and broker_allow_suspend:
            broker.consumer_offset_manager.commit_offset(ctx.remote_addr, group, topic, queue_id, commit_offset)

        if code == ResponseCode.SUCCESS:
            body = b"".join(result.records)
            broker.broker_stats.inc_get(result.message_count, len(body))
            broker.broker_stats.group_get.inc(group, topic, result.message_count)
            return request.response(code, result.status.value, ext, body)
        if code == ResponseCode.PULL_NOT_FOUND and broker_allow_suspend and has_suspend:
            hold_ms = min(suspend_ms, config.max_suspend_ms) if config.long_polling_enable else config.short_polling_ms
            if hold_ms > 0:
                probe = (
                    None
                    if message_filter is None
                    else _property_probe(broker.store, group, topic, queue_id, message_filter)
                )
                broker.pull_request_hold_service.suspend_pull_request(
                    PullRequest(
                        ctx, request, topic, queue_id, queue_offset, tag_codes, hold_ms / 1000.0, property_probe=probe
                    )
                )
                return None
        if code != ResponseCode.SUCCESS:
            broker.broker_stats.inc_get(0, 0)
        if code == ResponseCode.SYSTEM_ERROR:
            return request.response(code, f"store answered {result.status}", ext)
        if code == ResponseCode.PULL_OFFSET_MOVED and result.status is GetMessageStatus.OFFSET_TOO_SMALL:
            broker.broker_stats.inc_offset_moved(
                group, topic, queue_id, next_begin - queue_offset
            )  # retention went past it
        if code == ResponseCode.PULL_OFFSET_MOVED:
            log.info(
                "pull offset moved: group %s %s:%d offset %d -> %d (%s)",
                group,
                topic,
                queue_id,
                queue_offset,
                result.next_begin_offset,
                result.status.value,
            )
        return request.response(code, result.status.value, ext)


def _property_probe(
    store: MessageStore, group: str, topic: str, queue_id: int, message_filter: MessageFilter
) -> PropertyProbe:
    """For a parked SQL92 pull: does a message of the queue from this offset on pass the filter?
    One store read of one record (at most MAX_FILTER_UNITS units scanned), so a message that does
    not match leaves the pull parked instead of answering it with nothing."""

    def probe(from_offset: int) -> bool:
        result = store.get_message(group, topic, queue_id, from_offset, 1, None, message_filter=message_filter)
        return result.status is GetMessageStatus.FOUND

    return probe
