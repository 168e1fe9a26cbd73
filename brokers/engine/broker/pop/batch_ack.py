"""The body of BATCH_ACK_MESSAGE (200151, RocketMQ 5's ``BatchAckMessageRequestBody``), as fastjson writes it::

    {"acks":[{"b":"BQ==","c":"cg","it":60000,"pt":1764350000000,"q":0,"r":"0","rq":0,"so":5,"t":"T"}],
     "brokerName":"broker-a"}

One entry per (retry, queue, batch start, popTime) of the handles acked: ``c`` consumer group, ``t``
topic, ``r`` retry flag, ``so`` the handles' ckQueueOffset, ``q`` queue id, ``rq`` reviveQid, ``pt``
popTime, ``it`` invisibleTime, ``b`` a ``java.util.BitSet.toByteArray()`` in base64 whose bit ``i``
acks queue offset ``so + i`` (bit ``i`` is bit ``i % 8`` of byte ``i // 8``). fastjson also reads the
long names (consumerGroup, topic, retry, startOffset, queueId, reviveQueueId, popTime, invisibleTime,
bitSet).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

MAX_BATCH_ACK_OFFSETS = 1024  # offsets one body may ack: a client acks at most a few pops' worth at once


class BatchAckError(ValueError):
    """The body does not parse; the message names the field."""


@dataclass(frozen=True, slots=True)
class BatchAck:
    group: str
    topic: str
    retry: str
    start_offset: int
    queue_id: int
    revive_qid: int
    pop_time: int
    invisible_time: int
    offsets: tuple[int, ...]


_FIELDS = {
    "c": "consumerGroup",
    "t": "topic",
    "r": "retry",
    "so": "startOffset",
    "q": "queueId",
    "rq": "reviveQueueId",
    "pt": "popTime",
    "it": "invisibleTime",
    "b": "bitSet",
}


def _field(entry: dict[str, Any], short: str) -> Any:
    value = entry.get(short)
    return entry.get(_FIELDS[short]) if value is None else value


def bit_offsets(start: int, packed: str) -> tuple[int, ...]:
    try:
        data = base64.b64decode(packed, validate=True)
    except (binascii.Error, ValueError):
        raise BatchAckError("bitSet is not base64") from None
    return tuple(start + i * 8 + bit for i, byte in enumerate(data) for bit in range(8) if byte >> bit & 1)


def parse_batch_ack_body(body: object) -> tuple[str | None, list[BatchAck]]:
    """(brokerName, acks) of a parsed JSON body; BatchAckError naming the bad field."""
    if not isinstance(body, dict):
        raise BatchAckError("the batch ack body is not a JSON object")
    acks = body.get("acks")
    if not isinstance(acks, list) or not acks:
        raise BatchAckError("the batch ack body has no acks")
    out: list[BatchAck] = []
    total = 0
    for n, entry in enumerate(acks):
        if not isinstance(entry, dict):
            raise BatchAckError(f"acks[{n}] is not an object")
        try:
            group, topic = _field(entry, "c"), _field(entry, "t")
            if not isinstance(group, str) or not isinstance(topic, str):
                raise BatchAckError(f"acks[{n}] needs consumerGroup and topic")
            packed = _field(entry, "b")
            if not isinstance(packed, str):
                raise BatchAckError(f"acks[{n}].bitSet is missing")
            start = int(_field(entry, "so"))
            ack = BatchAck(
                group,
                topic,
                str(_field(entry, "r") or "0"),
                start,
                int(_field(entry, "q")),
                int(_field(entry, "rq") or 0),
                int(_field(entry, "pt")),
                int(_field(entry, "it")),
                bit_offsets(start, packed),
            )
        except (TypeError, ValueError) as exc:
            if isinstance(exc, BatchAckError):
                raise
            raise BatchAckError(
                f"acks[{n}] has a missing or non-numeric startOffset, queueId, popTime or invisibleTime"
            ) from None
        total += len(ack.offsets)
        if total > MAX_BATCH_ACK_OFFSETS:
            raise BatchAckError(f"the batch acks more than {MAX_BATCH_ACK_OFFSETS} offsets")
        out.append(ack)
    name = body.get("brokerName")
    return (name if isinstance(name, str) else None), out
