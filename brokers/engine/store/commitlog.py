"""CommitLog: every message of every topic, appended to fixed-size segment files.

Segments are named by their start offset (20 digits) and hold records back to back (layout in
``brokers.engine.common.message_codec``); a record's PHYSICALOFFSET is the segment start plus its
position. A record never spans segments: when a record and an 8-byte blank marker do not both
fit in what is left of a segment, the blank marker (TOTALSIZE = bytes left, MAGICCODE =
0xCBD43194) claims the rest and the record goes to the start of the next segment (reference §6.2).

Writers hold :attr:`CommitLog.lock` while they reserve space, write and :meth:`advance`; the flush
thread takes it only to snapshot how far to flush.
"""

from __future__ import annotations

import errno
import logging
import os
import struct
import threading
from collections.abc import Callable

from brokers.engine.common.constants import MAX_MESSAGE_SIZE
from brokers.engine.common.message_codec import (
    BLANK_MAGIC_CODE,
    BORNHOST_V6_FLAG,
    END_FILE_MIN_BLANK_LENGTH,
    MAX_PROPERTIES_BYTES,
    MAX_TOPIC_BYTES,
    MESSAGE_MAGIC_CODE,
    RECORD_FIXED_SIZE_V4,
)
from brokers.engine.store.errors import StoreCorruptionError, StoreError
from brokers.engine.store.file_io import OS_FILE_IO, FileIO, makedirs_private
from brokers.engine.store.mapped_file import MappedFile, offset_to_file_name, parse_file_name

log = logging.getLogger(__name__)

_PREFIX = struct.Struct(">iI")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_SYSFLAG_POS = 36  # SYSFLAG's position in a record
# Blocks of a segment are allocated this far ahead of the writes (not the whole segment at once:
# a 1 GiB first segment would claim 1 GiB of disk on a laptop); a full disk is found at a chunk
# boundary, before a record is written, and answered with an error.
ALLOCATE_CHUNK = 4 << 20
_BORN_HOST_POS = 48  # BORNHOST's position; STORETIMESTAMP follows it


class CreateMappedFileError(StoreError):
    """A new segment, or disk space for the next records, could not be had (disk full, permissions)."""


class FlushFailedError(StoreError, OSError):
    """An ``fdatasync`` of the commit log failed (EIO): nothing written since the last good flush
    can be vouched for, so the log never claims a flush again until the store is reopened."""


class RecordTooLargeError(StoreError):
    """A record (or batch) cannot fit in one segment even when it is empty."""


def max_record_size(max_message_size: int = MAX_MESSAGE_SIZE) -> int:
    """The largest record a body of ``max_message_size`` makes (IPv6 hosts, longest topic and properties)."""
    return RECORD_FIXED_SIZE_V4 + 24 + max_message_size + MAX_TOPIC_BYTES + MAX_PROPERTIES_BYTES


class CommitLog:
    def __init__(
        self,
        directory: str,
        file_size: int,
        *,
        max_message_size: int = MAX_MESSAGE_SIZE,
        io: FileIO = OS_FILE_IO,
        on_flush_failed: Callable[[str], None] | None = None,
    ) -> None:
        self.directory = directory
        self.file_size = file_size
        self.io = io
        self._chunk = min(file_size, ALLOCATE_CHUNK)
        self.flush_error: str | None = None  # set by the first failed fdatasync (see FlushFailedError)
        self._on_flush_failed = on_flush_failed  # told the reason, once
        # A size read from disk (a record's own, a consume queue unit's) above this is corruption:
        # it is refused before that many bytes are copied.
        self.max_record_size = max_record_size(max(max_message_size, MAX_MESSAGE_SIZE))
        self.lock = threading.Lock()  # the put lock: reserve, write, advance, dispatch
        self._flush_lock = threading.Lock()  # one flush at a time (flush thread, close, tools)
        self.files: list[MappedFile] = []
        self._max_offset = 0  # end of the last record = where the next one goes
        self._flushed_where = 0
        self.last_store_timestamp = 0  # store time of the last appended record
        self.flushed_store_timestamp = 0  # store time of the last record known on disk

    # --- opening and recovery -------------------------------------------------------------

    def load(self) -> None:
        """Map every segment; check names, sizes and that the segments are contiguous."""
        makedirs_private(self.directory)
        self.files = []
        self._max_offset = self._flushed_where = 0
        self.flush_error = None
        starts = []
        for name in os.listdir(self.directory):
            start = parse_file_name(name)
            if start is None:
                log.warning("ignoring %s in the commit log directory", os.path.join(self.directory, name))
                continue
            starts.append(start)
        starts.sort()
        for i, start in enumerate(starts):
            path = os.path.join(self.directory, offset_to_file_name(start))
            expected = starts[0] + i * self.file_size
            if start % self.file_size or start != expected:
                raise StoreCorruptionError(
                    f"commit log segment {path} does not follow the previous one (expected a "
                    f"segment starting at {expected} with {self.file_size}-byte segments)",
                    path=path,
                    offset=expected,
                )
            if i < len(starts) - 1 and os.path.getsize(path) != self.file_size:
                raise StoreCorruptionError(
                    f"commit log segment {path} is {os.path.getsize(path)} bytes, expected {self.file_size}",
                    path=path,
                    offset=start,
                )
            mf = MappedFile(path, start, self.file_size, io=self.io)
            mf.wrote_position = mf.flushed_position = self.file_size
            self.files.append(mf)
        if self.files:
            self._max_offset = self._flushed_where = self.files[-1].file_end_offset
            # Recovery reads the last segment through its map up to just past its data; give those
            # pages blocks first (on tmpfs reading a hole through a map takes a page, and on a full
            # volume that is a SIGBUS): on a full disk the open fails with ENOSPC instead.
            last = self.files[-1]
            ranges = last.data_ranges(0, self.file_size)
            last.ensure_allocated(
                min(self.file_size, (ranges[-1][1] if ranges else 0) + END_FILE_MIN_BLANK_LENGTH), self._chunk
            )

    def segment_start(self, offset: int) -> int:
        return offset - offset % self.file_size

    def set_end(self, end: int) -> int:
        """Make ``end`` the end of the log after recovery: zero what follows it in its segment,
        delete later segments. Return the number of bytes that were cut off."""
        cut = 0
        keep: list[MappedFile] = []
        for mf in self.files:
            if mf.file_from_offset >= end:
                if not mf.is_zero_from(0, 1 << 16):
                    cut += self.file_size
                log.warning("deleting commit log segment %s past the recovered end %d", mf.path, end)
                mf.destroy()
                continue
            if mf.file_end_offset > end:
                cut += mf.zero_from(end - mf.file_from_offset)
                mf.wrote_position = end - mf.file_from_offset
            else:
                mf.wrote_position = self.file_size
            mf.flushed_position = mf.wrote_position
            keep.append(mf)
        self.files = keep
        self._max_offset = self._flushed_where = end
        return cut

    def mark_unflushed_from(self, offset: int) -> None:
        """Have the next flush sync segments from ``offset`` on (after a crash, bytes the dead
        process left in the page cache may not be on disk yet)."""
        self._flushed_where = min(self._flushed_where, max(offset, self.min_offset))

    # --- appending ------------------------------------------------------------------------

    @property
    def max_offset(self) -> int:
        return self._max_offset

    @property
    def min_offset(self) -> int:
        return self.files[0].file_from_offset if self.files else self._max_offset

    @property
    def flushed_where(self) -> int:
        return self._flushed_where

    def _create_file(self, start: int) -> MappedFile:
        path = os.path.join(self.directory, offset_to_file_name(start))
        try:
            mf = MappedFile(path, start, self.file_size, create=not os.path.exists(path), io=self.io)
        except OSError as exc:
            raise CreateMappedFileError(f"cannot create commit log segment {path}: {exc}") from exc
        try:
            mf.ensure_allocated(self._chunk, self._chunk)
        except OSError as exc:
            mf.destroy()
            raise CreateMappedFileError(f"no disk space for commit log segment {path}: {exc}") from exc
        self.files.append(mf)
        return mf

    def reserve(self, size: int) -> tuple[MappedFile, int]:
        """Return (segment, position) where ``size`` bytes of records go; roll over as needed.

        Call with :attr:`lock` held, write the records, then call :meth:`advance`. The bytes
        returned have their blocks allocated, so writing them cannot fail for want of space;
        when the disk has none, :class:`CreateMappedFileError` is raised and nothing changed
        (the next record goes at the same offset once space returns).
        """
        fs = self.file_size
        if size + END_FILE_MIN_BLANK_LENGTH > fs:
            raise RecordTooLargeError(f"{size} bytes of records do not fit a {fs}-byte segment")
        off = self._max_offset
        mf = self.files[-1] if self.files else None
        if mf is None or off >= mf.file_end_offset:
            mf = self._create_file(off - off % fs)
        pos = off - mf.file_from_offset
        if size + END_FILE_MIN_BLANK_LENGTH > fs - pos:
            nxt = self._create_file(mf.file_end_offset)  # first: a failure leaves the log as it was
            try:
                mf.ensure_allocated(pos + END_FILE_MIN_BLANK_LENGTH, self._chunk)
                mf.write(pos, _PREFIX.pack(fs - pos, BLANK_MAGIC_CODE))
            except OSError as exc:
                self.files.pop()
                nxt.destroy()
                raise CreateMappedFileError(f"cannot end commit log segment {mf.path}: {exc}") from exc
            mf.wrote_position = fs
            self._max_offset = mf.file_end_offset
            mf = nxt
            pos = 0
        if pos + size > mf.allocated:
            try:
                mf.ensure_allocated(pos + size, self._chunk)
            except OSError as exc:
                raise CreateMappedFileError(f"no disk space in commit log segment {mf.path}: {exc}") from exc
        return mf, pos

    def advance(self, mf: MappedFile, end_pos: int, store_timestamp: int) -> None:
        """Publish records written up to ``end_pos`` of ``mf`` (call with :attr:`lock` held)."""
        mf.wrote_position = end_pos
        self._max_offset = mf.file_from_offset + end_pos
        self.last_store_timestamp = store_timestamp

    def append_raw(self, offset: int, data: bytes | memoryview, store_timestamp: int) -> None:
        """Write bytes copied from a master at ``offset`` = the end of this log (a slave's put
        path; call with :attr:`lock` held). ``data`` holds whole records or a segment's blank
        tail and stays within one segment; an empty log may start at any segment boundary."""
        fs = self.file_size
        if offset != self._max_offset and not (not self.files and offset % fs == 0):
            raise StoreError(f"replicated bytes at offset {offset}, but the log ends at {self._max_offset}")
        mf = self.files[-1] if self.files else None
        if mf is None or offset >= mf.file_end_offset:
            if offset % fs:
                raise StoreError(f"replicated bytes at {offset} do not start a new segment")
            mf = self._create_file(offset)
        pos = offset - mf.file_from_offset
        end = pos + len(data)
        if end > fs:
            raise StoreError(f"replicated bytes at {offset} ({len(data)} bytes) cross a segment boundary")
        try:
            mf.ensure_allocated(end, self._chunk)
            mf.write(pos, data)
        except OSError as exc:
            raise CreateMappedFileError(f"cannot write replicated bytes at {offset} to {mf.path}: {exc}") from exc
        mf.wrote_position = end
        self._max_offset = offset + len(data)
        if store_timestamp > 0:
            self.last_store_timestamp = store_timestamp

    # --- reading --------------------------------------------------------------------------

    def find_file(self, offset: int) -> MappedFile | None:
        files = self.files
        if not files:
            return None
        idx = (offset - files[0].file_from_offset) // self.file_size
        if 0 <= idx < len(files):
            return files[idx]
        return None

    def read(self, offset: int, size: int) -> bytes | None:
        """Return ``size`` bytes at physical ``offset``, or None outside the written log."""
        if size <= 0 or offset < self.min_offset or offset + size > self._max_offset:
            return None
        mf = self.find_file(offset)
        if mf is None:
            return None
        pos = offset - mf.file_from_offset
        if pos + size > self.file_size:
            return None
        try:
            return mf.mm[pos : pos + size]
        except ValueError:  # unmapped by close() under us
            return None

    def read_record(self, offset: int) -> bytes | None:
        """Return the whole record starting at ``offset``, or None when no record starts there."""
        head = self.read(offset, 8)
        if head is None:
            return None
        size, magic = _PREFIX.unpack(head)
        if magic != MESSAGE_MAGIC_CODE or size < 8 or size > self.max_record_size:
            return None
        record = self.read(offset, size)
        if record is None or _I64.unpack_from(record, 28)[0] != offset:
            return None
        return record

    def read_store_timestamp(self, offset: int) -> int:
        """Return the STORETIMESTAMP of the record at ``offset`` (-1 when unreadable)."""
        head = self.read(offset, _BORN_HOST_POS + 20 + 8)
        if head is None:
            head = self.read(offset, _BORN_HOST_POS + 8 + 8)
            if head is None:
                return -1
        (sys_flag,) = _I32.unpack_from(head, _SYSFLAG_POS)
        at = _BORN_HOST_POS + (20 if sys_flag & BORNHOST_V6_FLAG else 8)
        if at + 8 > len(head):
            return -1
        born: int = _I64.unpack_from(head, at)[0]
        return born

    # --- flushing -------------------------------------------------------------------------

    def flush(self) -> int:
        """fdatasync every segment written since the last flush; return how many syncs ran.

        Raises :class:`FlushFailedError` when a sync fails, and from then on at every call: the
        flushed position never moves past what the last good sync covered (after an EIO the
        kernel may report a later sync of the same lost pages as a success).
        """
        with self._flush_lock:
            if self.flush_error is not None:
                raise FlushFailedError(errno.EIO, self.flush_error)
            with self.lock:
                target = self._max_offset
                stamp = self.last_store_timestamp
                start = self._flushed_where
                files = self.files
                if target <= start or not files:
                    return 0
                first = files[0].file_from_offset
                lo = max(0, (start - first) // self.file_size)
                hi = min(len(files) - 1, (target - 1 - first) // self.file_size)
                dirty = [(mf, mf.wrote_position) for mf in files[lo : hi + 1]]
            syncs = 0
            for mf, wrote in dirty:
                try:
                    mf.flush()
                except OSError as exc:
                    self.flush_error = f"fdatasync of {mf.path} failed: {exc}"
                    log.error("commit log: %s; the flushed position stays at %d", self.flush_error, self._flushed_where)
                    if self._on_flush_failed is not None:
                        self._on_flush_failed(self.flush_error)
                    raise FlushFailedError(errno.EIO, self.flush_error) from exc
                mf.flushed_position = wrote
                syncs += 1
            self._flushed_where = target
            self.flushed_store_timestamp = stamp
            return syncs

    # --- retention (``clean_commitlog_service.py``) ---------------------------------------

    def last_modified_ms(self, mf: MappedFile) -> int:
        """When ``mf`` (not the newest segment) was last written: the store time of the first
        record of the segment after it, put by the same append that closed ``mf`` with its blank
        marker (so the store's clock, not the file's mtime, ages a segment); the file's mtime
        when that record cannot be read."""
        stamp = self.read_store_timestamp(mf.file_end_offset)
        if stamp > 0:
            return stamp
        try:
            return int(os.stat(mf.path).st_mtime * 1000)
        except OSError:
            return 0

    def retire_oldest(self, mf: MappedFile) -> bool:
        """Drop ``mf`` from the log when it is still the oldest segment and not the newest (under
        :attr:`lock`); the caller unlinks it and unmaps it once no reader holds its map. Readers
        holding the old list keep reading it; the min offset moves to the next segment."""
        with self.lock:
            files = self.files
            if len(files) < 2 or files[0] is not mf:
                return False
            self.files = files[1:]  # a new list: a reader's snapshot stays consistent
        return True

    def close(self) -> None:
        for mf in self.files:
            mf.close()
        self.files = []
