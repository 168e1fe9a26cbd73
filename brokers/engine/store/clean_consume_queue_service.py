"""CleanConsumeQueueService: consume queue and index files follow the commit log's min offset
(RocketMQ's ``DefaultMessageStore.CleanConsumeQueueService``).

When the commit log's min offset has moved up since the last pass, every consume queue drops
its leading files whose last unit points below it (never a queue's last file, so its offsets
survive a restart) and moves its ``min_offset`` to the first unit still in the commit log
(``correctMinOffset``); then the index drops its oldest files whose last indexed message is below
it (never the newest). A pull below a queue's new min offset answers OFFSET_TOO_SMALL with the
min offset as the next one (PULL_OFFSET_MOVED), and the consumer goes on from there.

Bounded: at most ``files_per_queue`` files of each queue and of the index per pass (a queue
that hit the bound is finished on the next pass). Each file is dropped under the put lock on
its own, so puts interleave with a long clean-up.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from brokers.engine.store.commitlog import CommitLog
from brokers.engine.store.consume_queue_table import ConsumeQueueTable
from brokers.engine.store.file_io import FileIO
from brokers.engine.store.file_reaper import MappedFileReaper
from brokers.engine.store.index import IndexService
from brokers.engine.store.mapped_file import MappedFile

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LogicsCleanResult:
    """Files one pass deleted, and the commit log min offset they followed."""

    min_phy_offset: int
    consume_queue_files: int = 0
    index_files: int = 0
    pending: bool = False  # a bound was hit: the next pass goes on


class CleanConsumeQueueService:
    def __init__(
        self,
        *,
        commitlog: CommitLog,
        queues: ConsumeQueueTable,
        index: IndexService,
        file_io: FileIO,
        reaper: MappedFileReaper,
        files_per_queue: int,
    ) -> None:
        self._commitlog = commitlog
        self._queues = queues
        self._index = index
        self._file_io = file_io
        self._reaper = reaper
        self._files_per_queue = files_per_queue
        self._last_min_phy = -1
        self._pending = False

    def run(self, *, force: bool = False) -> LogicsCleanResult:
        """Follow the commit log's min offset if it moved (or a bound was hit last time, or ``force``)."""
        min_phy = self._commitlog.min_offset
        if not force and not self._pending and min_phy <= self._last_min_phy:
            return LogicsCleanResult(min_phy)
        self._last_min_phy = min_phy
        lock = self._commitlog.lock
        cq_files = index_files = 0
        pending = False
        for q in self._queues.queues():
            deleted = 0
            while deleted < self._files_per_queue:
                mf = q.retire_expired_file(min_phy, lock)
                if mf is None:
                    break
                self._delete(mf, "consume queue file")
                deleted += 1
            pending = pending or deleted == self._files_per_queue
            q.correct_min_offset(min_phy, lock)
            if deleted:
                self._file_io.sync_dir(q.directory)
                cq_files += deleted
        while index_files < self._files_per_queue:
            f = self._index.retire_expired_file(min_phy, lock)
            if f is None:
                break
            self._delete(f.mapped, "index file")
            index_files += 1
        pending = pending or index_files == self._files_per_queue
        if index_files:
            self._file_io.sync_dir(self._index.directory)
        self._pending = pending
        if cq_files or index_files:
            log.info(
                "deleted %d consume queue file(s) and %d index file(s) below commit log offset %d",
                cq_files,
                index_files,
                min_phy,
            )
        return LogicsCleanResult(min_phy, cq_files, index_files, pending)

    def _delete(self, mf: MappedFile, what: str) -> None:
        try:
            self._file_io.unlink(mf.path)
        except OSError as exc:
            log.error("could not delete %s %s: %s", what, os.path.basename(mf.path), exc)
        self._reaper.retire(mf)
