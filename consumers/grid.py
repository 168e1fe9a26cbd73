"""The allocation grid a template draws: client ids as rows, queues (grouped by broker) as columns.

A cell says whether the row's client holds the column's queue, and, when the grid shows a
what-if, whether it gains or loses it. The last row counts each queue's holders (0: nobody
consumes it; 2 or more: consumed twice). Built once per request from a preview, so the
template only loops; 64 queues x 20 clients is 1,280 cells.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from brokers.engine.common.message_queue import MessageQueue
from consumers.allocation import AllocationPreview, MovementDiff
from brokers.engine.client.allocation.strategy import sort_message_queues

MAX_CELLS = 200_000  # beyond this a page shows the figures, not the grid

OWN, GAIN, LOSE, SHARED, EMPTY = "own", "gain", "lose", "shared", ""


@dataclass(frozen=True)
class GridGroup:
    """A header over the columns of one broker (of one topic when several are shown)."""

    label: str
    span: int

    def _fits(self, cell_px: float, char_px: float) -> bool:
        """Whether the label's longest piece (it wraps after - _ . @ and spaces) fits across its columns."""
        longest = max((len(w) for w in re.split(r"(?<=[-_.@ ·])", self.label) if w), default=0)
        return longest * char_px + 4 <= self.span * cell_px

    @property
    def narrow(self) -> bool:
        """Too few columns for the name even wrapped: the header turns it upright (full grid: 15 px cells, 11 px text)."""
        return not self._fits(16, 6.6)

    @property
    def narrow_mini(self) -> bool:
        """The same for a mini grid (5 px cells, 9 px text)."""
        return not self._fits(6, 5.4)


@dataclass(frozen=True)
class GridRow:
    cid: str
    cells: tuple[
        str, ...
    ]  # one CSS class per column: own, gain, lose, shared or "", and "edge" on a broker's first column
    held: int
    gained: int
    lost: int
    state: str = ""  # "", "added", "removed", "idle"


@dataclass(frozen=True)
class Grid:
    groups: tuple[GridGroup, ...]
    queues: tuple[MessageQueue, ...]
    rows: tuple[GridRow, ...]
    holders: tuple[int, ...]  # per column; -1 for a queue the preview no longer has (a broker down)
    too_big: bool = False
    edges: tuple[bool, ...] = ()  # per column: the first of its broker

    @property
    def columns(self) -> list[tuple[MessageQueue, int, bool]]:
        """(queue, holders, first of its broker) per column, for the header and footer."""
        return list(zip(self.queues, self.holders, self.edges))

    @property
    def wide_ids(self) -> bool:
        return any(q.queue_id >= 100 for q in self.queues)

    @property
    def unowned(self) -> int:
        return sum(1 for n in self.holders if n == 0)

    @property
    def shared(self) -> int:
        return sum(1 for n in self.holders if n > 1)


def _groups(queues: tuple[MessageQueue, ...]) -> tuple[GridGroup, ...]:
    several_topics = len({q.topic for q in queues}) > 1
    groups: list[GridGroup] = []
    last = None
    for q in queues:
        key = (q.topic, q.broker_name)
        if key != last:
            groups.append(GridGroup(f"{q.topic} · {q.broker_name}" if several_topics else q.broker_name, 0))
            last = key
        groups[-1] = GridGroup(groups[-1].label, groups[-1].span + 1)
    return tuple(groups)


def build_grid(
    preview: AllocationPreview,
    diff: MovementDiff | None = None,
    *,
    removed: Iterable[str] = (),
    added: Iterable[str] = (),
    before: Mapping[str, Iterable[MessageQueue]] | None = None,
) -> Grid:
    """The grid of ``preview``; with ``diff``, cells the movement touches are marked.

    ``before`` (the assignment the diff starts from) adds rows for clients that are gone.
    """
    moved = [m.queue for m in (diff.moves if diff else ())]
    queues = tuple(sort_message_queues(dict.fromkeys([*preview.queues, *preview.foreign_queues, *moved])))
    removed, added = tuple(removed), set(added)
    cids = [*preview.cids, *(c for c in removed if c not in preview.assignment)]
    if before is not None:
        cids += [c for c in before if c not in cids]
    if len(queues) * max(len(cids), 1) > MAX_CELLS:
        return Grid(_groups(queues), queues, (), (), too_big=True)
    holders_of = {row.queue: len(row.cids) for row in preview.queue_owners}
    gains = {cid: set(qs) for cid, qs in (diff.gains.items() if diff else ())}
    losses = {cid: set(qs) for cid, qs in (diff.losses.items() if diff else ())}
    edges = tuple(
        i == 0 or (q.topic, q.broker_name) != (queues[i - 1].topic, queues[i - 1].broker_name)
        for i, q in enumerate(queues)
    )
    rows = []
    for cid in cids:
        held = set(preview.assignment.get(cid, ()))
        gain, loss = gains.get(cid, set()), losses.get(cid, set())
        cells = []
        for q, edge in zip(queues, edges):
            if q in held:
                state = GAIN if q in gain else SHARED if holders_of.get(q, 0) > 1 else OWN
            else:
                state = LOSE if q in loss else EMPTY
            cells.append(f"{state} edge" if edge else state)
        row_state = (
            "removed"
            if cid in removed or cid not in preview.assignment
            else "added"
            if cid in added
            else "idle"
            if not held
            else ""
        )
        rows.append(GridRow(cid, tuple(cells), len(held), len(gain), len(loss), row_state))
    present = set(preview.queues) | set(preview.foreign_queues)
    return Grid(
        _groups(queues),
        queues,
        tuple(rows),
        tuple(holders_of.get(q, 0) if q in present else -1 for q in queues),
        edges=edges,
    )
