"""The allocation strategy a consumer takes, and the engine's built-in AVG.

The engine never imports ``consumers.allocation`` (the full set of RocketMQ strategies lives
there); a consumer takes any object with RocketMQ's ``AllocateMessageQueueStrategy`` shape
(:class:`AllocateStrategy`), for example ``consumers.allocation.get_strategy("CONSISTENT_HASH")``.
When none is given it uses :class:`AllocateMessageQueueAveragely`, RocketMQ's default.

Both lists arrive sorted by :func:`~brokers.engine.common.rebalance_order.sort_for_rebalance`
(queues by topic, broker name, queue id; client ids; strings in Java's UTF-16 order), as
``RebalanceImpl.rebalanceByTopic`` sorts them; a strategy never sorts.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.rebalance_order import sort_for_rebalance  # re-exported: the one ordering (Java's)

__all__ = ["AllocateMessageQueueAveragely", "AllocateStrategy", "sort_for_rebalance"]


@runtime_checkable
class AllocateStrategy(Protocol):
    """RocketMQ's AllocateMessageQueueStrategy: which of ``mq_all`` the client ``current_cid`` consumes."""

    @property
    def name(self) -> str: ...

    def allocate(self, consumer_group: str, current_cid: str, mq_all: Sequence[MessageQueue],
                 cid_all: Sequence[str]) -> list[MessageQueue]: ...


class AllocateMessageQueueAveragely:
    """AVG: one contiguous block of the sorted queues per client, the first ``Q mod C`` one longer.

    With Q queues, C clients and own index i, m = Q mod C: size = 1 if Q <= C else Q // C + (i < m);
    start = i * size if i < m else i * size + m; take min(size, Q - start) queues. E.g. 8 queues,
    3 clients: [0, 1, 2], [3, 4, 5], [6, 7].
    """

    name = "AVG"

    def allocate(self, consumer_group: str, current_cid: str, mq_all: Sequence[MessageQueue],
                 cid_all: Sequence[str]) -> list[MessageQueue]:
        if not current_cid or not mq_all or not cid_all:
            raise ValueError("currentCID, mqAll and cidAll must not be empty")
        if current_cid not in cid_all:
            return []
        q, c, i = len(mq_all), len(cid_all), list(cid_all).index(current_cid)
        m = q % c
        size = 1 if q <= c else q // c + (1 if i < m else 0)
        start = i * size if i < m else i * size + m
        return list(mq_all[start:start + max(0, min(size, q - start))])

    def __repr__(self) -> str:
        return "AllocateMessageQueueAveragely()"
