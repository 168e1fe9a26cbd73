"""PopState: what each group has popped and not acked, per queue, changed only by journal records.

Per (group, topic, queue id) a :class:`QueueState` holds

- ``cursor``: the next queue offset the group never popped (new messages are taken from here);
- ``inflight``: queue offset -> :class:`InFlight`, the deliveries not acked yet (expired or not).

Everything below the cursor that is not in flight is done: acked, sent to the DLQ, or skipped by
the pop's filter. So the group's committed offset (lag, GET_CONSUME_STATS) is the lowest offset in
flight, else the cursor (:meth:`QueueState.committed`).

Every change is one record (a dict, see ``journal.py``) applied by :meth:`PopState.apply`, the
same live and on replay, so a replayed journal rebuilds the state exactly:

    ``cur``   set the cursor (a queue's first pop, retention moving the queue's start)
    ``reset`` set the cursor and forget the deliveries in flight (an operator moved the committed offset)
    ``pop``   deliveries ``m`` = [[offset, reconsume times, commit log offset], ...] at ``pt`` for
              ``it`` ms from batch start ``ck``, orderly or not (``ord``); the cursor moves to ``cur``
    ``ack``   offset ``o`` popped at ``pt`` is done (acked)
    ``dlq``   offset ``o`` popped at ``pt`` went to ``%DLQ%<group>`` (done, as an ack)
    ``drop``  offset ``o`` is gone from the store (retention): forgotten
    ``chg``   offset ``o`` popped at ``pt`` is now invisible from ``npt`` for ``it`` ms, batch start ``o``
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

from dataclasses import dataclass, field

QueueKey = tuple[str, str, int]  # group, topic, queue id


@dataclass(slots=True)
class InFlight:
    offset: int
    ck_offset: int  # the handle's first field
    pop_time: int  # ms
    invisible_ms: int
    reconsume: int  # reconsume times of this delivery (the 5.x delivery attempt is this + 1)
    phys_offset: int  # commit log offset, to send the message to the DLQ
    order: bool

    @property
    def deadline(self) -> int:
        return self.pop_time + self.invisible_ms


@dataclass(slots=True)
class QueueState:
    cursor: int
    inflight: dict[int, InFlight] = field(default_factory=dict)
    # (deadline, offset, pop time) of the deliveries, a heap with lazy deletion (an entry whose delivery
    # was acked or taken again is dropped when met): a pop finds the expired ones without a pass over
    # every delivery in flight (a group that takes without acking holds thousands; a scan of them on
    # every pop held the broker's event loop for seconds under 2,000 such consumers).
    deadlines: list[tuple[int, int, int]] = field(default_factory=list)
    # The in-flight offsets as a heap with lazy deletion: ``committed`` is asked on every pop, and a
    # group that takes without acking holds tens of thousands of deliveries per queue (min() over them
    # was most of the broker's time under 2,000 such consumers).
    offsets: list[int] = field(default_factory=list)

    def due(self, now: int, limit: int, wanted: Callable[[InFlight], bool]) -> list[InFlight]:
        """Up to ``limit`` deliveries ``wanted`` accepts whose invisible time has passed by ``now``, the
        earliest deadline first (one batch's by offset), plus the expired ones met that it refused; all
        stay in the heap (a delivery taken again gets a new entry, and this one is dropped when met)."""
        heap, inflight = self.deadlines, self.inflight
        if len(heap) > 2 * len(inflight) + 64:  # entries of acked deliveries: rebuild, bounded
            heap[:] = [(f.deadline, f.offset, f.pop_time) for f in inflight.values()]
            heapq.heapify(heap)
        out: list[InFlight] = []
        met: list[tuple[int, int, int]] = []
        accepted = 0
        while heap and heap[0][0] <= now and accepted < limit:
            entry = heapq.heappop(heap)
            found = inflight.get(entry[1])
            if found is None or found.pop_time != entry[2] or found.deadline != entry[0]:
                continue  # acked, or taken again since
            met.append(entry)
            out.append(found)
            accepted += wanted(found)
        for entry in met:
            heapq.heappush(heap, entry)
        return out

    def committed(self) -> int:
        """The lowest offset not acked: the lowest in flight, else the cursor."""
        heap, inflight = self.offsets, self.inflight
        if len(heap) > 2 * len(inflight) + 64:  # acked offsets behind an old one not acked: rebuild, bounded
            heap[:] = inflight
            heapq.heapify(heap)
        while heap and heap[0] not in inflight:
            heapq.heappop(heap)
        return heap[0] if heap else self.cursor


class PopState:
    def __init__(self) -> None:
        self.queues: dict[QueueKey, QueueState] = {}
        self._group_inflight: dict[str, int] = {}

    def get(self, key: QueueKey) -> QueueState | None:
        return self.queues.get(key)

    def inflight_count(self, group: str) -> int:
        return self._group_inflight.get(group, 0)

    def find(self, key: QueueKey, offset: int) -> InFlight | None:
        qs = self.queues.get(key)
        return None if qs is None else qs.inflight.get(offset)

    def apply(self, rec: dict[str, Any]) -> QueueState:
        """Apply one journal record; returns the queue's state after it."""
        key = (rec["g"], rec["t"], int(rec["q"]))
        op = rec["op"]
        qs = self.queues.get(key)
        if qs is None:
            qs = self.queues[key] = QueueState(int(rec.get("cur", 0)))
        if op == "cur":
            qs.cursor = int(rec["cur"])
        elif op == "reset":
            self._count(key[0], -len(qs.inflight))
            qs.inflight.clear()
            qs.offsets.clear()
            qs.deadlines.clear()
            qs.cursor = int(rec["cur"])
        elif op == "pop":
            pop_time, invisible, ck, order = int(rec["pt"]), int(rec["it"]), int(rec["ck"]), bool(rec.get("ord"))
            for offset, reconsume, phys in rec["m"]:
                if offset not in qs.inflight:
                    self._count(key[0], 1)
                    heapq.heappush(qs.offsets, offset)
                qs.inflight[offset] = InFlight(offset, ck, pop_time, invisible, reconsume, phys, order)
                heapq.heappush(qs.deadlines, (pop_time + invisible, offset, pop_time))
            qs.cursor = max(qs.cursor, int(rec["cur"]))
        elif op in ("ack", "dlq", "drop"):
            found = qs.inflight.get(int(rec["o"]))
            if found is not None and (op == "drop" or found.pop_time == int(rec["pt"])):
                del qs.inflight[found.offset]
                self._count(key[0], -1)
        elif op == "chg":
            found = qs.inflight.get(int(rec["o"]))
            if found is not None and found.pop_time == int(rec["pt"]):
                found.pop_time, found.invisible_ms, found.ck_offset = int(rec["npt"]), int(rec["it"]), found.offset
                heapq.heappush(qs.deadlines, (found.deadline, found.offset, found.pop_time))
        else:
            raise ValueError(f"unknown pop journal record {op!r}")
        return qs

    def snapshot(self) -> list[dict[str, Any]]:
        """Records that rebuild the current state from nothing (the compacted journal)."""
        out: list[dict[str, Any]] = []
        for (group, topic, qid), qs in self.queues.items():
            out.append({"op": "cur", "g": group, "t": topic, "q": qid, "cur": qs.cursor})
            for f in qs.inflight.values():
                out.append(
                    {
                        "op": "pop",
                        "g": group,
                        "t": topic,
                        "q": qid,
                        "cur": qs.cursor,
                        "pt": f.pop_time,
                        "it": f.invisible_ms,
                        "ck": f.ck_offset,
                        "ord": int(f.order),
                        "m": [[f.offset, f.reconsume, f.phys_offset]],
                    }
                )
        return out

    def record_count(self) -> int:
        return len(self.queues) + sum(self._group_inflight.values())

    def _count(self, group: str, delta: int) -> None:
        n = self._group_inflight.get(group, 0) + delta
        if n:
            self._group_inflight[group] = n
        else:
            self._group_inflight.pop(group, None)
