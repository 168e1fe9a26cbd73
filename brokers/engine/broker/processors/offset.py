"""Consumer offsets and queue positions: QUERY_CONSUMER_OFFSET (14), UPDATE_CONSUMER_OFFSET (15),
GET_MAX_OFFSET (30), GET_MIN_OFFSET (31), GET_EARLIEST_MSG_STORETIME (32),
SEARCH_OFFSET_BY_TIMESTAMP (29).

QUERY_CONSUMER_OFFSET without a committed offset answers like RocketMQ (§2.3, §7.3): 0/SUCCESS
with offset 0 while the queue still starts at offset 0 and its first message is "hot" (the
queue is empty, or the first message lies within the last 40 % of physical memory's worth of
commit log, RocketMQ's ``accessMessageInMemoryMaxRatio``). That is why a brand-new group on a
young topic reads from the beginning. Otherwise 22 QUERY_NOT_FOUND, and the client falls back to
its consumeFromWhere.
"""

from __future__ import annotations

import os

from brokers.engine.broker.processors.base import (
    Processor,
    ProcessorRegistry,
    RequestError,
    checked_group,
    checked_topic,
    guarded,
)
from brokers.engine.remoting.channel import ChannelContext
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.headers.offsets import (
    GetEarliestMsgStoretimeRequestHeader,
    GetMaxOffsetRequestHeader,
    GetMinOffsetRequestHeader,
    QueryConsumerOffsetRequestHeader,
    QueueRequestHeader,
    SearchOffsetRequestHeader,
    UpdateConsumerOffsetRequestHeader,
)
from brokers.engine.store.message_store import MessageStore

ACCESS_MESSAGE_IN_MEMORY_MAX_RATIO = 0.40  # RocketMQ accessMessageInMemoryMaxRatio (40 %)
_PHYSICAL_OFFSET_AT = 28  # PHYSICALOFFSET field of a record


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


class ConsumerOffsetProcessor(Processor):
    def register(self, server: ProcessorRegistry) -> None:
        server.register_processor(RequestCode.QUERY_CONSUMER_OFFSET, self.query_consumer_offset)
        server.register_processor(RequestCode.UPDATE_CONSUMER_OFFSET, self.update_consumer_offset)
        server.register_processor(RequestCode.GET_MAX_OFFSET, self.get_max_offset)
        server.register_processor(RequestCode.GET_MIN_OFFSET, self.get_min_offset)
        server.register_processor(RequestCode.GET_EARLIEST_MSG_STORETIME, self.get_earliest_msg_storetime)
        server.register_processor(RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, self.search_offset_by_timestamp)

    def _queue(self, header: QueueRequestHeader) -> tuple[str, int]:
        topic, queue_id = checked_topic(header.topic), header.queue_id
        if queue_id < 0:
            raise RequestError(ResponseCode.SYSTEM_ERROR, f"queueId {queue_id} is negative")
        return topic, queue_id

    @guarded
    async def query_consumer_offset(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        header = QueryConsumerOffsetRequestHeader.decode(request)
        group = checked_group(header.consumer_group)
        topic, queue_id = self._queue(header)
        offset = self.broker.consumer_offset_manager.query_offset(group, topic, queue_id)
        if offset >= 0:
            return request.response(ResponseCode.SUCCESS, None, {"offset": offset})
        store = self.broker.store
        min_offset = store.get_min_offset_in_queue(topic, queue_id)
        if min_offset <= 0 and not self._first_message_cold(topic, queue_id):
            return request.response(ResponseCode.SUCCESS, None, {"offset": 0})
        return request.response(
            ResponseCode.QUERY_NOT_FOUND, "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first"
        )

    def _first_message_cold(self, topic: str, queue_id: int) -> bool:
        return first_message_cold(self.broker.store, topic, queue_id)

    @guarded
    async def update_consumer_offset(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand | None:
        header = UpdateConsumerOffsetRequestHeader.decode(request)
        group = checked_group(header.consumer_group)
        topic, queue_id = self._queue(header)
        self.broker.consumer_offset_manager.commit_offset(ctx.remote_addr, group, topic, queue_id, header.commit_offset)
        return None if request.is_oneway else request.response(ResponseCode.SUCCESS)

    @guarded
    async def get_max_offset(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        topic, queue_id = self._queue(GetMaxOffsetRequestHeader.decode(request))
        return request.response(
            ResponseCode.SUCCESS, None, {"offset": self.broker.store.get_max_offset_in_queue(topic, queue_id)}
        )

    @guarded
    async def get_min_offset(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        topic, queue_id = self._queue(GetMinOffsetRequestHeader.decode(request))
        return request.response(
            ResponseCode.SUCCESS, None, {"offset": self.broker.store.get_min_offset_in_queue(topic, queue_id)}
        )

    @guarded
    async def get_earliest_msg_storetime(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        topic, queue_id = self._queue(GetEarliestMsgStoretimeRequestHeader.decode(request))
        timestamp = self.broker.store.get_earliest_message_time(topic, queue_id)
        return request.response(ResponseCode.SUCCESS, None, {"timestamp": timestamp})

    @guarded
    async def search_offset_by_timestamp(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        header = SearchOffsetRequestHeader.decode(request)
        topic, queue_id = self._queue(header)
        offset = self.broker.store.get_offset_in_queue_by_time(topic, queue_id, header.timestamp)
        return request.response(ResponseCode.SUCCESS, None, {"offset": offset})


def first_message_cold(store: MessageStore, topic: str, queue_id: int) -> bool:
    """True when the queue's message 0 lies further behind the commit log end than RAM * 40 %
    (a new group then starts at the queue's end; while it is hot, at 0: RocketMQ's rule for
    QUERY_CONSUMER_OFFSET and for a group's first POP of a queue)."""
    if store.get_max_offset_in_queue(topic, queue_id) <= 0:
        return False
    result = store.get_message("", topic, queue_id, 0, 1, None)
    if not result.records:
        return True
    record = result.records[0]
    physical = int.from_bytes(record[_PHYSICAL_OFFSET_AT : _PHYSICAL_OFFSET_AT + 8], "big", signed=True)
    try:
        max_physical = int(store.runtime_info().get("commitLogMaxOffset", "0"))
    except (TypeError, ValueError):
        return False
    return max_physical - physical > _physical_memory() * ACCESS_MESSAGE_IN_MEMORY_MAX_RATIO
