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

from brokers.engine.store.file_io import OS_FILE_IO, FileIO

CHECKPOINT_FILE_SIZE = 4096
_LAYOUT = struct.Struct(">qqq")
assert _LAYOUT.size == 24


class StoreCheckpoint:
    """The checkpoint file, written with ``pwrite`` into blocks allocated when it is opened (a
    disk filled by someone else later cannot fail or kill a checkpoint write for want of space)."""

    def __init__(self, path: str, io: FileIO = OS_FILE_IO) -> None:
        self.path = path
        existed = os.path.exists(path)
        self._handle = io.open(path, create=True, mode=0o644)
        try:
            self._handle.allocate(CHECKPOINT_FILE_SIZE)
            data = self._handle.pread(_LAYOUT.size, 0)
        except BaseException:
            self._handle.close()
            raise
        self.physic_msg_timestamp, self.logics_msg_timestamp, self.index_msg_timestamp = (
            _LAYOUT.unpack(data) if len(data) == _LAYOUT.size else (0, 0, 0))
        self._written = data
        if not existed:
            io.sync_dir(os.path.dirname(path) or ".")

    def min_timestamp(self) -> int:
        """Return the store time up to which everything was on disk (0 when unknown)."""
        return min(self.physic_msg_timestamp, self.logics_msg_timestamp, self.index_msg_timestamp)

    def flush(self) -> None:
        """Write the three timestamps and sync; a no-op when they did not change."""
        data = _LAYOUT.pack(self.physic_msg_timestamp, self.logics_msg_timestamp, self.index_msg_timestamp)
        if data == self._written:
            return
        self._handle.pwrite(data, 0)
        self._handle.sync()
        self._written = data

    def close(self) -> None:
        self._handle.close()
