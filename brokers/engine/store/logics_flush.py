"""Flushing the logical files: consume queues and the index, then the checkpoint.

Run by the store's ``FlushConsumeQueueService`` (every ``flush_interval_consume_queue_ms``) and at
close. What the dispatcher had dispatched is snapshotted under the commit log lock *before* the
syncs, so the checkpoint never vouches for a unit or index entry written after its sync began.
A failed sync latches the store unwritable (``running_flags.py``) and the checkpoint then
vouches for nothing new.
"""

from __future__ import annotations

from typing import Callable

from brokers.engine.store.checkpoint import StoreCheckpoint
from brokers.engine.store.commitlog import CommitLog
from brokers.engine.store.commitlog_dispatcher import CommitLogDispatcher
from brokers.engine.store.consume_queue import ConsumeQueue
from brokers.engine.store.index import IndexService
from brokers.engine.store.running_flags import RunningFlags
from brokers.engine.store.stats import StoreStats


def flush_logics(
    *,
    commitlog: CommitLog,
    dispatcher: CommitLogDispatcher,
    queues: Callable[[], list[ConsumeQueue]],
    index: IndexService,
    flags: RunningFlags,
    checkpoint: StoreCheckpoint | None,
    stats: StoreStats,
) -> None:
    """Flush consume queues and index, then record in the checkpoint what is on disk (times, offsets)."""
    lock = commitlog.lock
    with lock:
        logics_ts = dispatcher.last_dispatch_timestamp
        logics_offset = dispatcher.dispatched_offset
        snapshot = queues()
    try:
        for q in snapshot:
            q.flush(lock)
        index.flush(lock)
    except OSError as exc:  # a failed sync: stop puts (running_flags.py)
        flags.make_unwritable(f"consume queue or index flush failed: {exc}")
        raise
    cp = checkpoint
    if cp is not None and flags.write_error is None:  # after a failed sync it vouches for nothing new
        cp.physic_msg_timestamp = commitlog.flushed_store_timestamp
        cp.logics_msg_timestamp = logics_ts
        cp.index_msg_timestamp = logics_ts
        cp.physic_offset = commitlog.flushed_where
        cp.logics_offset = min(logics_offset, dispatcher.dispatched_offset)  # truncate_to lowers it
        cp.flush()
    stats.sample()
