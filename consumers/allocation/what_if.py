"""What-if: change the group or the topic, re-allocate, and show which queues move.

A :class:`Scenario` adds or removes clients, takes brokers down, or changes brokers' read
queue counts, of a :class:`QueueLayout` (one topic) or of plain queues (any topics; a new
count gives the broker queue ids ``0..n-1`` in each of them). A scenario that does not fit its
input raises :class:`ScenarioError` naming the change at fault. :func:`what_if` previews the
allocation before and after and diffs them with
:func:`movement_diff`, which also compares any two assignments (say an observed one against
the expected one). A queue "moves" when the set of clients holding it changes; the diff tells
how many change hands, how many are released or picked up, and what each client gains or
loses — the queues whose consumption pauses during the rebalance.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from brokers.engine.common.message_queue import MessageQueue
from consumers.allocation.errors import ScenarioError
from consumers.allocation.layout import QueueLayout
from consumers.allocation.preview import AllocationPreview, QueueSource, preview_allocation, queues_of
from brokers.engine.client.allocation.strategy import AllocateMessageQueueStrategy, sort_message_queues

__all__ = ["MovementDiff", "QueueMove", "Scenario", "WhatIfResult", "movement_diff", "what_if"]


@dataclass(frozen=True)
class Scenario:
    """Changes to try: clients in or out, brokers down, new read queue counts per broker."""

    add_consumers: tuple[str, ...] = ()
    remove_consumers: tuple[str, ...] = ()
    brokers_down: tuple[str, ...] = ()
    queue_counts: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("add_consumers", "remove_consumers", "brokers_down"):
            value = getattr(self, name)
            if isinstance(value, str):
                raise ScenarioError(name, f"{name} must be a collection of names, not a string")
            object.__setattr__(self, name, tuple(value))
        object.__setattr__(self, "queue_counts", dict(self.queue_counts))

    def apply_to_cids(self, cids: Iterable[str]) -> list[str]:
        """Return the client list after the scenario; reject unknown or duplicate changes."""
        current = list(dict.fromkeys(cids))
        missing = [c for c in self.remove_consumers if c not in current]
        if missing:
            raise ScenarioError("remove_consumers", f"cannot remove clients not in the group: {missing}")
        present = [c for c in self.add_consumers if c in current]
        if present or any(not c for c in self.add_consumers):
            raise ScenarioError("add_consumers", f"cannot add empty or present clients: {present or ['']}")
        gone = set(self.remove_consumers)
        return [c for c in current if c not in gone] + list(dict.fromkeys(self.add_consumers))

    def _check_brokers(self, known: Iterable[str], where: str) -> None:
        unknown = sorted(set(self.brokers_down) - set(known))
        if unknown:
            raise ScenarioError("brokers_down", f"no such broker {where}: {', '.join(unknown)}")
        overlap = sorted(set(self.brokers_down) & set(self.queue_counts))
        if overlap:
            raise ScenarioError("queue_counts", f"brokers both down and resized: {', '.join(overlap)}")

    def apply_to_layout(self, layout: QueueLayout) -> QueueLayout:
        """Return the layout after the scenario (brokers down first, then new counts)."""
        self._check_brokers(layout.broker_names, f"in topic {layout.topic}")
        changed = layout.without_brokers(self.brokers_down) if self.brokers_down else layout
        return changed.with_queue_counts(self.queue_counts) if self.queue_counts else changed

    def apply_to_queues(self, queues: Iterable[MessageQueue]) -> tuple[MessageQueue, ...]:
        """Return plain queues after the scenario: brokers down (or resized) lose their queues,
        then each resized broker gets ids ``0..n-1`` in every topic of ``queues``."""
        queues = tuple(queues)
        self._check_brokers({q.broker_name for q in queues}, "among the queues")
        topics = sorted({q.topic for q in queues})
        if self.queue_counts and not topics:
            raise ScenarioError("queue_counts", "there is no topic to change queue counts of")
        gone = set(self.brokers_down) | set(self.queue_counts)
        after = [q for q in queues if q.broker_name not in gone]
        for broker, count in self.queue_counts.items():
            after.extend(MessageQueue(t, broker, i) for t in topics for i in range(count))
        return tuple(after)

    def apply_to(self, source: QueueSource) -> QueueSource:
        """Return ``source`` (a layout or plain queues) after the scenario, of the same kind."""
        return (
            self.apply_to_layout(source) if isinstance(source, QueueLayout) else self.apply_to_queues(queues_of(source))
        )


@dataclass(frozen=True)
class QueueMove:
    """One queue whose holders change: ``before`` and ``after`` list its clients (often one)."""

    queue: MessageQueue
    before: tuple[str, ...]
    after: tuple[str, ...]


@dataclass(frozen=True)
class MovementDiff:
    """How an assignment changes.

    ``queues_moved`` counts queues held before and after but by different clients;
    ``queues_released`` queues held before and by nobody after (a broker gone, say);
    ``queues_picked_up`` queues held by nobody before and by someone after (a new queue).
    ``gains``/``losses`` list, per client that has any, the queues it starts/stops holding.
    """

    moves: tuple[QueueMove, ...]
    queues_moved: int
    queues_released: int
    queues_picked_up: int
    gains: dict[str, tuple[MessageQueue, ...]]
    losses: dict[str, tuple[MessageQueue, ...]]

    @property
    def changed(self) -> bool:
        """Return whether any queue changes holders."""
        return bool(self.moves)


def _holders(assignment: Mapping[str, Iterable[MessageQueue]]) -> dict[MessageQueue, list[str]]:
    holders: dict[MessageQueue, list[str]] = {}
    for cid, queues in assignment.items():
        for mq in dict.fromkeys(queues):
            holders.setdefault(mq, []).append(cid)
    return holders


def movement_diff(
    before: Mapping[str, Iterable[MessageQueue]], after: Mapping[str, Iterable[MessageQueue]]
) -> MovementDiff:
    """Diff two ``{cid: queues}`` assignments (order within a client's list is ignored)."""
    was, now = _holders(before), _holders(after)
    moves = []
    moved = released = picked_up = 0
    for mq in sort_message_queues(was.keys() | now.keys()):
        old, new = was.get(mq, []), now.get(mq, [])
        if set(old) == set(new):
            continue
        moves.append(QueueMove(mq, tuple(sorted(old)), tuple(sorted(new))))
        if old and new:
            moved += 1
        elif old:
            released += 1
        else:
            picked_up += 1
    gains: dict[str, list[MessageQueue]] = {}
    losses: dict[str, list[MessageQueue]] = {}
    for move in moves:
        for cid in set(move.after) - set(move.before):
            gains.setdefault(cid, []).append(move.queue)
        for cid in set(move.before) - set(move.after):
            losses.setdefault(cid, []).append(move.queue)
    return MovementDiff(
        moves=tuple(moves),
        queues_moved=moved,
        queues_released=released,
        queues_picked_up=picked_up,
        gains={cid: tuple(gains[cid]) for cid in sorted(gains)},
        losses={cid: tuple(losses[cid]) for cid in sorted(losses)},
    )


@dataclass(frozen=True)
class WhatIfResult:
    """A scenario's previews before and after, and the movement between them.

    ``diff`` starts from ``current`` when :func:`what_if` was given one (what the members
    hold now), else from ``before``. ``added_cids``/``removed_cids`` are the clients the
    scenario brings in (in its order) and takes out (in the input's order).
    """

    scenario: Scenario
    before: AllocationPreview
    after: AllocationPreview
    diff: MovementDiff
    added_queues: tuple[MessageQueue, ...]
    removed_queues: tuple[MessageQueue, ...]
    added_cids: tuple[str, ...] = ()
    removed_cids: tuple[str, ...] = ()


def what_if(
    *,
    layout: QueueSource,
    cids: Iterable[str],
    strategy: AllocateMessageQueueStrategy,
    scenario: Scenario,
    current: Mapping[str, Iterable[MessageQueue]] | None = None,
    after_strategy: AllocateMessageQueueStrategy | None = None,
    consumer_group: str = "",
) -> WhatIfResult:
    """Preview ``layout``/``cids`` before and after ``scenario`` and diff the two.

    ``layout`` is a :class:`QueueLayout` or plain queues. The scenario is checked before
    anything is allocated (:class:`ScenarioError`). ``after_strategy`` (default: ``strategy``)
    previews a strategy switch as well.
    """
    cid_list = list(cids)
    layout = layout if isinstance(layout, QueueLayout) else tuple(layout)  # read twice below
    after_queues = scenario.apply_to(layout)
    after_cids = scenario.apply_to_cids(cid_list)
    before = preview_allocation(queues=layout, cids=cid_list, strategy=strategy, consumer_group=consumer_group)
    after = preview_allocation(
        queues=after_queues,
        cids=after_cids,
        strategy=after_strategy or strategy,
        consumer_group=consumer_group,
    )
    start = current if current is not None else before.assignment
    old, new = set(before.queues), set(after.queues)
    return WhatIfResult(
        scenario=scenario,
        before=before,
        after=after,
        diff=movement_diff(start, after.assignment),
        added_queues=tuple(mq for mq in after.queues if mq not in old),
        removed_queues=tuple(mq for mq in before.queues if mq not in new),
        added_cids=tuple(c for c in after_cids if c not in cid_list),
        removed_cids=tuple(c for c in cid_list if c not in after_cids),
    )
