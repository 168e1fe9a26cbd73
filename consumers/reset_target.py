"""Where a reset of a group's offsets goes: a time, now, the earliest or latest offset, or one queue's offset.

The choices of RocketMQ's tools: ``mqadmin resetOffsetByTime -s`` takes a time or ``now``, the
broker's reset takes ``-1`` for every queue's max offset (latest: skip the backlog) and a time
before the first message for the min offset (earliest: consume everything again), and
``mqadmin updateConsumerOffset`` sets one queue's offset. The one rule for the API and the page:
:func:`reset_target` checks a combination and refuses a bad one naming the field.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timezone

from django.utils.translation import gettext_lazy as _

from console.errors import InvalidInput
from console.times import parse_time_ms

__all__ = ["RESET_TO", "RESET_TO_LABELS", "LATEST_TIMESTAMP", "ResetTarget", "reset_target"]

RESET_TO_LABELS = {
    "time": _("a time"),
    "now": _("now (the message stored nearest to now, per queue, as mqadmin resetOffsetByTime -s now)"),
    "earliest": _("the earliest offset (consume every stored message again)"),
    "latest": _("the latest offset (skip the backlog)"),
    "offset": _(
        "one queue's offset"
    ),  # online members get it pushed by that queue's broker (RocketMQ 5's queueId/offset)
}
RESET_TO = tuple(RESET_TO_LABELS)
LATEST_TIMESTAMP = -1  # what RocketMQ's broker reads as "every queue's max offset"


@dataclass(frozen=True)
class ResetTarget:
    """A checked reset target; ``timestamp_ms`` is set for time and now (now: when it was asked)."""

    to: str
    timestamp_ms: int | None = None
    broker_name: str | None = None
    queue_id: int | None = None
    offset: int | None = None

    @property
    def broker_timestamp(self) -> int:
        """The timestamp the brokers' reset takes: 0 earliest, -1 latest, else the time."""
        if self.to == "earliest":
            return 0
        if self.to == "latest":
            return LATEST_TIMESTAMP
        if self.timestamp_ms is None:
            raise ValueError(f"a reset to {self.to} has no timestamp")
        return self.timestamp_ms

    @property
    def time(self) -> datetime | None:
        return None if self.timestamp_ms is None else datetime.fromtimestamp(self.timestamp_ms / 1000, tz=timezone.utc)

    def one_queue(self) -> tuple[str, int, int]:
        """(broker, queue id, offset) of a reset to an offset, which names all three; ValueError for another."""
        if self.broker_name is None or self.queue_id is None or self.offset is None:
            raise ValueError(f"a reset to {self.to} names no broker, queue and offset")
        return self.broker_name, self.queue_id, self.offset

    def label(self) -> str:
        """``2024-05-01 12:00:00 UTC``, ``now (…)``, ``the earliest offset``, ``offset 5 of broker-a queue 3``."""
        if self.to == "offset":
            return f"offset {self.offset} of {self.broker_name} queue {self.queue_id}"
        if self.to in ("earliest", "latest"):
            return f"the {self.to} offset"
        stamp = self.time.strftime("%Y-%m-%d %H:%M:%S UTC") if self.time else ""
        return f"now ({stamp})" if self.to == "now" else stamp

    def fields(self) -> dict[str, object]:
        """The input fields that ask for this very target again (the page's apply form, the audit)."""
        out: dict[str, object] = {
            "to": "time" if self.to == "now" else self.to
        }  # now, applied: the time shown in the plan
        if self.timestamp_ms is not None:
            out["timestamp"] = self.timestamp_ms
        if self.to == "offset":
            out.update(broker=self.broker_name, queue_id=self.queue_id, offset=self.offset)
        return out


def reset_target(
    to: object = None,
    *,
    timestamp: object = None,
    broker: object = None,
    queue_id: object = None,
    offset: object = None,
    now_ms: int | None = None,
) -> ResetTarget:
    """Check one combination of the reset fields (``to`` defaults to time); InvalidInput names the field."""
    to = "time" if to in (None, "") else to
    if to not in RESET_TO_LABELS:
        raise InvalidInput("to", f"{to!r} is not a reset target; give one of {', '.join(RESET_TO)}.")
    extra = [
        name
        for name, value in (("broker", broker), ("queue_id", queue_id), ("offset", offset))
        if value not in (None, "") and to != "offset"
    ]
    if extra:
        raise InvalidInput(extra[0], f"{extra[0]} is for a reset to one queue's offset (to=offset), not to {to}.")
    if timestamp not in (None, "") and to != "time":
        raise InvalidInput("timestamp", f"a reset to {to} takes no timestamp; give to=time for a time.")
    if to == "time":
        if timestamp in (None, ""):
            raise InvalidInput("timestamp", "give the time to reset to (or to=now, earliest, latest or offset).")
        at = parse_time_ms(timestamp, "timestamp")
        now = int(time.time() * 1000) if now_ms is None else now_ms
        if at > now:  # the brokers would answer each queue's end: a reset that looks applied and moves nothing back
            raise InvalidInput(
                "timestamp", f"{_when(at)} is in the future; give a time up to now (to=latest skips the whole backlog)."
            )
        return ResetTarget("time", at)
    if to == "now":
        return ResetTarget("now", int(time.time() * 1000) if now_ms is None else now_ms)
    if to != "offset":
        return ResetTarget(to)
    if not isinstance(broker, str) or not broker.strip():
        raise InvalidInput("broker", "give the broker of the queue whose offset to set.")
    return ResetTarget(
        "offset", broker_name=broker.strip(), queue_id=_whole("queue_id", queue_id), offset=_whole("offset", offset)
    )


def _when(ms: int) -> str:
    try:
        return f"{datetime.fromtimestamp(ms / 1000, tz=timezone.utc):%Y-%m-%d %H:%M:%S} UTC"
    except (OverflowError, ValueError, OSError):
        return f"{ms} ms since the epoch"


def _whole(name: str, value: object) -> int:
    if isinstance(value, bool) or value in (None, ""):
        raise InvalidInput(name, f"give {name} as a whole number, 0 or more.")
    try:
        number = int(value) if isinstance(value, (int, str)) else None
    except ValueError:
        number = None
    if number is None or number < 0 or number > 2**63 - 1:
        raise InvalidInput(name, f"{value!r} is not a whole number from 0 to 2^63-1.")
    return number
