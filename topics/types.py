"""Frozen dataclasses between the topic services/selectors and the templates/serializers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from brokers.engine.common.perm import perm_to_string

# topic types of the list filter
NORMAL, RETRY, DLQ, SYSTEM = "normal", "retry", "dlq", "system"
TOPIC_TYPES = (NORMAL, RETRY, DLQ, SYSTEM)


# -- input -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class QueueSpec:
    """Queue counts and perm wanted on one broker; None keeps the current value (an update)."""

    read_queue_nums: int | None = None
    write_queue_nums: int | None = None
    perm: int | None = None


@dataclass(frozen=True)
class TopicSpec:
    """A topic as asked for: cluster mode (``cluster`` and one QueueSpec for all its masters)
    or broker mode (``brokers``: broker name -> QueueSpec)."""

    name: str
    cluster: str | None = None
    queues: QueueSpec = QueueSpec()  # cluster mode, and the defaults of broker mode
    brokers: tuple[tuple[str, QueueSpec], ...] = ()  # broker mode
    # RocketMQ 5's message.type attribute (NORMAL, FIFO, DELAY, TRANSACTION) on every broker
    # written to; None leaves it as it is (a new topic is then NORMAL)
    message_type: str | None = None

    @property
    def mode(self) -> str:
        return "cluster" if self.cluster is not None else "broker"


# -- output ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BrokerQueues:
    """A topic's queues on one broker."""

    broker_name: str
    cluster: str
    addr: str
    read_queue_nums: int
    write_queue_nums: int
    perm: int
    message_type: str | None = None  # the broker's message.type of the topic (NORMAL when unset); None: not read

    @property
    def perm_string(self) -> str:
        return perm_to_string(self.perm)


def _message_type(brokers: tuple[BrokerQueues, ...]) -> str:
    """The topic's message type, or the brokers' types joined by " / " when they differ; "" when none was read."""
    return " / ".join(sorted({b.message_type for b in brokers if b.message_type}))


@dataclass(frozen=True)
class TopicRow:
    name: str
    type: str
    brokers: tuple[BrokerQueues, ...]

    @property
    def message_type(self) -> str:
        return _message_type(self.brokers)

    def on(self, broker_name: str) -> BrokerQueues | None:
        return next((b for b in self.brokers if b.broker_name == broker_name), None)


@dataclass(frozen=True)
class TopicListRow:
    """A list row with one cell per broker column (None where the topic is not on that broker)."""

    topic: TopicRow
    cells: tuple[BrokerQueues | None, ...]


@dataclass(frozen=True)
class TopicList:
    rows: tuple[TopicRow, ...]
    broker_names: tuple[str, ...]  # the columns: every master that answered
    total: int  # topics before filtering
    errors: tuple[str, ...] = ()  # brokers that did not answer

    def table(self, rows: tuple[TopicRow, ...] | list[TopicRow]) -> list[TopicListRow]:
        return [TopicListRow(r, tuple(r.on(b) for b in self.broker_names)) for r in rows]


@dataclass(frozen=True)
class TopicDetail:
    name: str
    type: str
    brokers: tuple[BrokerQueues, ...]

    @property
    def message_type(self) -> str:
        return _message_type(self.brokers)

    @property
    def clusters(self) -> tuple[str, ...]:
        return tuple(sorted({b.cluster for b in self.brokers}))


@dataclass(frozen=True)
class QueueStatus:
    broker_name: str
    queue_id: int
    min_offset: int
    max_offset: int
    last_update_timestamp: int  # ms; 0 when the queue is empty

    @property
    def messages(self) -> int:
        return self.max_offset - self.min_offset

    @property
    def last_update(self) -> datetime | None:
        if not self.last_update_timestamp:
            return None
        return datetime.fromtimestamp(self.last_update_timestamp / 1000, tz=timezone.utc)


@dataclass(frozen=True)
class TopicStatus:
    name: str
    queues: tuple[QueueStatus, ...]

    @property
    def total_messages(self) -> int:
        return sum(q.messages for q in self.queues)


@dataclass(frozen=True)
class RouteBroker:
    broker_name: str
    cluster: str
    addrs: tuple[tuple[int, str], ...]  # (broker id, address), master (0) first
    read_queue_nums: int
    write_queue_nums: int
    perm: int

    @property
    def perm_string(self) -> str:
        return perm_to_string(self.perm)


@dataclass(frozen=True)
class TopicRoute:
    name: str
    brokers: tuple[RouteBroker, ...]
    order_topic_conf: str | None = None


@dataclass(frozen=True)
class TopicConsumers:
    name: str
    groups: tuple[str, ...]
    errors: tuple[str, ...] = ()
    rows: tuple[TopicConsumerRow, ...] = ()  # per group: members, lag and TPS in this topic


@dataclass(frozen=True)
class TopicConsumerRow:
    """One group consuming the topic: its online members, and its lag and consume TPS in this topic
    (``mqadmin consumerProgress -g group -t topic``); None where it was not asked or not answered."""

    group: str
    members: int | None
    lag: int | None
    tps: float | None
    error: str = ""


@dataclass(frozen=True)
class TopicDeletion:
    name: str
    brokers: tuple[str, ...]  # broker names it was deleted on
    scope: str  # all, cluster:<name>, broker:<name>
    remaining: tuple[str, ...] = ()  # broker names it is still on


@dataclass(frozen=True)
class SentMessage:
    topic: str
    msg_id: str
    offset_msg_id: str
    broker_name: str
    queue_id: int
    queue_offset: int
    status: str


# -- safe shrink -----------------------------------------------------------------------------------

SHRINK_PLAN, SHRINK_WRITE, SHRINK_READ, SHRINK_DONE = "plan", "write", "read", "done"
SHRINK_STEPS = (SHRINK_WRITE, SHRINK_READ)


@dataclass(frozen=True)
class TailGroup:
    """One consumer group's position in a tail queue."""

    group: str
    consumer_offset: int  # committed; -1 when none
    lag: int  # messages it has still to consume there


@dataclass(frozen=True)
class TailQueue:
    """A queue the shrink takes away: where it stands, and where each group stands in it."""

    broker_name: str
    queue_id: int
    min_offset: int
    max_offset: int
    last_store_timestamp: int  # ms of its last message; 0 when empty
    groups: tuple[TailGroup, ...]

    @property
    def drained(self) -> bool:
        return all(g.lag == 0 for g in self.groups)

    @property
    def last_store_time(self) -> datetime | None:
        return (
            datetime.fromtimestamp(self.last_store_timestamp / 1000, tz=timezone.utc)
            if self.last_store_timestamp
            else None
        )


@dataclass(frozen=True)
class ShrinkStatus:
    """Where a safe shrink of ``name`` to ``target_queue_nums`` queues per broker stands.

    ``step`` is the next thing to do: ``write`` (lower the write queues), ``read`` (once every
    group drained the tail queues and producers had time to see the new route: lower the read
    queues), ``done``; ``plan`` when no target is given and none is under way.
    """

    name: str
    target_queue_nums: int | None
    brokers: tuple[BrokerQueues, ...]
    step: str
    tail: tuple[TailQueue, ...] = ()
    groups: tuple[str, ...] = ()
    settle_remaining_s: int = 0
    write_lowered_at: datetime | None = None
    errors: tuple[str, ...] = ()

    @property
    def drained(self) -> bool:
        return all(q.drained for q in self.tail)

    @property
    def messages_left(self) -> int:
        return sum(g.lag for q in self.tail for g in q.groups)

    @property
    def ready(self) -> bool:
        """The read queues may be lowered now without losing a message."""
        return self.step == SHRINK_READ and self.drained and self.settle_remaining_s == 0 and not self.errors

    @property
    def blockers(self) -> tuple[str, ...]:
        """Why the read step must wait, in words."""
        if self.step != SHRINK_READ:
            return ()
        out = [
            f"group {g.group} has {g.lag} message{'s' if g.lag != 1 else ''} left in {q.broker_name} queue {q.queue_id}"
            for q in self.tail
            for g in q.groups
            if g.lag
        ]
        if self.settle_remaining_s:
            out.append(
                f"producers may still write to the tail queues for {self.settle_remaining_s} s (they refresh routes every 30 s)"
            )
        out.extend(self.errors)
        return tuple(out)


# -- messages --------------------------------------------------------------------------------------

BODY_SHOWN_BYTES = 256 * 1024  # of a larger body, pages and the API show this much


def _is_text(data: bytes) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if all(ch.isprintable() or ch in "\n\r\t" for ch in text) else None


PREVIEW_CHARS = 80  # of a body, result lists show this much


def body_preview(body: bytes, size: int) -> str:
    """The first PREVIEW_CHARS characters of a body decoded as UTF-8 (bad bytes as U+FFFD), on one
    line; "binary, N bytes" when it holds control characters (not text at all)."""
    head = body[: PREVIEW_CHARS * 4]
    text = head.decode("utf-8", errors="replace")
    if len(head) < len(body):
        text = text.rstrip("\ufffd")  # a character cut at the end of the head, not a bad byte
    if any(not ch.isprintable() and ch not in "\n\r\t" for ch in text):
        return f"binary, {size} byte{'s' if size != 1 else ''}"
    line = " ".join(text.split())
    return line if len(line) <= PREVIEW_CHARS and len(head) == len(body) else line[:PREVIEW_CHARS] + "\u2026"


@dataclass(frozen=True)
class MessageView:
    """A stored message as the console shows it: where it is, its properties, its body."""

    msg_id: str  # the offset message id (store host + commit log offset)
    topic: str
    broker_name: str
    queue_id: int
    queue_offset: int
    born_timestamp: int
    store_timestamp: int
    born_host: str
    store_host: str
    reconsume_times: int
    properties: tuple[tuple[str, str], ...]
    body: bytes
    body_size: int

    def prop(self, name: str) -> str | None:
        return dict(self.properties).get(name)

    @property
    def uniq_key(self) -> str | None:
        return self.prop("UNIQ_KEY")

    @property
    def tags(self) -> str | None:
        return self.prop("TAGS")

    @property
    def keys(self) -> str | None:
        return self.prop("KEYS")

    @property
    def store_time(self) -> datetime | None:
        return (
            datetime.fromtimestamp(self.store_timestamp / 1000, tz=timezone.utc) if self.store_timestamp > 0 else None
        )

    @property
    def born_time(self) -> datetime | None:
        return datetime.fromtimestamp(self.born_timestamp / 1000, tz=timezone.utc) if self.born_timestamp > 0 else None

    @property
    def truncated(self) -> bool:
        return len(self.body) < self.body_size

    @property
    def body_text(self) -> str | None:
        """The body as text when it is UTF-8 without control characters, else None (show hex)."""
        return _is_text(self.body)

    @property
    def body_preview(self) -> str:
        """One line for result lists: the body's start as text, or "binary, N bytes"."""
        return body_preview(self.body, self.body_size)

    @property
    def body_hex(self) -> str:
        return self.body.hex(" ")

    @property
    def body_encoding(self) -> str:
        return "text" if self.body_text is not None else "hex"


@dataclass(frozen=True)
class MessageList:
    """Messages found by key, or one page of a topic's messages stored in a time range.

    ``total`` counts the messages the store-time search put in the range (a queue's ends may be
    off by one where the search lands on a neighbour; the messages listed are exactly in it).
    """

    topic: str
    messages: tuple[MessageView, ...]
    total: int
    key: str | None = None
    begin_ms: int = 0
    end_ms: int = 0
    page: int = 1
    page_size: int = 0

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.page_size)) if self.page_size else 1
