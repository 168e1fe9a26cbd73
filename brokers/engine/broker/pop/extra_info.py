"""The receipt handle of a popped message (RocketMQ's ``ExtraInfoUtil``, the ``POP_CK`` property) and
the per-queue strings of a POP_MESSAGE answer.

A handle is eight fields separated by one space (``MessageConst.KEY_SEPARATOR``)::

    ckQueueOffset popTime invisibleTime reviveQid retry brokerName queueId queueOffset
    5             1764350000000 60000   0         0     broker-a   3       7

- ``ckQueueOffset``: the first offset the pop took from the queue (after CHANGE_MESSAGE_INVISIBLETIME,
  the message's own offset: the 5.x client builds the new handle that way);
- ``popTime`` / ``invisibleTime``: ms; the message is invisible until their sum;
- ``reviveQid``: ``0``, or ``999`` (``POP_ORDER_REVIVE_QUEUE``) for an orderly pop;
- ``retry``: ``0`` a normal topic, ``1`` a ``%RETRY%`` topic, ``2`` a 5.x pop retry topic. Gantry
  redelivers from the original queue, so it hands out ``0`` only;
- the last field (the message's queue offset) is absent from the 7-field form.

The answer's ``startOffsetInfo`` (``retry queueId startOffset`` per queue), ``msgOffsetInfo``
(``retry queueId o1,o2,...``, ascending as the client sorts them) and ``orderCountInfo``
(``retry qo<queueId>%<offset> count`` per message of an orderly pop) join their entries with ``;``.
"""

from __future__ import annotations

from dataclasses import dataclass

SEPARATOR = " "
NORMAL_TOPIC = "0"
ORDER_REVIVE_QID = 999  # KeyBuilder.POP_ORDER_REVIVE_QUEUE: the client reads an orderly handle by it
NORMAL_REVIVE_QID = 0


class ExtraInfoError(ValueError):
    """The handle does not parse; the message names the field."""


@dataclass(frozen=True, slots=True)
class ExtraInfo:
    ck_offset: int
    pop_time: int
    invisible_time: int
    revive_qid: int
    retry: str
    broker_name: str
    queue_id: int
    queue_offset: int | None  # None in the 7-field form

    @property
    def order(self) -> bool:
        return self.revive_qid == ORDER_REVIVE_QID

    def text(self) -> str:
        fields = [
            self.ck_offset,
            self.pop_time,
            self.invisible_time,
            self.revive_qid,
            self.retry,
            self.broker_name,
            self.queue_id,
        ]
        if self.queue_offset is not None:
            fields.append(self.queue_offset)
        return SEPARATOR.join(str(f) for f in fields)


_NAMES = ("ckQueueOffset", "popTime", "invisibleTime", "reviveQid", "retry", "brokerName", "queueId", "queueOffset")


def parse_extra_info(text: str) -> ExtraInfo:
    """Parse a handle (7 or 8 fields); ExtraInfoError names the first bad field."""
    parts = text.split(SEPARATOR) if text else []
    if len(parts) not in (7, 8):
        raise ExtraInfoError(f"extraInfo has {len(parts)} fields, expected 7 or 8 ({' '.join(_NAMES)})")
    numbers: dict[int, int] = {}
    for i in (0, 1, 2, 3, 6, 7):
        if i >= len(parts):
            continue
        try:
            numbers[i] = int(parts[i])
        except ValueError:
            raise ExtraInfoError(f"extraInfo field {_NAMES[i]} is not a number: {parts[i][:40]!r}") from None
    return ExtraInfo(numbers[0], numbers[1], numbers[2], numbers[3], parts[4], parts[5], numbers[6], numbers.get(7))


def start_offset_info(starts: dict[int, int]) -> str:
    return ";".join(f"{NORMAL_TOPIC} {qid} {offset}" for qid, offset in starts.items())


def msg_offset_info(offsets: dict[int, list[int]]) -> str:
    return ";".join(f"{NORMAL_TOPIC} {qid} {','.join(str(o) for o in sorted(found))}" for qid, found in offsets.items())


def order_count_info(counts: dict[tuple[int, int], int]) -> str:
    """``counts``: (queue id, queue offset) -> the delivery's reconsume times."""
    return ";".join(f"{NORMAL_TOPIC} qo{qid}%{offset} {count}" for (qid, offset), count in counts.items())
