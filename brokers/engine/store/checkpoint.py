"""StoreCheckpoint: how far the commit log, consume queues and index are known to be on disk.

A 4096-byte file. The first 24 bytes are RocketMQ's ``StoreCheckpoint``; bytes 24..43, unused
by RocketMQ, hold the same facts as commit log offsets, which let recovery start mid-segment::

    offset size  field
    0      8     physicMsgTimestamp  store time of the last commit log record known flushed
    8      8     logicsMsgTimestamp  store time of the last consume queue unit known flushed
    16     8     indexMsgTimestamp   store time of the last index entry known flushed
    24     8     physicOffset        commit log offset up to which the log was fdatasync'ed
    32     8     logicsOffset        commit log offset up to which every record's consume queue
                                     unit and index entries were fdatasync'ed
    40     4     offsetsCrc          CRC32 of bytes 0..39; anything else (a file RocketMQ or an
                                     older Gantry wrote: zeros) means "offsets unknown"

Both offsets are record boundaries (the end of a record) when written. The 44 bytes go in one
``pwrite`` within one sector after the files they vouch for were synced; a torn write fails the
CRC and recovery falls back to the timestamps, as RocketMQ's does.
"""

from __future__ import annotations

import os
import struct
import zlib

from brokers.engine.store.file_io import OS_FILE_IO, FileIO

CHECKPOINT_FILE_SIZE = 4096
_LAYOUT = struct.Struct(">qqq")  # RocketMQ's three timestamps
assert _LAYOUT.size == 24
_OFFSETS = struct.Struct(">qq")  # physicOffset, logicsOffset
assert _OFFSETS.size == 16
_CRC = struct.Struct(">I")
_USED = _LAYOUT.size + _OFFSETS.size + _CRC.size
assert _USED == 44

UNKNOWN_OFFSET = -1


class StoreCheckpoint:
    """The checkpoint file, written with ``pwrite`` into blocks allocated when it is opened (a
    disk filled by someone else later cannot fail or kill a checkpoint write for want of space)."""

    def __init__(self, path: str, io: FileIO = OS_FILE_IO) -> None:
        self.path = path
        existed = os.path.exists(path)
        self._handle = io.open(path, create=True, mode=0o600)
        try:
            self._handle.allocate(CHECKPOINT_FILE_SIZE)
            data = self._handle.pread(_USED, 0)
        except BaseException:
            self._handle.close()
            raise
        self.physic_msg_timestamp: int
        self.logics_msg_timestamp: int
        self.index_msg_timestamp: int
        self.physic_msg_timestamp, self.logics_msg_timestamp, self.index_msg_timestamp = (
            _LAYOUT.unpack_from(data) if len(data) >= _LAYOUT.size else (0, 0, 0)
        )
        # Offsets the last run recorded; UNKNOWN_OFFSET when it recorded none (or a torn write).
        self.physic_offset = self.logics_offset = UNKNOWN_OFFSET
        if len(data) == _USED and _CRC.unpack_from(data, 40)[0] == zlib.crc32(data[:40]):
            physic, logics = _OFFSETS.unpack_from(data, _LAYOUT.size)
            if physic >= 0 and logics >= 0:
                self.physic_offset, self.logics_offset = physic, logics
        self._written = data
        if not existed:
            io.sync_dir(os.path.dirname(path) or ".")

    def min_timestamp(self) -> int:
        """Return the store time up to which everything was on disk (0 when unknown)."""
        return min(self.physic_msg_timestamp, self.logics_msg_timestamp, self.index_msg_timestamp)

    @property
    def offsets_known(self) -> bool:
        return self.physic_offset >= 0 and self.logics_offset >= 0

    def min_offset(self) -> int:
        """Return the commit log offset up to which everything was on disk (-1 when unknown)."""
        return min(self.physic_offset, self.logics_offset) if self.offsets_known else UNKNOWN_OFFSET

    def lower_offsets(self, offset: int) -> None:
        """Vouch for nothing past ``offset`` (the log was cut there), on disk at once."""
        if self.offsets_known:
            self.physic_offset = min(self.physic_offset, offset)
            self.logics_offset = min(self.logics_offset, offset)
            self.flush()

    def _encode(self) -> bytes:
        head = _LAYOUT.pack(self.physic_msg_timestamp, self.logics_msg_timestamp, self.index_msg_timestamp)
        head += _OFFSETS.pack(self.physic_offset, self.logics_offset)
        return head + _CRC.pack(zlib.crc32(head))

    def flush(self) -> None:
        """Write the timestamps and offsets and sync; a no-op when they did not change."""
        data = self._encode()
        if data == self._written:
            return
        self._handle.pwrite(data, 0)
        self._handle.sync()
        self._written = data

    def close(self) -> None:
        self._handle.close()
