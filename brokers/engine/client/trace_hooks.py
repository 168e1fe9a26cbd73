"""The trace records a send and a consume produce (RocketMQ's SendMessageTraceHookImpl and ConsumeMessageTraceHookImpl).

- A stored send gives one Pub record: the producer group, topic, message id (UNIQ_KEY), tags, keys,
  the broker that stored it (from the offset message id), body length, cost, type (normal or
  delayed), offset message id and success (SEND_OK). Failed sends and batches give none, as in RocketMQ.
- A listener call gives one SubBefore per message before it (consumer group, a request id shared with
  the SubAfter records, retry count) and one SubAfter per message after it (cost per message, success,
  the ConsumeReturnType code). Messages of the trace topic, and messages whose ``TRACE_ON`` is ``false``,
  are not traced.

Every function here is called on the send/consume path, so each one catches its own errors: a bad
message can cost a trace record, never the send or the consume.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from brokers.engine.client.identity import UniqIdGenerator
from brokers.engine.client.send_result import SendResult, SendStatus
from brokers.engine.client.trace_dispatcher import TraceDispatcher
from brokers.engine.common.message import (
    PROPERTY_DELAY_TIME_LEVEL,
    PROPERTY_MSG_REGION,
    PROPERTY_TRACE_SWITCH,
    Message,
    MessageExt,
)
from brokers.engine.common.message_id import parse_offset_msg_id
from brokers.engine.common.trace_data import TraceRecord

__all__ = ["trace_pub", "trace_sub_before", "trace_sub_after"]

log = logging.getLogger("brokers.engine.client.trace")
_request_ids: list[UniqIdGenerator] = []  # made at the first consume (it reads the local address)

CONTEXT_SUCCESS, CONTEXT_FAILED, CONTEXT_EXCEPTION = 0, 4, 2  # ConsumeReturnType ordinals


def _store_host(offset_msg_id: str) -> str:
    try:
        return parse_offset_msg_id(offset_msg_id.split(",")[0])[0]
    except ValueError:
        return ""


def trace_pub(
    dispatcher: TraceDispatcher | None, group: str, msg: Message, result: SendResult, begin_ms: int, cost_ms: int
) -> None:
    """Queue the Pub record of a stored single send."""
    if dispatcher is None:
        return
    try:
        keys = msg.keys if isinstance(msg.keys, str) or msg.keys is None else " ".join(msg.keys)
        delayed = int(msg.properties.get(PROPERTY_DELAY_TIME_LEVEL) or 0) > 0
        dispatcher.offer(
            TraceRecord(
                "Pub",
                result.msg_id,
                begin_ms,
                result.region_id,
                group,
                msg.topic,
                msg.tags or "",
                keys or "",
                _store_host(result.offset_msg_id),
                len(msg.body),
                max(cost_ms, 0),
                3 if delayed else 0,
                result.offset_msg_id,
                result.status == SendStatus.SEND_OK,
            )
        )
    except Exception as exc:
        log.debug("no Pub trace record: %s", exc)


def _traced(dispatcher: TraceDispatcher, msgs: Sequence[MessageExt]) -> list[MessageExt]:
    return [
        m for m in msgs if m.topic != dispatcher.config.topic and m.properties.get(PROPERTY_TRACE_SWITCH) != "false"
    ]


def trace_sub_before(dispatcher: TraceDispatcher | None, group: str, msgs: Sequence[MessageExt], now_ms: int) -> str:
    """Queue a SubBefore per traced message; return the request id the SubAfter records repeat ('' when untraced)."""
    if dispatcher is None:
        return ""
    try:
        if not _request_ids:
            _request_ids.append(UniqIdGenerator())
        request_id = _request_ids[0].next_id()
        for m in _traced(dispatcher, msgs):
            dispatcher.offer(
                TraceRecord(
                    "SubBefore",
                    m.uniq_key or m.msg_id,
                    now_ms,
                    m.properties.get(PROPERTY_MSG_REGION, ""),
                    group,
                    m.topic,
                    keys=m.keys or "",
                    store_host=m.store_host,
                    request_id=request_id,
                    retry_times=m.reconsume_times,
                )
            )
        return request_id
    except Exception as exc:
        log.debug("no SubBefore trace record: %s", exc)
        return ""


def trace_sub_after(
    dispatcher: TraceDispatcher | None,
    group: str,
    msgs: Sequence[MessageExt],
    request_id: str,
    now_ms: int,
    cost_ms: float,
    ok: bool,
    raised: bool,
) -> None:
    """Queue a SubAfter per traced message: the listener's cost shared out per message, its outcome."""
    if dispatcher is None or not request_id:
        return
    try:
        traced = _traced(dispatcher, msgs)
        per_message = int(cost_ms / max(len(traced), 1))
        code = CONTEXT_SUCCESS if ok else (CONTEXT_EXCEPTION if raised else CONTEXT_FAILED)
        for m in traced:
            dispatcher.offer(
                TraceRecord(
                    "SubAfter",
                    m.uniq_key or m.msg_id,
                    now_ms,
                    group=group,
                    topic=m.topic,
                    keys=m.keys or "",
                    cost_ms=per_message,
                    success=ok,
                    request_id=request_id,
                    context_code=code,
                )
            )
    except Exception as exc:
        log.debug("no SubAfter trace record: %s", exc)
