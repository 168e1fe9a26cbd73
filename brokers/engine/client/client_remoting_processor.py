"""ClientRemotingProcessor: the requests a broker sends to a client, as RocketMQ's class of that name.

- NOTIFY_CONSUMER_IDS_CHANGED: a group's members changed; rebalance at once;
- GET_CONSUMER_RUNNING_INFO: answer with the consumer's ConsumerRunningInfo body (§4.14);
- RESET_CONSUMER_CLIENT_OFFSET (220): an operator's reset by time; the body is a ResetOffsetBody
  (§4.11, read by :func:`parse_reset_offset_body`) applied by the instance's ``reset_offset``;
- CONSUME_MESSAGE_DIRECTLY (309): an operator resends one stored message (the body: its commit-log
  record, as the broker forwards it) to this client; the group's push consumer runs its listener on it
  once and the answer is RocketMQ's ConsumeMessageDirectlyResult (JSON: order, autoCommit,
  consumeResult, remark, spentTimeMills). A group this client does not push-consume is SYSTEM_ERROR.

It works on a small view of the client instance (:class:`ClientInstanceView`), so the instance
module imports this one and not the other way round.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Protocol

from brokers.engine.client.admin_bodies import inflate_bodies
from brokers.engine.common import json_compat
from brokers.engine.common.message import MessageExt
from brokers.engine.common.message_codec import RecordFormatError, decode_record
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.remoting.channel import ChannelContext
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.errors import RemotingCommandError
from brokers.engine.remoting.headers.groups import GetConsumerRunningInfoRequestHeader
from brokers.engine.remoting.headers.pushes import (
    ConsumeMessageDirectlyResultRequestHeader,
    NotifyConsumerIdsChangedRequestHeader,
    ResetConsumerClientOffsetRequestHeader,
)

__all__ = ["ClientInstanceView", "ClientRemotingProcessor", "parse_reset_offset_body"]

log = logging.getLogger("brokers.engine.client")


class _RunningInfoSource(Protocol):
    def running_info_body(self) -> bytes: ...


class _DirectConsumer(Protocol):
    async def consume_message_directly(self, msg: MessageExt, broker_name: str) -> dict[str, Any]: ...


class ClientInstanceView(Protocol):
    """What the processor needs of an MQClientInstance."""

    client_id: str

    @property
    def consumers(self) -> Mapping[str, _RunningInfoSource]: ...

    def rebalance_immediately(self) -> None: ...

    async def reset_offset(
        self, topic: str, group: str, offset_table: dict[MessageQueue, int]
    ) -> set[MessageQueue]: ...


class ClientRemotingProcessor:
    """Answers a broker's requests to one client instance; see the module docstring."""

    def __init__(self, instance: ClientInstanceView) -> None:
        self.instance = instance

    def register(self, remoting: RemotingClient) -> None:
        remoting.register_processor(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, self.notify_consumer_ids_changed)
        remoting.register_processor(RequestCode.GET_CONSUMER_RUNNING_INFO, self.get_consumer_running_info)
        remoting.register_processor(RequestCode.RESET_CONSUMER_CLIENT_OFFSET, self.reset_offset)
        remoting.register_processor(RequestCode.CONSUME_MESSAGE_DIRECTLY, self.consume_message_directly)

    async def notify_consumer_ids_changed(self, ctx: ChannelContext, request: RemotingCommand) -> None:
        try:
            group = NotifyConsumerIdsChangedRequestHeader.decode(request).consumer_group
        except RemotingCommandError as exc:
            log.warning(
                "client %s: NOTIFY_CONSUMER_IDS_CHANGED from %s ignored: %s",
                self.instance.client_id,
                ctx.remote_addr,
                exc,
            )
            return None
        log.info(
            "client %s: consumer ids of group %s changed (from %s)", self.instance.client_id, group, ctx.remote_addr
        )
        self.instance.rebalance_immediately()
        return None

    async def get_consumer_running_info(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        try:
            group = GetConsumerRunningInfoRequestHeader.decode(request).consumer_group
        except RemotingCommandError as exc:
            return request.response(ResponseCode.SYSTEM_ERROR, str(exc))
        consumer = self.instance.consumers.get(group)
        if consumer is None:
            return request.response(
                ResponseCode.SYSTEM_ERROR, f"The Consumer Group <{group}> not exist in this consumer"
            )
        return request.response(ResponseCode.SUCCESS, body=consumer.running_info_body())

    async def consume_message_directly(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        """CONSUME_MESSAGE_DIRECTLY (309): ClientRemotingProcessor.consumeMessageDirectly of RocketMQ."""
        try:
            header = ConsumeMessageDirectlyResultRequestHeader.decode(request)
        except RemotingCommandError as exc:
            return request.response(ResponseCode.SYSTEM_ERROR, str(exc))
        group = header.consumer_group
        consumer: _DirectConsumer | None = self.instance.consumers.get(group)  # type: ignore[assignment]
        direct = getattr(consumer, "consume_message_directly", None)
        if consumer is None or direct is None:
            return request.response(
                ResponseCode.SYSTEM_ERROR, f"The Consumer Group <{group}> not exist in this consumer"
            )
        try:
            msg = inflate_bodies([decode_record(bytes(request.body or b""))])[0]
        except RecordFormatError as exc:
            return request.response(ResponseCode.SYSTEM_ERROR, f"unreadable message: {exc}")
        broker_name = header.broker_name or ""
        log.info(
            "client %s: consume message %s of group %s directly (from %s)",
            self.instance.client_id,
            header.msg_id,
            group,
            ctx.remote_addr,
        )
        try:
            result = await direct(msg, broker_name)
        except RuntimeError as exc:
            return request.response(ResponseCode.SYSTEM_ERROR, str(exc))
        return request.response(ResponseCode.SUCCESS, body=json_compat.dumps(result).encode("utf-8"))

    async def reset_offset(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand | None:
        """RESET_CONSUMER_CLIENT_OFFSET (220): ClientRemotingProcessor.resetOffset of RocketMQ 4.x."""
        client_id = self.instance.client_id
        try:
            header = ResetConsumerClientOffsetRequestHeader.decode(request)
        except RemotingCommandError as exc:
            log.warning("client %s: reset-offset from %s refused: %s", client_id, ctx.remote_addr, exc)
            return None if request.is_oneway else request.response(ResponseCode.SYSTEM_ERROR, str(exc))
        topic, group = header.topic, header.group
        log.info(
            "client %s: reset offsets of group %s, topic %s to timestamp %s (from %s)",
            client_id,
            group,
            topic,
            header.timestamp,
            ctx.remote_addr,
        )
        try:
            offset_table = parse_reset_offset_body(request.body)
        except (ValueError, TypeError, KeyError, UnicodeDecodeError) as exc:
            log.warning("client %s: unreadable reset-offset body from %s: %s", client_id, ctx.remote_addr, exc)
            offset_table = None
        if offset_table is not None:
            await self.instance.reset_offset(topic, group, offset_table)
        return None if request.is_oneway else request.response(ResponseCode.SUCCESS)


def parse_reset_offset_body(body: bytes | None) -> dict[MessageQueue, int]:
    """ResetOffsetBody (§4.11) ``{"offsetTable":{<MessageQueue>:offset}}``, or the C-style list form."""
    if not body:
        return {}
    data = json_compat.loads(body)
    table = data.get("offsetTable") if isinstance(data, dict) else None
    out: dict[MessageQueue, int] = {}
    if isinstance(table, dict):
        for key, value in table.items():
            mq = (
                key
                if isinstance(key, MessageQueue)
                else MessageQueue.from_json(json_compat.loads(key) if isinstance(key, str) else key)
            )
            out[mq] = int(value)
    elif isinstance(table, list):
        for item in table:
            out[MessageQueue.from_json(item)] = int(item["offset"])
    return out
