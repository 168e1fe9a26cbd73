"""Whole-group allocation preview: what a group *would* consume under one strategy.

The console and the API call :func:`preview_allocation` (and, built on it,
:func:`~consumers.allocation.comparison.compare_strategies` for every strategy side by side).
Inputs are a queue layout (a :class:`QueueLayout`, live or hypothetical, or a plain iterable of
:class:`MessageQueue`), client ids (live members or made up) and a strategy.
Outputs are frozen dataclasses; their dict fields are fresh per result, so treat them as
read-only views (``dataclasses.asdict`` works on them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Union

from brokers.engine.common.message_queue import MessageQueue
from consumers.allocation.layout import QueueLayout
from brokers.engine.client.allocation.strategy import (
    AllocateMessageQueueStrategy,
    group_allocate,
    sort_for_rebalance,
)

__all__ = [
    "AllocationPreview",
    "QueueOwnership",
    "QueueSource",
    "build_preview",
    "preview_allocation",
    "queues_of",
]

QueueSource = Union[QueueLayout, Iterable[MessageQueue]]


def queues_of(source: QueueSource) -> list[MessageQueue]:
    """Return the queues a consumer would see for ``source`` (a layout or plain queues)."""
    if isinstance(source, QueueLayout):
        return list(source.message_queues())
    return list(source)


@dataclass(frozen=True)
class QueueOwnership:
    """One queue and the clients holding it (none: unassigned; several: shared)."""

    queue: MessageQueue
    cids: tuple[str, ...]

    @property
    def cid(self) -> str | None:
        """Return the holder (the first one if shared), or None."""
        return self.cids[0] if self.cids else None


@dataclass(frozen=True)
class AllocationPreview:
    """One strategy's allocation of a topic's queues to a group, and its health figures.

    ``assignment`` maps every client (sorted) to its queues in the strategy's order.
    ``queue_owners`` is the other direction, one row per queue of the layout (sorted), then
    any ``foreign_queues`` (handed out but not in the layout; only CONFIG does that).
    ``shared_queues`` are the rows with several holders (CONFIG again, or a broken custom
    strategy). ``balance`` is max minus min of ``queue_counts`` (0 with no clients). Queue-keyed
    views are rows rather than dicts so that ``dataclasses.asdict`` works; ``queue_to_cid``
    gives the dict.
    """

    strategy_name: str
    consumer_group: str
    queues: tuple[MessageQueue, ...]
    cids: tuple[str, ...]
    assignment: dict[str, tuple[MessageQueue, ...]]
    queue_owners: tuple[QueueOwnership, ...]
    queue_counts: dict[str, int]
    balance: int
    idle_consumers: tuple[str, ...]
    unassigned_queues: tuple[MessageQueue, ...]
    shared_queues: tuple[QueueOwnership, ...]
    foreign_queues: tuple[MessageQueue, ...]

    @property
    def queue_to_cid(self) -> dict[MessageQueue, str]:
        """Return queue -> holder for every held queue (the first holder of a shared one)."""
        return {row.queue: row.cids[0] for row in self.queue_owners if row.cids}

    @property
    def every_queue_owned_once(self) -> bool:
        """Return whether each queue has exactly one owner and nothing foreign is handed out."""
        return not (self.unassigned_queues or self.shared_queues or self.foreign_queues)


def build_preview(
    *,
    strategy_name: str,
    queues: Sequence[MessageQueue],
    cids: Sequence[str],
    assignment: Mapping[str, Iterable[MessageQueue]],
    consumer_group: str = "",
) -> AllocationPreview:
    """Derive the figures of an assignment (computed or observed) over ``queues`` and ``cids``.

    Clients of ``assignment`` missing from ``cids`` are added after them.
    """
    all_cids = list(dict.fromkeys([*cids, *assignment]))
    table = {cid: tuple(assignment.get(cid, ())) for cid in all_cids}
    owners: dict[MessageQueue, list[str]] = {}
    for cid, held in table.items():
        for mq in dict.fromkeys(held):
            owners.setdefault(mq, []).append(cid)
    known = set(queues)
    foreign = tuple(mq for mq in owners if mq not in known)
    rows = tuple(QueueOwnership(mq, tuple(owners.get(mq, ()))) for mq in (*queues, *foreign))
    counts = {cid: len(held) for cid, held in table.items()}
    return AllocationPreview(
        strategy_name=strategy_name,
        consumer_group=consumer_group,
        queues=tuple(queues),
        cids=tuple(all_cids),
        assignment=table,
        queue_owners=rows,
        queue_counts=counts,
        balance=(max(counts.values()) - min(counts.values())) if counts else 0,
        idle_consumers=tuple(cid for cid, n in counts.items() if n == 0),
        unassigned_queues=tuple(row.queue for row in rows if not row.cids),
        shared_queues=tuple(row for row in rows if len(row.cids) > 1),
        foreign_queues=foreign,
    )


def preview_allocation(
    *,
    queues: QueueSource,
    cids: Iterable[str],
    strategy: AllocateMessageQueueStrategy,
    consumer_group: str = "",
) -> AllocationPreview:
    """Allocate the whole group as RocketMQ clients would and summarise the result.

    With no queue or no client the strategy is not called: every client (if any) is idle and
    every queue (if any) unassigned. (A Java client handed an empty queue list logs the
    strategy's error and keeps its previous queues; previewing "nothing" is the useful view.)
    """
    mqs, cid_list = sort_for_rebalance(queues_of(queues), cids)
    if mqs and cid_list:
        assignment = group_allocate(strategy, consumer_group, mqs, cid_list)
    else:
        assignment = {}
    return build_preview(
        strategy_name=strategy.name,
        consumer_group=consumer_group,
        queues=mqs,
        cids=list(dict.fromkeys(cid_list)),
        assignment=assignment,
    )
