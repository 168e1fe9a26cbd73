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

    @property
    def perm_string(self) -> str:
        return perm_to_string(self.perm)


@dataclass(frozen=True)
class TopicRow:
    name: str
    type: str
    brokers: tuple[BrokerQueues, ...]

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
