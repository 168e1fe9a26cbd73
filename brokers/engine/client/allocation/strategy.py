"""The strategy Protocol, RocketMQ's argument check and ordering, and ``allocate_all``.

Every RocketMQ 4.x/5.x consumer computes its own share of a topic's queues: it sorts the
topic's queues and the group's client ids, then asks its strategy for the queues of its own
client id (``RebalanceImpl.rebalanceByTopic``). Nobody coordinates; the group stays whole only
because every member runs the same pure function over the same sorted input. This module holds
the pieces every strategy shares:

* :class:`AllocateMessageQueueStrategy`, the Protocol (RocketMQ's interface of that name), and
  :class:`GroupAllocateMessageQueueStrategy`, which adds a whole-group ``allocate_group``;
* :func:`check_arguments`, the rules of RocketMQ's ``AbstractAllocateMessageQueueStrategy.check``;
* :func:`sort_for_rebalance`, the ordering the client applies before it calls a strategy (defined in
  :mod:`brokers.engine.common.rebalance_order`, shared with the engine's client);
* :func:`allocate_all`, the whole group at once.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Protocol, runtime_checkable

from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.rebalance_order import (  # re-exported: the engine's one ordering
    java_string_key,
    sort_cids,
    sort_for_rebalance,
    sort_message_queues,
)
from brokers.engine.client.allocation.errors import AllocationError

__all__ = [
    "AllocateMessageQueueStrategy",
    "Assignment",
    "GroupAllocateMessageQueueStrategy",
    "allocate_all",
    "check_arguments",
    "check_group_arguments",
    "group_allocate",
    "java_string_key",
    "sort_cids",
    "sort_for_rebalance",
    "sort_message_queues",
    "unique_cids",
]

log = logging.getLogger(__name__)

# cid -> the queues that cid would consume, in the strategy's own order.
Assignment = dict[str, list[MessageQueue]]


@runtime_checkable
class AllocateMessageQueueStrategy(Protocol):
    """Pick the queues one client consumes; mirror of RocketMQ's interface of the same name.

    This is all the engine's consumer client needs. Strategies that can also compute the whole
    group in one pass implement :class:`GroupAllocateMessageQueueStrategy`; every built-in does.
    """

    @property
    def name(self) -> str:
        """Return RocketMQ's ``getName()``, e.g. ``"AVG"`` or ``"MACHINE_ROOM_NEARBY-AVG"``."""
        ...

    def allocate(
        self,
        consumer_group: str,
        current_cid: str,
        mq_all: Sequence[MessageQueue],
        cid_all: Sequence[str],
    ) -> list[MessageQueue]:
        """Return the queues ``current_cid`` consumes; never sort, exactly as RocketMQ."""
        ...


@runtime_checkable
class GroupAllocateMessageQueueStrategy(AllocateMessageQueueStrategy, Protocol):
    """A strategy that also allocates the whole group at once."""

    def allocate_group(
        self,
        consumer_group: str,
        mq_all: Sequence[MessageQueue],
        cid_all: Sequence[str],
    ) -> Assignment:
        """Return ``{cid: allocate(consumer_group, cid, mq_all, cid_all)}`` for each distinct cid.

        Compute it in one pass; raise what ``allocate`` would raise for some cid. An empty
        ``cid_all`` gives ``{}`` (there is nobody to call ``allocate`` for).
        """
        ...


def check_arguments(
    consumer_group: str,
    current_cid: str,
    mq_all: Sequence[MessageQueue] | None,
    cid_all: Sequence[str] | None,
) -> bool:
    """Apply RocketMQ's ``check``: raise on empty input, return False for a foreign cid.

    Java throws ``IllegalArgumentException`` for an empty current cid, an empty (or null)
    ``mqAll`` and an empty ``cidAll``, in that order; a current cid missing from ``cidAll`` is
    only logged ("[BUG]") and the strategy returns an empty list.
    """
    if not current_cid:
        raise AllocationError("currentCID is empty")
    if not mq_all:
        raise AllocationError("mqAll is null or mqAll empty")
    if not cid_all:
        raise AllocationError("cidAll is null or cidAll empty")
    if current_cid not in cid_all:
        log.info(
            "[BUG] ConsumerGroup: %s The consumerId: %s not in cidAll: %s",
            consumer_group,
            current_cid,
            list(cid_all),
        )
        return False
    return True


def check_group_arguments(mq_all: Sequence[MessageQueue] | None, cid_all: Sequence[str]) -> bool:
    """Raise what :func:`check_arguments` would raise for some cid of ``cid_all``.

    Return False when ``cid_all`` is empty (no per-cid call would happen), True otherwise.
    """
    if not cid_all:
        return False
    if any(not cid for cid in cid_all):
        raise AllocationError("currentCID is empty")
    if not mq_all:
        raise AllocationError("mqAll is null or mqAll empty")
    return True


def unique_cids(cid_all: Iterable[str]) -> list[str]:
    """Return the distinct cids in first-seen order (``indexOf`` finds the first duplicate)."""
    return list(dict.fromkeys(cid_all))


def group_allocate(
    strategy: AllocateMessageQueueStrategy,
    consumer_group: str,
    mq_all: Sequence[MessageQueue],
    cid_all: Sequence[str],
) -> Assignment:
    """Allocate for the whole group without sorting; fall back to per-cid calls.

    A strategy without ``allocate_group`` (a third party's, say) still works, at per-cid cost.
    """
    whole = getattr(strategy, "allocate_group", None)
    if whole is not None:
        assignment: Assignment = whole(consumer_group, mq_all, cid_all)
        return assignment
    return {cid: list(strategy.allocate(consumer_group, cid, mq_all, cid_all) or []) for cid in unique_cids(cid_all)}


def allocate_all(
    strategy: AllocateMessageQueueStrategy,
    mq_all: Iterable[MessageQueue],
    cid_all: Iterable[str],
    *,
    consumer_group: str = "",
) -> Assignment:
    """Return ``{cid: queues}`` for the whole group, with RocketMQ's sorting applied first.

    The result equals calling ``strategy.allocate(consumer_group, cid, mq_all, cid_all)`` for
    every cid on the sorted lists, and is computed in one pass. Keys follow the sorted cid
    order; a cid listed twice appears once. Errors are RocketMQ's (:class:`AllocationError`).

    Example (AVG, the seed articles' case)::

        >>> from brokers.engine.client.allocation import get_strategy
        >>> mqs = [MessageQueue("T", b, i) for b in ("broker_a", "broker_b", "broker_c")
        ...        for i in range(3)]
        >>> out = allocate_all(get_strategy("AVG"), mqs, ["c3", "c1", "c0", "c2"])
        >>> [(cid, [f"{q.broker_name[-1]}{q.queue_id}" for q in qs]) for cid, qs in out.items()]
        [('c0', ['a0', 'a1', 'a2']), ('c1', ['b0', 'b1']), ('c2', ['b2', 'c0']), ('c3', ['c1', 'c2'])]
    """
    mqs, cids = sort_for_rebalance(mq_all, cid_all)
    return group_allocate(strategy, consumer_group, mqs, cids)
