"""Cutting a divergent tail: the commit log, consume queues and index back to a common point.

A broker that was a master and comes back after its group promoted another (or a slave of
such a master) may hold bytes past the point where its log and the new master's part. Before
it replicates, those bytes go: the commit log is cut at the point (the rest of its segment
zeroed, later segments deleted: :meth:`CommitLog.set_end`), every consume queue loses the units
of records past it (:meth:`ConsumeQueue.truncate_dirty`, which recovery uses too), the index
stops claiming offsets past it (:meth:`IndexService.truncate`), and the queue offset counters
restart from the queues' new ends. Everything is then flushed, so a crash right after leaves
the cut log on disk. :class:`TruncationReport` says exactly what went, for the broker's log.
"""

from __future__ import annotations

from dataclasses import dataclass

from brokers.engine.store.commitlog import CommitLog
from brokers.engine.store.consume_queue_table import ConsumeQueueTable
from brokers.engine.store.index import IndexService


@dataclass(frozen=True, slots=True)
class TruncationReport:
    from_offset: int  # the commit log end before
    to_offset: int  # the end after (the common point)
    bytes_removed: int  # from_offset - to_offset
    queue_units_removed: int  # consume queue units (messages) dropped, over every queue
    queues_touched: tuple[str, ...]  # "topic:queueId (n units)" of each queue that lost units

    def __str__(self) -> str:
        touched = ", ".join(self.queues_touched) or "none"
        return (
            f"commit log cut from offset {self.from_offset} to {self.to_offset} ({self.bytes_removed} bytes); "
            f"{self.queue_units_removed} consume queue units removed (queues: {touched}); "
            f"index entries past {self.to_offset} dropped"
        )


def truncate_tail(
    commitlog: CommitLog, queues: ConsumeQueueTable, index: IndexService, offset: int
) -> TruncationReport:
    """Cut everything past ``offset`` (a record boundary at or below the log's end); the caller
    holds no lock and nothing else appends meanwhile (the broker is not a master, its HA
    client is between sessions)."""
    with commitlog.lock:
        old_end = commitlog.max_offset
        if offset >= old_end:
            return TruncationReport(old_end, old_end, 0, 0, ())
        offset = max(offset, commitlog.min_offset)
        touched = []
        removed = 0
        for q in queues.queues():
            n = q.truncate_dirty(offset)
            if n:
                removed += n
                touched.append(f"{q.topic}:{q.queue_id} ({n} units)")
        index.truncate(offset)
        commitlog.set_end(offset)
        queues.reset_queue_offsets()
        last = commitlog.files[-1] if commitlog.files else None
    if last is not None:
        last.flush()  # the zeroed tail on disk now: a crash must not find the old records there
    for q in queues.queues():
        q.flush(commitlog.lock)
    return TruncationReport(old_end, offset, old_end - offset, removed, tuple(sorted(touched)))
