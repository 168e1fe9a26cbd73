"""StoreCheckpoint: how far the commit log, consume queues and index are known to be on disk.

A 4096-byte file of which the first 24 bytes are used (RocketMQ's ``StoreCheckpoint``)::

    offset size  field
    0      8     physicMsgTimestamp  store time of the last commit log record known flushed
    8      8     logicsMsgTimestamp  store time of the last consume queue unit known flushed
    16     8     indexMsgTimestamp   store time of the last index entry known flushed

After a crash, recovery re-checks the commit log from the segment holding records stored at
min(physic, logics, index) - 3 s (timestamps are not strictly monotonic across the clock).
"""
from __future__ import annotations

import os
import struct

from brokers.engine.store.mapped_file import fsync_dir

CHECKPOINT_FILE_SIZE = 4096
_LAYOUT = struct.Struct(">qqq")
assert _LAYOUT.size == 24
_fdatasync = getattr(os, "fdatasync", os.fsync)


class StoreCheckpoint:
    def __init__(self, path: str) -> None:
        self.path = path
        existed = os.path.exists(path)
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        if os.fstat(self._fd).st_size < CHECKPOINT_FILE_SIZE:
            os.ftruncate(self._fd, CHECKPOINT_FILE_SIZE)
        data = os.pread(self._fd, _LAYOUT.size, 0)
        self.physic_msg_timestamp, self.logics_msg_timestamp, self.index_msg_timestamp = (
            _LAYOUT.unpack(data) if len(data) == _LAYOUT.size else (0, 0, 0))
        self._written = data
        if not existed:
            fsync_dir(os.path.dirname(path) or ".")

    def min_timestamp(self) -> int:
        """Return the store time up to which everything was on disk (0 when unknown)."""
        return min(self.physic_msg_timestamp, self.logics_msg_timestamp, self.index_msg_timestamp)

    def flush(self) -> None:
        """Write the three timestamps and sync; a no-op when they did not change."""
        data = _LAYOUT.pack(self.physic_msg_timestamp, self.logics_msg_timestamp, self.index_msg_timestamp)
        if data == self._written:
            return
        os.pwrite(self._fd, data, 0)
        _fdatasync(self._fd)
        self._written = data

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
