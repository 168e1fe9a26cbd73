"""What lowering a topic's read queues (or taking its read permission away) hides, and the refusal that names it.

Consumers read queue ids 0 .. read_queue_nums - 1 only: lowering broker-a's read queues from 6 to
2 leaves the messages of its queues 2..5 on disk, where no consumer (and no console page) reaches
them. A perm without the read bit (``-W-``, 2) hides every queue of that broker the same way
(consumers are refused NO_PERMISSION). An edit that does either is refused with the count per
broker unless the operator confirms that very count; safe shrink (topics.services.topic_shrink)
is the way that loses nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.urls import reverse

from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.perm import PERM_RW, is_readable
from brokers.gateway.queues import max_offsets, min_offsets
from console.errors import InvalidInput

CONFIRM_FIELD = "confirm_unreachable_messages"


@dataclass(frozen=True)
class ReadQueueCut:
    """One broker's read queues going from ``read_from`` down to ``read_to``, and the messages
    (max offset - min offset, over queue ids read_to .. read_from - 1) no consumer reaches after."""

    broker_name: str
    read_from: int
    read_to: int
    messages: int
    write_to: int = 0  # the write queues after the edit: above read_to, producers keep filling hidden queues
    read_perm_taken: bool = False  # hidden because the edit takes the read permission away, not by a lower count

    @property
    def keeps_writing(self) -> bool:
        return self.write_to > self.read_to

    @property
    def queues(self) -> str:
        """``queue 3`` or ``queues 2-5``: the queue ids taken away."""
        last = self.read_from - 1
        where = f"queue {last}" if last == self.read_to else f"queues {self.read_to}-{last}"
        return f"{where}, no read permission" if self.read_perm_taken else where


@dataclass(frozen=True)
class UnreachableMessages:
    """What an edit of ``topic`` hides: the cuts of the brokers whose read queues go down."""

    topic: str
    cuts: tuple[ReadQueueCut, ...]

    @property
    def total(self) -> int:
        return sum(c.messages for c in self.cuts)

    @property
    def hiding(self) -> tuple[ReadQueueCut, ...]:
        return tuple(c for c in self.cuts if c.messages)

    @property
    def perm_only(self) -> bool:
        """Every broker that hides messages does so because it loses the read permission."""
        return all(c.read_perm_taken for c in self.hiding)

    @property
    def shrink_target(self) -> int | None:
        """The safe shrink's target when every broker that hides messages goes to the same count."""
        if any(c.read_perm_taken for c in self.hiding):
            return None  # shrinking does not help a broker that stops being readable
        targets = {c.read_to for c in self.hiding}
        return targets.pop() if len(targets) == 1 else None

    @property
    def shrink_url(self) -> str:
        url = reverse("topics:shrink", kwargs={"name": self.topic})
        return f"{url}?target_queue_nums={self.shrink_target}" if self.shrink_target is not None else url

    def summary(self) -> str:
        """``broker-a: 2 (queues 2-3), broker-b: 1 (queue 3)``."""
        return ", ".join(f"{c.broker_name}: {c.messages} ({c.queues})" for c in self.hiding)

    @property
    def still_written(self) -> tuple[ReadQueueCut, ...]:
        """Brokers whose producers would go on writing to queues no consumer reads."""
        return tuple(c for c in self.hiding if c.keeps_writing)


def _plural(n: int) -> str:
    return f"{n} message{'s' if n != 1 else ''}"


class UnconfirmedUnreachable(InvalidInput):
    """An edit would hide messages and ``confirm_unreachable_messages`` does not equal their count (400)."""

    def __init__(self, hidden: UnreachableMessages, confirmed: int | None) -> None:
        said = "" if confirmed is None else f"you confirmed {confirmed}, but "
        if hidden.perm_only:
            reason = (
                f"{said}taking the read permission away makes {_plural(hidden.total)} unreachable for every consumer "
                f"({hidden.summary()}). Take the write permission away first (perm 4, R--) and let consumers drain "
                f"the queues, or give {CONFIRM_FIELD} = {hidden.total} to hide them anyway."
            )
        else:
            reason = (
                f"{said}lowering the read queues makes {_plural(hidden.total)} unreachable for every consumer "
                f"({hidden.summary()}). Use safe shrink ({hidden.shrink_url}) to lower the write queues first and "
                f"let consumers drain the tail queues, or give {CONFIRM_FIELD} = {hidden.total} to hide them anyway."
            )
        if hidden.still_written:
            reason += (
                " Producers would also go on writing to hidden queues (write queues above read queues on "
                + ", ".join(c.broker_name for c in hidden.still_written)
                + ")."
            )
        super().__init__(CONFIRM_FIELD, reason)
        self.hidden = hidden
        self.confirmed = confirmed


@dataclass(frozen=True)
class QueueEdit:
    """One broker's read queues and perm now and after an edit (its master's address to count at)."""

    broker_name: str
    addr: str
    read_now: int
    read_after: int
    write_after: int
    perm_now: int = PERM_RW
    perm_after: int = PERM_RW

    @property
    def readable_now(self) -> int:
        return self.read_now if is_readable(self.perm_now) else 0

    @property
    def readable_after(self) -> int:
        return self.read_after if is_readable(self.perm_after) else 0


def unreachable_messages(topic: str, edits: list[QueueEdit]) -> UnreachableMessages:
    """Count, live from the brokers, the messages each edit would hide (the queues readable now
    and not after): one GET_MIN_OFFSET and one GET_MAX_OFFSET per queue taken away, all at once."""
    cuts = [e for e in edits if e.readable_after < e.readable_now]
    tail = {
        MessageQueue(topic, e.broker_name, i): e.addr for e in cuts for i in range(e.readable_after, e.readable_now)
    }
    if not tail:
        return UnreachableMessages(topic, ())
    lows, highs = min_offsets(tail), max_offsets(tail)
    out = []
    for e in cuts:
        hidden = sum(max(highs[mq] - lows[mq], 0) for mq in tail if mq.broker_name == e.broker_name)
        write_to = e.write_after if is_readable(e.perm_after) else 0
        out.append(
            ReadQueueCut(
                e.broker_name,
                e.readable_now,
                e.readable_after,
                hidden,
                write_to,
                read_perm_taken=not is_readable(e.perm_after),
            )
        )
    return UnreachableMessages(topic, tuple(out))


def check_confirmed(hidden: UnreachableMessages, confirmed: int | None) -> None:
    """Refuse (UnconfirmedUnreachable) unless nothing is hidden or ``confirmed`` equals the count."""
    if hidden.total and confirmed != hidden.total:
        raise UnconfirmedUnreachable(hidden, confirmed)
