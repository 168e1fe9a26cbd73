"""Frozen dataclasses between the consumer-group selectors/services and the templates/serializers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from brokers.engine.common.constants import DLQ_GROUP_TOPIC_PREFIX, RETRY_GROUP_TOPIC_PREFIX
from brokers.engine.common.message_queue import MessageQueue
from consumers.allocation import AssignmentCheck
from consumers.reset_target import ResetTarget

USER, SYSTEM = "user", "system"
GROUP_KINDS = (USER, SYSTEM)
CONSUME_TYPES = {"CONSUME_PASSIVELY": "PUSH", "CONSUME_ACTIVELY": "PULL"}


def _utc(ms: int) -> datetime | None:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc) if ms > 0 else None


# -- the list --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GroupRow:
    """One group of the list: what the brokers' bulk answers say, and its members when looked up.

    ``members`` is None when the row's connections were not looked up (it is not on the page shown).
    """

    name: str
    kind: str  # user, system
    brokers: tuple[str, ...]  # broker names that know the group
    topics: tuple[str, ...]  # topics it has committed offsets for
    lag: int
    tps: (
        float | None
    )  # the brokers' consumeTps: messages pulled per second over the last minute (None: no broker gave it)
    consume_enable: bool = True
    members: int | None = None
    consume_type: str | None = None  # PUSH, PULL
    message_model: str | None = None  # CLUSTERING, BROADCASTING
    version: str | None = None
    strategy: str | None = None  # as the members reported it to the last live check (None: unknown)
    delay: float | None = (
        None  # s: now - the lastTimestamp behind its backlog (0 none; None unknown: no consume stats, nothing consumed yet)
    )

    @property
    def online(self) -> bool:
        return bool(self.members)


@dataclass(frozen=True)
class GroupList:
    rows: tuple[GroupRow, ...]
    total: int  # groups before filtering
    broker_names: tuple[str, ...]
    errors: tuple[str, ...] = ()
    stats_sources: tuple[str, ...] = ()  # how lag was read: GET_BROKER_CONSUME_STATS or GET_TOPIC_STATS_INFO
    asked: tuple[
        tuple[str, str], ...
    ] = ()  # (address, broker name) of the brokers asked (a slave for a master that is down)


# -- one group -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Subscription:
    topic: str
    expression: str  # "*" or "tagA || tagB" or SQL text
    expression_type: str = "TAG"

    @property
    def text(self) -> str:
        return f"{self.expression_type}:{self.expression}"


@dataclass(frozen=True)
class Member:
    client_id: str
    client_addr: str
    language: str
    version: str
    brokers: tuple[str, ...]  # broker addresses it is connected to


@dataclass(frozen=True)
class QueueProgress:
    """One queue of a group's progress (GET_CONSUME_STATS), with the member that holds it."""

    topic: str
    broker_name: str
    queue_id: int
    broker_offset: int
    consumer_offset: int
    last_timestamp: int  # ms: store time of the message at consumer_offset - 1; 0 unknown
    owner: str | None = None  # the member whose running info lists the queue

    @property
    def lag(self) -> int:
        return self.broker_offset - self.consumer_offset

    @property
    def last_time(self) -> datetime | None:
        return _utc(self.last_timestamp)

    @property
    def queue(self) -> MessageQueue:
        return MessageQueue(self.topic, self.broker_name, self.queue_id)


@dataclass(frozen=True)
class GroupProgress:
    """consumerProgress: every queue of the group (or of one topic), its TPS and total lag."""

    group: str
    topic: str | None
    queues: tuple[QueueProgress, ...]
    consume_tps: float
    delay: float | None = None  # s: as GroupRow.delay, over these queues

    @property
    def diff_total(self) -> int:
        return sum(q.lag for q in self.queues)


@dataclass(frozen=True)
class GroupDetail:
    name: str
    online: bool
    consume_type: str | None
    message_model: str | None
    consume_from_where: str | None
    members: tuple[Member, ...]
    subscriptions: tuple[Subscription, ...]
    progress: GroupProgress
    brokers: tuple[str, ...]  # broker names that know the group
    not_answering: tuple[str, ...] = ()  # members whose running info did not come (owners unknown)
    errors: tuple[str, ...] = ()

    @property
    def topics(self) -> tuple[str, ...]:
        return tuple(sorted({s.topic for s in self.subscriptions} | {q.topic for q in self.progress.queues}))

    @property
    def subscribed_topics(self) -> tuple[str, ...]:
        """The topics the group reads messages of: its subscriptions (else the topics it has offsets on), retry and DLQ topics left out."""

        def own(t: str) -> bool:
            return not t.startswith((RETRY_GROUP_TOPIC_PREFIX, DLQ_GROUP_TOPIC_PREFIX))

        return tuple(
            sorted(
                {s.topic for s in self.subscriptions if own(s.topic)}
                or {q.topic for q in self.progress.queues if own(q.topic)}
            )
        )


# -- offset reset ----------------------------------------------------------------------------------------

ONLINE, OFFLINE = "online", "offline"


@dataclass(frozen=True)
class QueueReset:
    broker_name: str
    queue_id: int
    broker_offset: int
    before: int  # committed offset; -1 when none
    after: int

    @property
    def change(self) -> int:
        """Messages consumed again (positive) or skipped (negative)."""
        return (self.before if self.before >= 0 else 0) - self.after


@dataclass(frozen=True)
class OffsetResetPlan:
    """What a reset to ``target`` (consumers.reset_target) does, queue by queue, and how.

    ``mode`` online: members are connected, the brokers push the new offsets to them
    (INVOKE_BROKER_TO_RESET_OFFSET; RocketMQ needs a committed offset on every queue for that,
    ``blocked`` says which lack one); offline: the console writes each queue's offset
    (UPDATE_CONSUMER_OFFSET).
    """

    group: str
    topic: str
    target: ResetTarget
    mode: str
    queues: tuple[QueueReset, ...]
    blocked: str = ""
    applied: bool = False

    @property
    def timestamp_ms(self) -> int | None:
        """The time reset to (time, now); None for earliest, latest and one queue's offset."""
        return self.target.timestamp_ms

    @property
    def time(self) -> datetime | None:
        return self.target.time


# -- the live check --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MemberReport:
    """What one member says it holds (GET_CONSUMER_RUNNING_INFO), or that it did not answer."""

    client_id: str
    answered: bool
    strategy: str  # a registry name, or "(unknown)"
    subscription: str  # TAG:*, or "(not subscribed)"
    queues: tuple[MessageQueue, ...]
    error: str = ""


@dataclass(frozen=True)
class LiveCheck:
    """One topic of a live group: members' reports checked against each other and the strategy."""

    group: str
    topic: str
    queues: tuple[MessageQueue, ...]
    members: tuple[MemberReport, ...]
    check: AssignmentCheck | None  # None when no member answered

    @property
    def not_answering(self) -> tuple[str, ...]:
        return tuple(m.client_id for m in self.members if not m.answered)

    @property
    def unowned(self) -> tuple[MessageQueue, ...]:
        return self.check.unowned if self.check else ()

    @property
    def doubly_owned(self) -> tuple:
        return self.check.doubly_owned if self.check else ()

    @property
    def consistent(self) -> bool:
        return bool(self.check and self.check.consistent and not self.not_answering)
