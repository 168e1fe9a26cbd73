"""QUERY_MESSAGE (12) by key and VIEW_MESSAGE_BY_ID (33) by commit log offset.

QUERY_MESSAGE looks ``<topic>#<key>`` up in the index (KEYS entries and UNIQ_KEY); hits are
hash hits, so the client re-checks keys. ``maxNum`` is capped at 64 (``maxMsgsNumBatch``);
``_UNIQUE_KEY_QUERY=true`` asks for at most 32; past the first record, the answer holds at most
``max_query_message_bytes`` (4 MiB by default; RocketMQ caps only the count, which allows 64
records of 4 MiB). Response: records concatenated, with
``indexLastUpdateTimestamp``/``indexLastUpdatePhyoffset``, or 22 QUERY_NOT_FOUND.
"""

from __future__ import annotations

from brokers.engine.broker.processors.base import (
    Processor,
    ProcessorRegistry,
    RequestError,
    checked_topic,
    guarded,
)
from brokers.engine.remoting.channel import ChannelContext
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.headers.messages import QueryMessageRequestHeader, ViewMessageRequestHeader

MAX_MSGS_NUM_BATCH = 64  # RocketMQ maxMsgsNumBatch
DEFAULT_QUERY_MAX_NUM = 32  # RocketMQ defaultQueryMaxNum, used for unique-key queries


class QueryMessageProcessor(Processor):
    def register(self, server: ProcessorRegistry) -> None:
        server.register_processor(RequestCode.QUERY_MESSAGE, self.query_message)
        server.register_processor(RequestCode.VIEW_MESSAGE_BY_ID, self.view_message_by_id)

    @guarded
    async def query_message(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        header = QueryMessageRequestHeader.decode(request)
        topic, key = checked_topic(header.topic), header.key
        max_num, begin, end = header.max_num, header.begin_timestamp, header.end_timestamp
        if header.unique_key_query:
            max_num = DEFAULT_QUERY_MAX_NUM
        if max_num <= 0:
            raise RequestError(ResponseCode.SYSTEM_ERROR, f"maxNum {max_num} must be positive")
        if end < begin:
            raise RequestError(ResponseCode.SYSTEM_ERROR, f"endTimestamp {end} is before beginTimestamp {begin}")
        records = self.broker.store.query_message(
            topic, key, min(max_num, MAX_MSGS_NUM_BATCH), begin, end, self.broker.config.max_query_message_bytes
        )
        if not records:
            return request.response(ResponseCode.QUERY_NOT_FOUND, "can not find message, maybe time range not correct")
        last_ts, last_phy = self.broker.store.index_last_update()
        ext = {"indexLastUpdateTimestamp": last_ts, "indexLastUpdatePhyoffset": last_phy}
        return request.response(ResponseCode.SUCCESS, None, ext, b"".join(records))

    @guarded
    async def view_message_by_id(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        offset = ViewMessageRequestHeader.decode(request).offset
        record = self.broker.store.look_message_by_offset(offset) if offset >= 0 else None
        if record is None:
            return request.response(ResponseCode.SYSTEM_ERROR, f"can not find message by the offset, {offset}")
        return request.response(ResponseCode.SUCCESS, None, None, record)
