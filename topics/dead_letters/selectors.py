"""Reads of a consumer group's dead letters (``%DLQ%<group>``): a page, newest first, and an export.

Both read as the message search does (topics.messages.selectors: PULL_MESSAGE as RocketMQ's tools,
group TOOLS_CONSUMER, no offset committed): nothing is consumed. A group with no DLQ topic yet has
no dead letters: an empty page, an empty export, not an error.

The export streams JSON lines, one per dead letter in store order (queue by queue, oldest
first), at most MAX_EXPORT of them; each line holds the message's fields and its whole body, as
text when it is UTF-8 and as base64 otherwise (``body_encoding`` says which). When the cap cuts the
range short, a last line ``{"truncated": true, ...}`` says so.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass

from brokers.engine.client.simple import TOOLS_CONSUMER_GROUP
from brokers.engine.common.message import (
    PROPERTY_LAST_ERROR,
    PROPERTY_ORIGIN_MESSAGE_ID,
    PROPERTY_RETRY_TOPIC,
    MessageExt,
)
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.topic_validator import InvalidNameError, validate_group
from brokers.gateway.errors import RemotingError
from brokers.gateway.message_keys import MAX_TIMESTAMP
from brokers.gateway.queues import max_offsets, min_offsets, pull_messages, search_offsets
from console.errors import InvalidInput, NotFound
from topics import selectors
from topics.dead_letters.types import MAX_EXPORT, DeadLetter, DeadLetterPage, dlq_topic
from topics.messages.selectors import DEFAULT_PAGE_SIZE, message_query_by_time, topic_queues


def checked_group(name: str) -> str:
    """``name`` if it is a legal consumer group name, else InvalidInput on the field ``name``."""
    try:
        return validate_group(name)
    except InvalidNameError as exc:
        raise InvalidInput("name", str(exc)) from None


def dead_letter_page(*, group: str, page: int = 1, page_size: int = DEFAULT_PAGE_SIZE) -> DeadLetterPage:
    """One page of the group's dead letters, newest first (by the time they were moved)."""
    group = checked_group(group)
    try:
        found = message_query_by_time(
            topic=dlq_topic(group), begin_ms=0, end_ms=MAX_TIMESTAMP, page=page, page_size=page_size
        )
    except NotFound:  # the broker makes %DLQ%<group> with the group's first dead letter
        return DeadLetterPage(group, (), 0, page, page_size, exists=False)
    return DeadLetterPage(group, tuple(DeadLetter(m) for m in found.messages), found.total, page, page_size)


def export_record(group: str, broker_name: str, msg: MessageExt) -> dict:
    """One line of an export: where the dead letter is, what it says about the original, its whole body."""
    try:
        body, encoding = msg.body.decode("utf-8"), "text"
    except UnicodeDecodeError:
        body, encoding = base64.b64encode(msg.body).decode("ascii"), "base64"
    props = dict(msg.properties)
    return {
        "msg_id": msg.msg_id,
        "group": group,
        "topic": msg.topic,
        "original_topic": props.get(PROPERTY_RETRY_TOPIC),
        "origin_msg_id": props.get(PROPERTY_ORIGIN_MESSAGE_ID),
        "reconsume_times": msg.reconsume_times,
        "last_error": props.get(PROPERTY_LAST_ERROR),
        "broker_name": broker_name,
        "queue_id": msg.queue_id,
        "queue_offset": msg.queue_offset,
        "store_timestamp": msg.store_timestamp,
        "born_timestamp": msg.born_timestamp,
        "born_host": msg.born_host,
        "tags": msg.tags,
        "keys": msg.keys,
        "properties": props,
        "body_size": len(msg.body),
        "body_encoding": encoding,
        "body": body,
    }


@dataclass(frozen=True)
class DeadLetterExport:
    """An export, checked and located (nothing read yet): ``lines()`` streams it."""

    group: str
    begin_ms: int
    end_ms: int
    limit: int
    total: int  # dead letters the store-time search put in the range (the ends may be off by one)
    spans: tuple[tuple[MessageQueue, str, int, int], ...]  # queue, master address, first offset, end offset

    def messages(self) -> Iterator[tuple[str, MessageExt]]:
        """(broker name, message) of each dead letter in the range, queue by queue, at most ``limit``."""
        left = self.limit
        for mq, addr, lo, hi in self.spans:
            while lo < hi and left > 0:
                msgs = [
                    m for m in pull_messages({mq: (addr, lo, hi - lo)}, TOOLS_CONSUMER_GROUP)[mq] if m.queue_offset < hi
                ]
                if not msgs:
                    break
                for m in msgs:
                    if self.begin_ms <= m.store_timestamp <= self.end_ms and left > 0:
                        left -= 1
                        yield mq.broker_name, m
                lo = msgs[-1].queue_offset + 1

    def lines(self) -> Iterator[bytes]:
        """The export as JSON lines; a broker that stops answering ends it with an ``error`` line."""
        sent = 0
        try:
            for broker_name, msg in self.messages():
                sent += 1
                yield (
                    json.dumps(export_record(self.group, broker_name, msg), ensure_ascii=False).encode("utf-8") + b"\n"
                )
        except RemotingError as exc:
            yield json.dumps({"error": f"the export stopped after {sent} dead letters: {exc}"}).encode("utf-8") + b"\n"
            return
        if sent >= self.limit and self.total > self.limit:
            yield (
                json.dumps({"truncated": True, "limit": self.limit, "exported": sent, "in_range": self.total}).encode(
                    "utf-8"
                )
                + b"\n"
            )


def dead_letter_export(
    *, group: str, begin_ms: int | None = None, end_ms: int | None = None, limit: int = MAX_EXPORT
) -> DeadLetterExport:
    """Check the request and find the queues' spans (InvalidInput before anything streams)."""
    group = checked_group(group)
    begin, end = begin_ms or 0, end_ms if end_ms is not None else MAX_TIMESTAMP
    if end < begin:
        raise InvalidInput("end", "the end of the time range is before its beginning.")
    if not 1 <= limit <= MAX_EXPORT:
        raise InvalidInput("limit", f"must be from 1 to {MAX_EXPORT}.")
    try:
        queues = topic_queues(selectors.topic_route_data(dlq_topic(group)))
    except NotFound:
        return DeadLetterExport(group, begin, end, limit, 0, ())
    lows, highs = min_offsets(queues), max_offsets(queues)
    starts, ends = search_offsets(queues, begin), search_offsets(queues, end)
    spans, total = [], 0
    for mq in sorted(queues):
        lo, hi = max(starts[mq], lows[mq]), min(ends[mq] + 1, highs[mq])
        if hi > lo:
            total += hi - lo
            spans.append((mq, queues[mq], lo, hi))
    return DeadLetterExport(group, begin, end, limit, total, tuple(spans))
