"""ConsumeQueue: the per (topic, queue id) index of the commit log that consumers read.

Unit *i* (20 bytes) describes logical offset *i*::

    offset size  field
    0      8     commit log offset of the record
    8      4     record size (TOTALSIZE)
    12     8     tag hash code (or the delivery time for SCHEDULE_TOPIC_XXXX)

Files hold ``units_per_file`` units and are named by the byte offset (logical offset x 20) of
their first unit, 20 digits, under ``consumequeue/<topic>/<queue id>/``. A unit with size 0 is
unwritten (files are preallocated with zeros); a filler unit (offset 0, size 0x7FFFFFFF) pads a
queue whose first units are missing and is skipped by readers.

Units are written with ``pwrite`` (never through the read-only map) into blocks allocated ahead
(:meth:`ConsumeQueue.ensure_room`, called by the put path before the record is written), so a
full disk fails a put before anything is written instead of leaving a record without its unit.
"""

from __future__ import annotations

import logging
import os
import shutil
import struct
import threading

from brokers.engine.store.errors import StoreCorruptionError
from brokers.engine.store.file_io import OS_FILE_IO, FileIO, makedirs_private
from brokers.engine.store.mapped_file import MappedFile, offset_to_file_name, parse_file_name

log = logging.getLogger(__name__)

CQ_STORE_UNIT_SIZE = 20
UNIT = struct.Struct(">qiq")
assert UNIT.size == CQ_STORE_UNIT_SIZE
FILLER_SIZE = 0x7FFFFFFF  # size field of a filler unit
ALLOCATE_CHUNK = 64 << 10  # blocks allocated ahead of the units (3,276 units)

Unit = tuple[int, int, int]  # (commit log offset, size, tag code)


class ConsumeQueue:
    def __init__(
        self, topic: str, queue_id: int, directory: str, units_per_file: int, *, io: FileIO = OS_FILE_IO
    ) -> None:
        self.io = io
        self.topic = topic
        self.queue_id = queue_id
        self.directory = directory
        self.file_size = units_per_file * CQ_STORE_UNIT_SIZE
        self.files: list[MappedFile] = []
        self.max_offset = 0  # logical offset the next unit gets
        self.min_offset = 0
        self.max_phys_end = 0  # commit log offset just past the record of the last unit
        self.damaged = False  # load found bytes after the first unwritten unit
        self._flushed_offset = 0

    # --- loading --------------------------------------------------------------------------

    def load(self, check_window: int = 0, known_end: tuple[int, int] | None = None) -> None:
        """Map the queue's files and find where its units end.

        ``known_end`` is (max offset, commit log offset past its last record) as a clean
        shutdown recorded them: taken after checking the unit before it is written and the one
        at it is not. Otherwise units are found by binary search for the first unwritten one.
        With ``check_window`` > 0 (after a crash) that many bytes after it are checked for data,
        which reveals holes left by lost pages; the queue is then cut at the first unwritten
        unit and marked damaged.
        """
        if not os.path.isdir(self.directory):
            return
        starts = sorted(s for s in (parse_file_name(n) for n in os.listdir(self.directory)) if s is not None)
        for i, start in enumerate(starts):
            path = os.path.join(self.directory, offset_to_file_name(start))
            expected = starts[0] + i * self.file_size
            if start % self.file_size or start != expected:
                raise StoreCorruptionError(
                    f"consume queue file {path} does not follow the previous one (expected one "
                    f"starting at byte offset {expected})",
                    path=path,
                    offset=expected,
                )
            mf = MappedFile(path, start, self.file_size, io=self.io)
            mf.wrote_position = mf.flushed_position = self.file_size
            self.files.append(mf)
        if not self.files:
            return
        self.min_offset = self.files[0].file_from_offset // CQ_STORE_UNIT_SIZE
        if known_end is not None and not check_window and self._take_known_end(*known_end):
            return
        units = self.file_size // CQ_STORE_UNIT_SIZE
        while (
            check_window
            and len(self.files) > 1
            and self._first_unwritten(self.files[-1]) == 0
            and self.files[-1].is_zero_from(0, check_window)
            and self._unit_size(self.files[-2], units - 1) == 0
        ):
            # An empty last file after a file that is not full: units were lost at the end of the
            # previous file, so its end is the queue's end.
            self.damaged = True
            self.files.pop().destroy()
        last = self.files[-1]
        end = self._first_unwritten(last)
        if check_window and not last.is_zero_from(end * CQ_STORE_UNIT_SIZE, check_window):
            # A hole (pages lost in a crash) or garbage: trust only the units before the first
            # unwritten one; recovery re-dispatches the rest from the commit log.
            self.damaged = True
            end = self._first_unwritten_linear(last)
            last.zero_from(end * CQ_STORE_UNIT_SIZE)
            log.warning("consume queue %s: bytes after the first unwritten unit %d; cut there", last.path, end)
        last.wrote_position = last.flushed_position = end * CQ_STORE_UNIT_SIZE
        self.max_offset = (last.file_from_offset + last.wrote_position) // CQ_STORE_UNIT_SIZE
        self._flushed_offset = self.max_offset
        self._refresh_max_phys_end()

    def _take_known_end(self, max_offset: int, max_phys_end: int) -> bool:
        last = self.files[-1]
        byte_end = max_offset * CQ_STORE_UNIT_SIZE
        pos = byte_end - last.file_from_offset
        if max_offset < self.min_offset or not 0 <= pos <= self.file_size:
            return False
        if pos and self._unit_size(last, pos // CQ_STORE_UNIT_SIZE - 1) == 0:
            return False
        if pos < self.file_size and self._unit_size(last, pos // CQ_STORE_UNIT_SIZE) != 0:
            return False
        last.wrote_position = last.flushed_position = pos
        self.max_offset = self._flushed_offset = max_offset
        self.max_phys_end = max_phys_end
        return True

    def _unit_size(self, mf: MappedFile, idx: int) -> int:
        # pread, not the map: the probe may land in a hole, and on tmpfs reading a hole through a
        # shared map takes a page (a SIGBUS when the volume is full).
        size: int = struct.unpack(">i", mf.handle.pread(4, idx * CQ_STORE_UNIT_SIZE + 8))[0]
        return size

    def _first_unwritten(self, mf: MappedFile) -> int:
        """Binary search for the first unit with size 0, assuming units are written in order."""
        lo, hi = 0, self.file_size // CQ_STORE_UNIT_SIZE
        while lo < hi:
            mid = (lo + hi) // 2
            if self._unit_size(mf, mid) != 0:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def _first_unwritten_linear(self, mf: MappedFile) -> int:
        for idx, (_phys, size, _tag) in enumerate(UNIT.iter_unpack(mf.handle.pread(self.file_size, 0))):
            if size <= 0:
                return idx
        return self.file_size // CQ_STORE_UNIT_SIZE

    def _refresh_max_phys_end(self) -> None:
        self.max_phys_end = 0
        offset = self.max_offset - 1
        while offset >= self.min_offset:
            phys, size, _tag = self.get_unit(offset) or (0, 0, 0)
            if 0 < size != FILLER_SIZE:
                self.max_phys_end = phys + size
                return
            offset -= 1

    # --- writing --------------------------------------------------------------------------

    def _file_for_append(self, byte_off: int) -> MappedFile:
        """The file holding byte offset ``byte_off`` at or past the queue's end, created when new."""
        files = self.files
        if files:
            idx = (byte_off - files[0].file_from_offset) // self.file_size
            if idx < len(files):
                return files[idx]
        start = byte_off - byte_off % self.file_size
        makedirs_private(self.directory)
        path = os.path.join(self.directory, offset_to_file_name(start))
        mf = MappedFile(path, start, self.file_size, create=not os.path.exists(path), io=self.io)
        if not files:
            self.min_offset = start // CQ_STORE_UNIT_SIZE
            self.max_offset = self.min_offset
            self._flushed_offset = self.max_offset
        files.append(mf)
        return mf

    def ensure_room(self, offset: int, count: int) -> None:
        """Have files and allocated blocks for units up to ``offset + count`` (from the queue's
        end, or from ``offset`` in a queue without files); raise OSError (ENOSPC) when the disk
        has no room. Then writing those units cannot fail for want of space."""
        end = (offset + count) * CQ_STORE_UNIT_SIZE
        if self.files:
            last = self.files[-1]
            if end - last.file_from_offset <= last.allocated:
                return
        byte_off = (self.max_offset if self.files else offset) * CQ_STORE_UNIT_SIZE
        while byte_off < end:
            mf = self._file_for_append(byte_off)
            stop = min(end, mf.file_end_offset)
            if stop - mf.file_from_offset > mf.allocated:
                mf.ensure_allocated(stop - mf.file_from_offset, ALLOCATE_CHUNK)
            byte_off = stop

    def put(self, phys: int, size: int, tags_code: int) -> None:
        """Append the unit for logical offset ``max_offset`` (the caller assigned it)."""
        byte_off = self.max_offset * CQ_STORE_UNIT_SIZE
        mf = self._file_for_append(byte_off)
        pos = byte_off - mf.file_from_offset
        mf.write(pos, UNIT.pack(phys, size, tags_code))
        mf.wrote_position = pos + CQ_STORE_UNIT_SIZE
        self.max_offset += 1
        if size != FILLER_SIZE:
            self.max_phys_end = phys + size

    def put_many(self, units: list[Unit]) -> None:
        """:meth:`put` for consecutive units (a batch): one write per file they touch."""
        at = 0
        while at < len(units):
            byte_off = self.max_offset * CQ_STORE_UNIT_SIZE
            mf = self._file_for_append(byte_off)
            pos = byte_off - mf.file_from_offset
            n = min(len(units) - at, (self.file_size - pos) // CQ_STORE_UNIT_SIZE)
            chunk = units[at : at + n]
            mf.write(pos, b"".join([UNIT.pack(*unit) for unit in chunk]))
            mf.wrote_position = pos + n * CQ_STORE_UNIT_SIZE
            self.max_offset += n
            for phys, size, _tags in reversed(chunk):
                if size != FILLER_SIZE:
                    self.max_phys_end = phys + size
                    break
            at += n

    def repair_unit(self, offset: int, phys: int, size: int, tags_code: int) -> bool:
        """Make unit ``offset`` (which the queue holds) say (phys, size, tags); return whether it
        had to be rewritten. After a power cut a unit the queue holds may be zeros or torn (its
        block did not reach the disk while later ones did); recovery checks each against its
        record and repairs it here."""
        found = self._locate(offset)
        if found is None:
            return False
        mf, pos = found
        unit = (phys, size, tags_code)
        if UNIT.unpack_from(mf.mm, pos) == unit:
            return False
        mf.write(pos, UNIT.pack(*unit))
        self._flushed_offset = min(self._flushed_offset, offset)
        if offset == self.max_offset - 1:
            self._refresh_max_phys_end()
        return True

    def put_recovered(self, phys: int, size: int, tags_code: int, queue_offset: int) -> bool:
        """Put a unit rebuilt from the commit log at ``queue_offset``; return whether it was written.

        A unit the queue already holds is skipped; a gap (units lost before the recovery
        window) is padded with filler units so logical offsets stay aligned.
        """
        if phys < self.max_phys_end or queue_offset < self.max_offset:
            return False
        if queue_offset > self.max_offset:
            if not self.files:
                self._file_for_append(queue_offset * CQ_STORE_UNIT_SIZE)
            if queue_offset > self.max_offset:
                log.warning(
                    "consume queue %s-%d: padding logical offsets %d..%d with filler units",
                    self.topic,
                    self.queue_id,
                    self.max_offset,
                    queue_offset - 1,
                )
            while self.max_offset < queue_offset:
                self.put(0, FILLER_SIZE, 0)
        self.put(phys, size, tags_code)
        return True

    def truncate_dirty(self, phys_end: int, *, holes_possible: bool = True) -> int:
        """Drop units whose record ends past ``phys_end`` (the recovered commit log end).

        An unwritten unit (zeros, or a unit torn before its size) counts as past the end: after
        a power cut the queue may hold one before units whose blocks did reach the disk, and
        whatever is cut at or after it is rebuilt from the commit log by recovery. After a clean
        stop (``holes_possible`` False) a queue whose last unit ends within ``phys_end`` is kept
        as it is without searching it.
        """
        if self.max_phys_end <= phys_end and not holes_possible:  # a clean stop: nothing past it
            return 0
        lo, hi = self.min_offset, self.max_offset
        while lo < hi:  # first unit whose record is (partly) past phys_end, or unwritten
            mid = (lo + hi) // 2
            phys, size, _tag = self.get_unit(mid) or (0, 0, 0)
            if size != FILLER_SIZE and (size <= 0 or phys + size > phys_end):
                hi = mid
            else:
                lo = mid + 1
        removed = self.max_offset - lo
        if removed <= 0:
            return 0
        byte_end = lo * CQ_STORE_UNIT_SIZE
        keep: list[MappedFile] = []
        for i, mf in enumerate(self.files):
            if mf.file_from_offset >= byte_end and i > 0:
                mf.destroy()
                continue
            if mf.file_end_offset > byte_end:
                mf.zero_from(max(0, byte_end - mf.file_from_offset))
                mf.wrote_position = max(0, byte_end - mf.file_from_offset)
            mf.flushed_position = mf.wrote_position
            keep.append(mf)
        self.files = keep
        self.max_offset = lo
        self._flushed_offset = min(self._flushed_offset, lo)
        self._refresh_max_phys_end()
        log.warning(
            "consume queue %s-%d: removed %d units past commit log offset %d",
            self.topic,
            self.queue_id,
            removed,
            phys_end,
        )
        return removed

    # --- reading --------------------------------------------------------------------------

    def _locate(self, offset: int) -> tuple[MappedFile, int] | None:
        files = self.files
        if not files or offset < self.min_offset or offset >= self.max_offset:
            return None
        byte_off = offset * CQ_STORE_UNIT_SIZE
        idx = (byte_off - files[0].file_from_offset) // self.file_size
        if not 0 <= idx < len(files):
            return None
        mf = files[idx]
        return mf, byte_off - mf.file_from_offset

    def get_unit(self, offset: int) -> Unit | None:
        found = self._locate(offset)
        if found is None:
            return None
        mf, pos = found
        try:
            return UNIT.unpack_from(mf.mm, pos)
        except ValueError:  # unmapped under us (topic deleted)
            return None

    def read_units(self, offset: int, max_units: int) -> list[Unit]:
        """Return up to ``max_units`` units from ``offset``, never crossing a file boundary."""
        found = self._locate(offset)
        if found is None:
            return []
        mf, pos = found
        end = min(
            pos + max_units * CQ_STORE_UNIT_SIZE,
            (self.max_offset * CQ_STORE_UNIT_SIZE) - mf.file_from_offset,
            self.file_size,
        )
        try:
            data = mf.mm[pos:end]
        except ValueError:
            return []
        return list(UNIT.iter_unpack(data))

    def next_file_offset(self, offset: int) -> int:
        """Return the logical offset where the file after the one holding ``offset`` starts."""
        units = self.file_size // CQ_STORE_UNIT_SIZE
        return offset - offset % units + units

    # --- flushing and removal -------------------------------------------------------------

    def flush(self, lock: threading.Lock) -> int:
        """fdatasync files with units written since the last flush; return the number of syncs."""
        with lock:
            target = self.max_offset
            start = self._flushed_offset
            if target <= start or not self.files:
                return 0
            first = self.files[0].file_from_offset
            lo = max(0, (start * CQ_STORE_UNIT_SIZE - first) // self.file_size)
            hi = min(len(self.files) - 1, ((target * CQ_STORE_UNIT_SIZE) - 1 - first) // self.file_size)
            dirty = [(mf, mf.wrote_position) for mf in self.files[lo : hi + 1]]
        for mf, wrote in dirty:
            try:
                mf.flush()
            except FileNotFoundError:  # deleted by delete_topics meanwhile
                return 0
            mf.flushed_position = wrote
        self._flushed_offset = target
        return len(dirty)

    def retire_expired_file(self, min_phy: int, lock: threading.Lock) -> MappedFile | None:
        """Drop the first file (never the last) when its last unit's record starts below
        ``min_phy``, the commit log's new min offset (RocketMQ's deleteExpiredFileByOffset); return
        it for the caller to unlink and unmap, or None."""
        with lock:
            files = self.files
            if len(files) < 2:
                return None
            phys, size, _tag = UNIT.unpack_from(files[0].mm, self.file_size - CQ_STORE_UNIT_SIZE)
            if phys >= min_phy and size != FILLER_SIZE:
                return None
            self.files = files[1:]  # a new list: a reader's snapshot stays consistent
            self.min_offset = max(self.min_offset, files[1].file_from_offset // CQ_STORE_UNIT_SIZE)
        return files[0]

    def correct_min_offset(self, min_phy: int, lock: threading.Lock) -> int:
        """Move ``min_offset`` to the first unit whose record is still in the commit log (at or past
        ``min_phy``; RocketMQ's correctMinOffset); all of them gone: to ``max_offset``. Return it."""
        with lock:
            if self.files:
                self.min_offset = max(self.min_offset, self.files[0].file_from_offset // CQ_STORE_UNIT_SIZE)
            lo, hi = self.min_offset, self.max_offset
            if lo < hi:  # the usual case, nothing of this queue deleted: one read, no search
                first = self.get_unit(lo)
                if first is not None and first[0] >= min_phy and first[1] != FILLER_SIZE:
                    return lo
            while lo < hi:  # units of one queue are in commit log order; fillers (phys 0) lead
                mid = (lo + hi) // 2
                unit = self.get_unit(mid)
                if unit is not None and unit[0] >= min_phy and unit[1] != FILLER_SIZE:
                    hi = mid
                else:
                    lo = mid + 1
            self.min_offset = lo
            return lo

    def mark_unflushed(self) -> None:
        """Have the next flush sync the last file (after a crash it may hold unsynced units)."""
        if self.files:
            self._flushed_offset = min(self._flushed_offset, self.files[-1].file_from_offset // CQ_STORE_UNIT_SIZE)

    def close(self) -> None:
        for mf in self.files:
            mf.close()
        self.files = []

    def destroy(self) -> None:
        """Unmap and delete the queue's files and directory."""
        self.close()
        if os.path.isdir(self.directory):
            for name in os.listdir(self.directory):
                self.io.unlink(os.path.join(self.directory, name))
        shutil.rmtree(self.directory, ignore_errors=True)
