"""A topic's queue layout: which brokers serve it, how many read queues each, with which perm.

Consumers see the queues RocketMQ's ``MQClientInstance.topicRouteData2TopicSubscribeInfo``
derives from the route: for every broker entry (``QueueData``) whose perm has the READ bit
(4), queue ids ``0 .. readQueueNums - 1``; a broker without READ contributes nothing, and
write queue counts play no part. A :class:`QueueLayout` holds that per-broker view, live (from
route data) or hypothetical (``brokers x counts``), and derives its :class:`MessageQueue` list.
The what-if edits (take a broker down, change a count) return new layouts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.perm import PERM_RW, is_readable
from brokers.engine.client.allocation.errors import AllocationError
from brokers.engine.client.allocation.strategy import sort_message_queues

__all__ = ["BrokerQueues", "QueueLayout"]


@dataclass(frozen=True)
class BrokerQueues:
    """One broker's share of a topic: RocketMQ's ``QueueData`` as a consumer reads it."""

    broker_name: str
    read_queue_nums: int
    perm: int = PERM_RW

    def __post_init__(self) -> None:
        if not self.broker_name:
            raise AllocationError("broker_name is empty")
        if isinstance(self.read_queue_nums, bool) or not isinstance(self.read_queue_nums, int):
            raise AllocationError(f"read_queue_nums must be an int, got {self.read_queue_nums!r}")
        if self.read_queue_nums < 0:
            raise AllocationError(f"read_queue_nums must be >= 0, got {self.read_queue_nums}")

    @property
    def readable(self) -> bool:
        """Return whether consumers see this broker's queues (perm READ bit set)."""
        return is_readable(self.perm)

    def message_queues(self, topic: str) -> tuple[MessageQueue, ...]:
        """Return the queues consumers see on this broker (none without READ)."""
        if not self.readable:
            return ()
        return tuple(MessageQueue(topic, self.broker_name, i) for i in range(self.read_queue_nums))


def _field(item: Any, snake: str, camel: str) -> Any:
    if isinstance(item, Mapping):
        return item[camel] if camel in item else item[snake]
    return getattr(item, snake)


@dataclass(frozen=True)
class QueueLayout:
    """The brokers of one topic and their read queues (hashable, comparable by value)."""

    topic: str
    brokers: tuple[BrokerQueues, ...] = ()

    def __post_init__(self) -> None:
        if not self.topic:
            raise AllocationError("topic is empty")
        object.__setattr__(self, "brokers", tuple(self.brokers))

    @classmethod
    def hypothetical(cls, topic: str, queue_counts: Mapping[str, int]) -> QueueLayout:
        """Build a layout from ``{broker_name: read queue count}``, every broker readable."""
        return cls(topic, tuple(BrokerQueues(b, n) for b, n in queue_counts.items()))

    @classmethod
    def from_queue_datas(cls, topic: str, queue_datas: Iterable[Any]) -> QueueLayout:
        """Build a layout from route ``QueueData`` entries.

        Each entry may be a mapping in RocketMQ's JSON form (``brokerName``,
        ``readQueueNums``, ``perm``) or snake_case, or an object with ``broker_name``,
        ``read_queue_nums`` and ``perm`` attributes.
        """
        return cls(
            topic,
            tuple(
                BrokerQueues(
                    str(_field(qd, "broker_name", "brokerName")),
                    int(_field(qd, "read_queue_nums", "readQueueNums")),
                    int(_field(qd, "perm", "perm")),
                )
                for qd in queue_datas
            ),
        )

    @property
    def broker_names(self) -> tuple[str, ...]:
        """Return every broker of the layout, readable or not, in layout order."""
        return tuple(dict.fromkeys(b.broker_name for b in self.brokers))

    def message_queues(self) -> tuple[MessageQueue, ...]:
        """Return the readable queues, de-duplicated and sorted as the client sorts them."""
        seen: set[MessageQueue] = set()
        for broker in self.brokers:
            seen.update(broker.message_queues(self.topic))
        return tuple(sort_message_queues(seen))

    def without_brokers(self, broker_names: Iterable[str]) -> QueueLayout:
        """Return the layout with ``broker_names`` gone (a broker down or removed)."""
        gone = set(broker_names)
        unknown = gone - set(self.broker_names)
        if unknown:
            raise AllocationError(f"no such broker in topic {self.topic}: {sorted(unknown)}")
        return replace(self, brokers=tuple(b for b in self.brokers if b.broker_name not in gone))

    def with_queue_counts(self, queue_counts: Mapping[str, int]) -> QueueLayout:
        """Return the layout with new read queue counts; an unknown broker is added (perm RW)."""
        brokers = [
            replace(b, read_queue_nums=queue_counts[b.broker_name]) if b.broker_name in queue_counts else b
            for b in self.brokers
        ]
        known = set(self.broker_names)
        brokers.extend(BrokerQueues(name, n) for name, n in queue_counts.items() if name not in known)
        return replace(self, brokers=tuple(brokers))
