"""IndexService: find messages by key (each KEYS entry and the UNIQ_KEY) within a time range.

The index is a list of index files (``index_file.py``: the layout, and how a file stays
consistent on disk through a power cut), named by creation time; the newest takes new keys,
queries search newest first. A full file is flushed before its successor is created.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Callable, Sequence

from brokers.engine.store.file_io import OS_FILE_IO, FileIO, makedirs_private
from brokers.engine.store.index_file import IndexFile, key_hash

log = logging.getLogger(__name__)


def _time_name(ms: int) -> str:
    t = time.localtime(ms / 1000)
    return time.strftime("%Y%m%d%H%M%S", t) + f"{ms % 1000:03d}"


class IndexService:
    """The index files of a store: the newest takes new keys, queries search newest first."""

    def __init__(
        self, directory: str, slots: int, max_count: int, now_ms: Callable[[], int], *, io: FileIO = OS_FILE_IO
    ) -> None:
        self.directory = directory
        self.io = io
        self.slots = slots
        self.max_count = max_count
        self._now_ms = now_ms
        self.files: list[IndexFile] = []
        self.last_indexed_timestamp = 0  # store time of the last message indexed

    def load(self) -> None:
        makedirs_private(self.directory)
        self.files = []
        names = sorted(n for n in os.listdir(self.directory) if len(n) == 17 and n.isdigit())
        for name in names:
            path = os.path.join(self.directory, name)
            try:
                self.files.append(IndexFile(path, self.slots, self.max_count, create=False, io=self.io))
            except Exception as exc:  # a wrong-sized index file is rebuilt-able data, not fatal
                log.error("dropping unreadable index file %s: %s", path, exc)
                try:
                    self.io.unlink(path)
                except OSError:
                    pass
        if self.files:
            self.last_indexed_timestamp = self.files[-1].end_timestamp

    @property
    def end_phy_offset(self) -> int:
        """Commit log offset of the last indexed message (-1 when nothing is indexed)."""
        for f in reversed(self.files):
            if f.index_count > 1:
                return f.end_phy_offset
        return -1

    def _new_file(self) -> IndexFile:
        """Start a new newest file, the full one flushed first (only the newest file can then
        have been cut mid-flush by a crash, see :meth:`mark_unflushed`)."""
        if self.files:
            self.files[-1].flush()
        ms = self._now_ms()
        name = _time_name(ms)
        while os.path.exists(os.path.join(self.directory, name)) or (
            self.files and name <= os.path.basename(self.files[-1].path)
        ):
            ms += 1
            name = _time_name(ms)
        f = IndexFile(os.path.join(self.directory, name), self.slots, self.max_count, create=True, io=self.io)
        self.files.append(f)
        return f

    def ensure_room(self, count: int) -> None:
        """Make sure ``count`` more items can be indexed without running out of disk: the
        newest file's item blocks, or a new file (raise OSError: ENOSPC). A batch that does not
        fit what is left of the newest file goes whole to a new one."""
        f = self.files[-1] if self.files else None
        if f is not None and f.index_count + count <= f.max_count and f.room_ensured(f.index_count + count):
            return
        if f is None or f.index_count + count > f.max_count:
            f = self._new_file()
        f.ensure_items(f.index_count + count)

    def build_index(self, hashes: list[int], phy_offset: int, store_timestamp: int) -> None:
        """Index one message under the given key hashes (see :func:`key_hash`)."""
        self.build_index_items([(h, phy_offset) for h in hashes], store_timestamp)

    def build_index_items(self, items: Sequence[tuple[int, int]], store_timestamp: int) -> None:
        """Index (key hash, commit log offset) pairs of messages stored at ``store_timestamp``
        (a batch: one call, one item write per index file)."""
        while items:
            f = self.files[-1] if self.files and not self.files[-1].is_full() else self._new_file()
            done = f.put_items(items, store_timestamp)
            items = items[done:]
        self.last_indexed_timestamp = store_timestamp

    def query(self, topic: str, key: str, max_num: int, begin: int, end: int) -> list[int]:
        """Return commit log offsets of messages indexed under ``topic#key`` (newest first)."""
        h = key_hash(topic, key)
        out: list[int] = []
        for f in reversed(list(self.files)):
            if len(out) >= max_num:
                break
            if f.index_count <= 1:
                continue
            if f.time_matched(begin, end):
                f.select(h, begin, end, max_num, out)
            if f.begin_timestamp < begin:
                break
        return out

    def truncate(self, phy_end: int) -> None:
        """Drop index files that start past ``phy_end``; clamp the newest to it."""
        while self.files and self.files[-1].index_count > 1 and self.files[-1].begin_phy_offset >= phy_end:
            f = self.files.pop()
            log.warning("deleting index file %s: it only indexes records past %d", f.path, phy_end)
            f.destroy()
        if self.files:
            self.files[-1].clamp(phy_end)

    def retire_expired_file(self, min_phy: int, lock: threading.Lock) -> IndexFile | None:
        """Drop the oldest file (never the newest) when every message it indexes is gone from the
        commit log (its end offset below ``min_phy``; RocketMQ's deleteExpiredFile); return it
        for the caller to unlink and unmap, or None."""
        with lock:
            files = self.files
            if len(files) < 2 or files[0].end_phy_offset >= min_phy:
                return None
            self.files = files[1:]  # a new list: a query's snapshot stays consistent
        return files[0]

    def mark_unflushed(self) -> None:
        """After a crash: repair the newest file's slots a cut flush left pointing past its
        count, and have the next flush sync it (it may hold unsynced items)."""
        if self.files:
            self.files[-1].repair_slots()
            self.files[-1].mark_dirty()

    def flush(self, lock: threading.Lock) -> int:
        """Flush every file with unflushed items, slots or header (the newest, and one that
        filled meanwhile); a file retention dropped meanwhile is skipped."""
        with lock:
            files = list(self.files)
        flushed = 0
        for f in files:
            if f in self.files and f.flush():
                flushed += 1
        return flushed

    def close(self) -> None:
        for f in self.files:
            f.close()
        self.files = []
