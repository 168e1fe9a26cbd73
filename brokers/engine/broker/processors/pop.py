"""RocketMQ 5's message-level consumption over the remoting codes: POP_MESSAGE (200050),
ACK_MESSAGE (200051), CHANGE_MESSAGE_INVISIBLETIME (200053), BATCH_ACK_MESSAGE (200151, body in
``pop/batch_ack.py``). What Apache's proxy sends for the
gRPC ReceiveMessage, AckMessage and ChangeInvisibleDuration, and what rocketmq-client 5.x's
``MQClientAPIImpl.popMessageAsync / ackMessageAsync / changeInvisibleTimeAsync`` send.

POP_MESSAGE header: consumerGroup, topic, queueId (-1: every readable queue), maxMsgNums (1..32),
invisibleTime (ms, within ``pop_min_invisible_ms``..``pop_max_invisible_ms``), pollTime (ms to
park when nothing is there, capped at ``max_suspend_ms``), bornTime, initMode (0 a group's first
pop of a queue starts at its oldest message, 1 at its end), expType/exp (TAG or SQL92, as a
pull), order. Answer 0 with the records (RECONSUMETIMES = the delivery's reconsume times) and
popTime, invisibleTime, reviveQid (0, 999 orderly), restNum, startOffsetInfo, msgOffsetInfo,
orderCountInfo (formats in ``pop/extra_info.py``); 19 PULL_NOT_FOUND (no pollTime) or 210
POLLING_TIMEOUT (after parking) when there is nothing; 209 POLLING_FULL when the group has
``pop_max_inflight_per_group`` deliveries in flight or ``pop_max_polling`` pops are parked.

ACK_MESSAGE header: consumerGroup, topic, queueId, offset, extraInfo (the handle).
CHANGE_MESSAGE_INVISIBLETIME: the same and invisibleTime; answers popTime, invisibleTime,
reviveQid, from which the client builds the new handle (the old one stops working). A handle
must name exactly a delivery in flight, not expired: group, topic, queue, offset, popTime,
invisibleTime, batch start and broker name; else 208 NO_MESSAGE with a remark, nothing changed.
An unreadable handle is 13 MESSAGE_ILLEGAL.

An answer is written after its journal record is durable (``pop/journal.py``); SYSTEM_ERROR naming the
journal when it cannot be written. A slave refuses
the three codes: POP state is not replicated to slaves.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import TYPE_CHECKING, Any, TypeVar

from brokers.engine.broker.pop.batch_ack import BatchAckError, parse_batch_ack_body
from brokers.engine.broker.pop.extra_info import (
    NORMAL_REVIVE_QID,
    NORMAL_TOPIC,
    ORDER_REVIVE_QID,
    ExtraInfo,
    ExtraInfoError,
    msg_offset_info,
    order_count_info,
    parse_extra_info,
    start_offset_info,
)
from brokers.engine.broker.pop.service import PopOutcome, PopQuery, PopService
from brokers.engine.broker.pop.state import InFlight
from brokers.engine.broker.processors.base import (
    HandlerMethod,
    Processor,
    ProcessorRegistry,
    RequestError,
    checked_group,
    checked_topic,
    guarded,
)
from brokers.engine.broker.processors.property_filter import pull_message_filter
from brokers.engine.common import json_compat
from brokers.engine.common.perm import is_readable
from brokers.engine.common.subscription import InvalidSubscriptionError, build_subscription_data
from brokers.engine.remoting.channel import ChannelContext
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.headers.consume import (
    AckMessageRequestHeader,
    ChangeInvisibleTimeRequestHeader,
    PopMessageRequestHeader,
)
from brokers.engine.store.ha.ha_config import SLAVE

if TYPE_CHECKING:
    from brokers.engine.broker.broker_context import BrokerContext

log = logging.getLogger("brokers.engine.broker.pop")

# RocketMQ 5.x answers parked pops with these; 4.9 had given the same numbers to two ACL codes.
POLLING_FULL = 209
POLLING_TIMEOUT = 210
MAX_POP_MSG_NUMS = 32  # RocketMQ's PopMessageProcessor refuses more


_Self = TypeVar("_Self")
_Ctx = TypeVar("_Ctx")


def journaled(handler: HandlerMethod[_Self, _Ctx]) -> HandlerMethod[_Self, _Ctx]:
    """Answer SYSTEM_ERROR naming the journal when it cannot be written (a full disk): the change holds in
    memory (a pop's messages come again after their invisible time, an ack's message after a restart)."""

    @functools.wraps(handler)
    async def wrapper(self: _Self, ctx: _Ctx, request: RemotingCommand) -> RemotingCommand | None:
        try:
            return await handler(self, ctx, request)
        except OSError as exc:
            log.error("pop journal write failed: %s", exc)
            return request.response(ResponseCode.SYSTEM_ERROR, f"the POP journal could not be written: {exc}")

    return wrapper


class PopMessageProcessor(Processor):
    def __init__(self, broker: BrokerContext, service: PopService) -> None:
        super().__init__(broker)
        self.service = service

    def register(self, server: ProcessorRegistry) -> None:
        server.register_processor(RequestCode.POP_MESSAGE, self.pop_message)
        server.register_processor(RequestCode.ACK_MESSAGE, self.ack_message)
        server.register_processor(RequestCode.CHANGE_MESSAGE_INVISIBLETIME, self.change_invisible_time)
        server.register_processor(RequestCode.BATCH_ACK_MESSAGE, self.batch_ack_message)

    # -- checks -------------------------------------------------------------------------------

    def _check_common(self, group: str, topic: str, queue_id: int, what: str) -> tuple[str, str, int]:
        broker = self.broker
        if broker.store.broker_role == SLAVE:
            raise RequestError(
                ResponseCode.NO_PERMISSION,
                f"{what} is served by the master only: this broker "
                f"[{broker.config.broker_name}] is a slave (POP state is not replicated)",
            )
        group, topic = checked_group(group), checked_topic(topic)
        if not is_readable(broker.config.broker_permission):
            raise RequestError(
                ResponseCode.NO_PERMISSION, f"the broker[{broker.config.broker_name}] {what} is forbidden"
            )
        tc = broker.topic_config_manager.select_topic_config(topic)
        if tc is None:
            raise RequestError(ResponseCode.TOPIC_NOT_EXIST, f"topic[{topic}] not exist, apply first please!")
        if not is_readable(tc.perm):
            raise RequestError(ResponseCode.NO_PERMISSION, f"the topic[{topic}] {what} is forbidden")
        if queue_id >= tc.read_queue_nums or queue_id < (-1 if what == "pop" else 0):
            raise RequestError(
                ResponseCode.MESSAGE_ILLEGAL if what != "pop" else ResponseCode.SYSTEM_ERROR,
                f"queueId[{queue_id}] is illegal, topic:[{topic}] topicConfig.readQueueNums:[{tc.read_queue_nums}]",
            )
        return group, topic, queue_id

    def _check_invisible(self, invisible: int) -> int:
        config = self.broker.config
        if not config.pop_min_invisible_ms <= invisible <= config.pop_max_invisible_ms:
            raise RequestError(
                ResponseCode.SYSTEM_ERROR,
                f"invisibleTime {invisible} is outside {config.pop_min_invisible_ms}.."
                f"{config.pop_max_invisible_ms} ms (pop_min_invisible_ms, pop_max_invisible_ms)",
            )
        return invisible

    # -- POP_MESSAGE --------------------------------------------------------------------------

    @journaled
    @guarded
    async def pop_message(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand | None:
        broker, config = self.broker, self.broker.config
        header = PopMessageRequestHeader.decode(request)
        group, topic, queue_id = self._check_common(header.consumer_group, header.topic, header.queue_id, "pop")
        max_nums = header.max_msg_nums
        if not 1 <= max_nums <= MAX_POP_MSG_NUMS:
            raise RequestError(ResponseCode.SYSTEM_ERROR, f"maxMsgNums {max_nums} is outside 1..{MAX_POP_MSG_NUMS}")
        invisible = self._check_invisible(header.invisible_time)
        poll_ms = header.poll_time
        if poll_ms < 0:
            raise RequestError(ResponseCode.SYSTEM_ERROR, f"pollTime {poll_ms} is negative")
        init_mode = header.init_mode
        group_cfg = broker.subscription_group_manager.find_subscription_group_config(group)
        if group_cfg is None:
            raise RequestError(
                ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, f"subscription group [{group}] does not exist"
            )
        if not group_cfg.consume_enable:
            raise RequestError(ResponseCode.NO_PERMISSION, f"subscription group no permission, {group}")
        try:
            subscription = build_subscription_data(
                topic, header.exp or "*", header.exp_type or "TAG", 0, config.subscription_limits
            )
        except InvalidSubscriptionError as exc:
            raise RequestError(ResponseCode.SUBSCRIPTION_PARSE_FAILED, f"parse the pop's exp failed: {exc}") from None
        tc = broker.topic_config_manager.select_topic_config(topic)
        if tc is None:  # checked by _check_common; named again for the type checker
            raise RequestError(ResponseCode.TOPIC_NOT_EXIST, f"topic[{topic}] not exist, apply first please!")
        queue_ids = tuple(range(tc.read_queue_nums)) if queue_id < 0 else (queue_id,)
        order = header.order
        query = PopQuery(
            group,
            topic,
            queue_ids,
            max_nums,
            invisible,
            order,
            init_mode,
            subscription.tag_codes(),
            pull_message_filter(subscription, enabled=config.enable_property_filter),
        )
        loop = asyncio.get_running_loop()
        deadline = loop.time() + min(poll_ms, config.max_suspend_ms) / 1000
        while True:
            if self.service.stopped:
                return request.response(ResponseCode.SYSTEM_BUSY, f"broker {config.broker_name} is stopping")
            with self.service.waiter(topic, group) as woken:
                outcome = self.service.pop(query)
                if outcome.records:
                    break
                if outcome.full:
                    return request.response(
                        POLLING_FULL,
                        f"group {group} has {self.service.state.inflight_count(group)} messages "
                        f"in flight, the limit (pop_max_inflight_per_group); ack some first",
                        self._header(outcome, order),
                    )
                remaining = deadline - loop.time()
                if remaining <= 0:
                    code = POLLING_TIMEOUT if poll_ms > 0 else ResponseCode.PULL_NOT_FOUND
                    return request.response(code, "no new message", self._header(outcome, order))
                if self.service.parked_count > config.pop_max_polling:
                    return request.response(
                        POLLING_FULL,
                        f"{config.pop_max_polling} pops are parked, the limit (pop_max_polling)",
                        self._header(outcome, order),
                    )
                try:
                    await asyncio.wait_for(woken.wait(), remaining)
                except TimeoutError:
                    pass
                if ctx is not None and ctx.closed:
                    return None
        if len(outcome.records) >= query.max_nums:
            self.service.wake_next(topic, group)  # a change wakes one parked pop: pass it on while there may be more
        return await self._found(request, query, outcome)

    @staticmethod
    def _header(outcome: PopOutcome, order: bool) -> dict[str, Any]:
        return {
            "popTime": outcome.pop_time,
            "invisibleTime": 0,
            "reviveQid": ORDER_REVIVE_QID if order else NORMAL_REVIVE_QID,
            "restNum": outcome.rest,
        }

    async def _found(self, request: RemotingCommand, query: PopQuery, outcome: PopOutcome) -> RemotingCommand:
        await self.service.durable(outcome.seq)
        ext = self._header(outcome, query.order)
        ext["invisibleTime"] = query.invisible_ms
        ext["startOffsetInfo"] = start_offset_info(outcome.starts)
        ext["msgOffsetInfo"] = msg_offset_info(outcome.offsets)
        if query.order:
            ext["orderCountInfo"] = order_count_info(outcome.counts)
        body = b"".join(outcome.records)
        stats = self.broker.broker_stats
        stats.inc_get(len(outcome.records), len(body))
        stats.group_get.inc(query.group, query.topic, len(outcome.records))
        return request.response(ResponseCode.SUCCESS, "FOUND", ext, body)

    # -- ACK_MESSAGE, CHANGE_MESSAGE_INVISIBLETIME --------------------------------------------

    def _in_flight(self, header: AckMessageRequestHeader, what: str) -> tuple[tuple[str, str, int], InFlight]:
        group, topic, queue_id = self._check_common(header.consumer_group, header.topic, header.queue_id, what)
        offset = header.offset
        try:
            handle = parse_extra_info(header.extra_info)
        except ExtraInfoError as exc:
            raise RequestError(ResponseCode.MESSAGE_ILLEGAL, f"extraInfo is malformed: {exc}") from None
        key = (group, topic, queue_id)
        return key, self._verify(key, offset, handle)

    def _verify(self, key: tuple[str, str, int], offset: int, handle: ExtraInfo) -> InFlight:
        """The delivery in flight that ``handle`` names exactly, not expired; else RequestError NO_MESSAGE."""
        group, topic, queue_id = key
        flight = self.service.find(key, offset)
        where = f"group {group} topic {topic} queue {queue_id} offset {offset}"
        if flight is None:
            raise RequestError(
                ResponseCode.NO_MESSAGE,
                f"no message in flight for {where}: acked, expired and taken again, or never popped by this group",
            )
        mismatch = [
            name
            for name, ok in (
                ("queueId", handle.queue_id == queue_id),
                ("queueOffset", handle.queue_offset in (None, offset)),
                ("retry", handle.retry == NORMAL_TOPIC),
                ("brokerName", handle.broker_name == self.broker.config.broker_name),
                ("popTime", handle.pop_time == flight.pop_time),
                ("invisibleTime", handle.invisible_time == flight.invisible_ms),
                ("ckQueueOffset", handle.ck_offset == flight.ck_offset),
            )
            if not ok
        ]
        if mismatch:
            raise RequestError(
                ResponseCode.NO_MESSAGE,
                f"extraInfo does not match the delivery in flight for {where} "
                f"({', '.join(mismatch)}): a stale or forged handle",
            )
        if flight.deadline <= self.broker.clock.now_ms():
            raise RequestError(
                ResponseCode.NO_MESSAGE,
                f"the delivery of {where} popped at {flight.pop_time} expired at "
                f"{flight.deadline}; it is delivered again",
            )
        return flight

    @journaled
    @guarded
    async def ack_message(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        key, flight = self._in_flight(AckMessageRequestHeader.decode(request), "ack")
        await self.service.durable(self.service.ack(key, flight))
        return request.response(ResponseCode.SUCCESS)

    @journaled
    @guarded
    async def change_invisible_time(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        header = ChangeInvisibleTimeRequestHeader.decode(request)
        invisible = self._check_invisible(header.invisible_time)
        key, flight = self._in_flight(header, "change invisible time")
        pop_time, seq = self.service.change(key, flight, invisible)
        await self.service.durable(seq)
        return request.response(
            ResponseCode.SUCCESS,
            None,
            {
                "popTime": pop_time,
                "invisibleTime": invisible,
                "reviveQid": ORDER_REVIVE_QID if flight.order else NORMAL_REVIVE_QID,
            },
        )

    @journaled
    @guarded
    async def batch_ack_message(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        """BATCH_ACK_MESSAGE: every offset named is checked as an ACK_MESSAGE handle; the matching ones are
        acked, and the answer is 208 NO_MESSAGE naming the others when there are any."""
        if self.broker.store.broker_role == SLAVE:
            raise RequestError(
                ResponseCode.NO_PERMISSION,
                f"batch ack is served by the master only: this broker "
                f"[{self.broker.config.broker_name}] is a slave (POP state is not replicated)",
            )
        try:
            named, acks = parse_batch_ack_body(json_compat.loads(request.body or b"null"))
        except (BatchAckError, ValueError, UnicodeDecodeError) as exc:
            raise RequestError(ResponseCode.MESSAGE_ILLEGAL, f"the batch ack body is malformed: {exc}") from None
        refused: list[str] = []
        seq = 0
        broker_name = self.broker.config.broker_name if named is None else named  # a body naming none: this one
        for ack in acks:
            group, topic = checked_group(ack.group), checked_topic(ack.topic)
            tc = self.broker.topic_config_manager.select_topic_config(topic)
            if tc is None:
                raise RequestError(ResponseCode.TOPIC_NOT_EXIST, f"topic[{topic}] not exist, apply first please!")
            key = (group, topic, ack.queue_id)
            for offset in ack.offsets:
                handle = ExtraInfo(
                    ack.start_offset,
                    ack.pop_time,
                    ack.invisible_time,
                    ack.revive_qid,
                    ack.retry,
                    broker_name,
                    ack.queue_id,
                    offset,
                )
                try:
                    seq = max(seq, self.service.ack(key, self._verify(key, offset, handle)))
                except RequestError as exc:
                    refused.append(exc.remark)
        await self.service.durable(seq)
        if refused:
            return request.response(
                ResponseCode.NO_MESSAGE, f"{len(refused)} of the offsets were not acked; the first: {refused[0]}"
            )
        return request.response(ResponseCode.SUCCESS)
