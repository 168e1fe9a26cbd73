"""CommitLogDispatcher: what a record just appended to the commit log contributes to its consume
queue and to the index, written at once under the commit log lock (RocketMQ's
``CommitLogDispatcherBuildConsumeQueue`` and ``CommitLogDispatcherBuildIndex``, run inline).

The values themselves (tag codes, index key hashes) come from ``dispatch.py``, which recovery
uses too, so a put and a re-dispatch after a crash derive the same units and entries.
``last_dispatch_timestamp`` is the store time of the last record dispatched: the flush of the
queues records it in the checkpoint as what the queues and the index hold, and
``dispatched_offset`` (the commit log offset past the last record dispatched) the same as an
offset, from which recovery after a crash re-dispatches.
"""

from __future__ import annotations

from collections.abc import Sequence

from brokers.engine.store.consume_queue_table import ConsumeQueueTable
from brokers.engine.store.index import IndexService

Unit = tuple[int, int, int]  # (commit log offset, size, tag code)


class CommitLogDispatcher:
    def __init__(self, queues: ConsumeQueueTable, index: IndexService) -> None:
        self._queues = queues
        self._index = index
        self.last_dispatch_timestamp = 0
        self.dispatched_offset = 0  # commit log offset just past the last record dispatched

    def dispatch(
        self,
        topic: str,
        queue_id: int,
        queue_offset: int,
        phys: int,
        size: int,
        tags: int | None,
        hashes: list[int] | None,
        store_timestamp: int,
    ) -> None:
        """Dispatch one record: its unit when ``tags`` is not None, its index keys when given."""
        if tags is not None:
            self._queues.put_unit(topic, queue_id, queue_offset, phys, size, tags)
        if hashes:
            self._index.build_index(hashes, phys, store_timestamp)
        self.last_dispatch_timestamp = store_timestamp
        self.dispatched_offset = phys + size

    def dispatch_batch(
        self,
        topic: str,
        queue_id: int,
        first_offset: int,
        units: list[Unit],
        index_items: Sequence[tuple[int, int]],
        store_timestamp: int,
    ) -> None:
        """Dispatch a batch: consecutive units from ``first_offset``, then (key hash, offset) items."""
        if units:
            self._queues.put_units(topic, queue_id, first_offset, units)
        if index_items:
            self._index.build_index_items(index_items, store_timestamp)
        self.last_dispatch_timestamp = store_timestamp
        if units:
            self.dispatched_offset = units[-1][0] + units[-1][1]
