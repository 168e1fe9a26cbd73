"""MappedFile: one fixed-size store file (a commit log segment, a consume queue file, an index
file), written with ``pwrite`` and read through a read-only memory map.

Every write goes through the file's :class:`~brokers.engine.store.file_io.FileHandle` (the store's
one seam for file operations, ``file_io.py``); the map is ``PROT_READ``. A map is never written:
a store into a page over an unallocated block makes the kernel allocate it, and on a full disk
that is a SIGBUS that kills the process with nothing in the log, where ``pwrite`` answers ENOSPC.
``pwrite`` and the map share the page cache, so readers see a write at once and it survives the
process being killed.

Files are sized to their full length when created but their blocks are allocated ahead of the
writes, a chunk at a time (:meth:`MappedFile.ensure_allocated`), so a full disk is found before a
record, unit or index item is written, never half-way through one, and a store does not claim
disk it has not used yet (a 1 GiB segment on a laptop, thousands of 6 MB consume queue files).
Durability against power loss comes from :meth:`MappedFile.flush` (``fdatasync``).

Segment names are the 20-digit zero-padded start offset (RocketMQ's ``UtilAll.offset2FileName``).
"""

from __future__ import annotations

import errno
import logging
import mmap
import os
import resource

from brokers.engine.store.errors import StoreCorruptionError
from brokers.engine.store.file_io import OS_FILE_IO, FileHandle, FileIO

log = logging.getLogger(__name__)

FILE_NAME_DIGITS = 20
_ZERO_CHUNK = bytes(1 << 20)


def offset_to_file_name(offset: int) -> str:
    """Return the 20-digit zero-padded name of a file starting at ``offset``."""
    return f"{offset:0{FILE_NAME_DIGITS}d}"


def parse_file_name(name: str) -> int | None:
    """Return the start offset a file name encodes, or None when it is not a segment name."""
    if len(name) == FILE_NAME_DIGITS and name.isdigit():
        return int(name)
    return None


def raise_open_file_limit() -> None:
    """Each mapped file holds a descriptor; lift the soft limit towards the hard one."""
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = 1 << 16 if hard == resource.RLIM_INFINITY else min(hard, 1 << 16)
        if soft != resource.RLIM_INFINITY and soft < want:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    except (ValueError, OSError):  # pragma: no cover - not fatal
        pass


class MappedFile:
    """A file of exactly ``file_size`` bytes, mapped read-only, written with :meth:`write`.

    ``wrote_position`` and ``flushed_position`` are owned by the caller (the commit log or
    consume queue knows where its data ends); this class maps, allocates, writes, syncs and
    zeroes. ``allocated`` is how far blocks are known to be allocated: ``preallocate`` allocates
    the whole file at open, otherwise the writer calls :meth:`ensure_allocated` before writing.
    """

    __slots__ = (
        "path",
        "file_from_offset",
        "file_size",
        "mm",
        "handle",
        "io",
        "allocated",
        "wrote_position",
        "flushed_position",
    )

    def __init__(
        self,
        path: str,
        file_from_offset: int,
        file_size: int,
        *,
        create: bool = False,
        preallocate: bool = False,
        io: FileIO = OS_FILE_IO,
    ) -> None:
        self.path = path
        self.file_from_offset = file_from_offset
        self.file_size = file_size
        self.io = io
        self.wrote_position = 0
        self.flushed_position = 0
        self.allocated = 0
        handle: FileHandle = io.open(path, create=create, exclusive=create, mode=0o600)
        try:
            actual = handle.size()
            if actual > file_size:
                raise StoreCorruptionError(
                    f"{path} is {actual} bytes but files of this kind are {file_size} bytes "
                    "(was the configured file size changed?)",
                    path=path,
                    offset=file_from_offset,
                )
            if preallocate:
                handle.allocate(file_size)
                self.allocated = file_size
            elif actual < file_size:
                # New file, or a file cut short (a torn tail): the missing part reads as zeros.
                handle.truncate(file_size)
            self.mm = mmap.mmap(handle.fileno(), file_size, mmap.MAP_SHARED, mmap.PROT_READ)
        except BaseException:
            handle.close()
            if create:
                io.unlink(path)
            raise
        self.handle = handle
        if create:
            io.sync_dir(os.path.dirname(path))

    @property
    def file_end_offset(self) -> int:
        return self.file_from_offset + self.file_size

    def ensure_allocated(self, end: int, chunk: int) -> None:
        """Have blocks allocated for bytes [0, ``end``), ``chunk`` bytes ahead at a time; raise
        OSError (ENOSPC) when the disk cannot give them. Writes up to ``allocated`` then cannot
        fail for want of space."""
        if end <= self.allocated:
            return
        target = min(self.file_size, max(end, self.allocated + chunk))
        self.handle.allocate(target)
        self.allocated = target

    def write(self, pos: int, data: bytes | bytearray | memoryview) -> None:
        """Write ``data`` at ``pos`` (``pwrite``; visible through the map at once) or raise OSError."""
        self.handle.pwrite(data, pos)

    def flush(self) -> bool:
        """fdatasync the file; return True. Raises OSError (EIO) when the disk failed.

        The caller decides whether a sync is needed and updates ``flushed_position`` with the
        position it snapshotted before calling.
        """
        self.handle.sync()
        return True

    def data_ranges(self, start: int, end: int) -> list[tuple[int, int]]:
        """Return the parts of [start, end) that may hold data, skipping holes.

        Uses SEEK_DATA/SEEK_HOLE, so never-written (sparse or fallocated-unwritten) stretches of
        a 1 GiB segment are skipped without reading them. Errs towards "data": a filesystem
        without hole reporting yields the whole range.
        """
        if start >= end:
            return []
        seek_data = getattr(os, "SEEK_DATA", None)
        seek_hole = getattr(os, "SEEK_HOLE", None)
        if seek_data is None or seek_hole is None:
            return [(start, end)]
        fd = self.handle.fileno()
        if fd < 0:
            return [(start, end)]
        out: list[tuple[int, int]] = []
        pos = start
        while pos < end:
            try:
                data = os.lseek(fd, pos, seek_data)
            except OSError as exc:
                if exc.errno == errno.ENXIO:  # no data past pos
                    break
                return [(start, end)]
            if data >= end:
                break
            hole = os.lseek(fd, data, seek_hole)
            out.append((data, min(hole, end)))
            pos = hole
        return out

    def is_zero_from(self, pos: int, limit: int | None = None) -> bool:
        """Return True when every byte from ``pos`` to the end of the file (or the next
        ``limit`` bytes) is zero."""
        mm = self.mm
        end = self.file_size if limit is None else min(self.file_size, pos + limit)
        for start, stop in self.data_ranges(pos, end):
            while start < stop:
                n = min(len(_ZERO_CHUNK), stop - start)
                if mm[start : start + n] != _ZERO_CHUNK[:n]:
                    return False
                start += n
        return True

    def zero_from(self, pos: int) -> int:
        """Zero the file from ``pos`` to its end, touching only chunks that are not zero yet.

        Returns the number of bytes rewritten. Used when recovery truncates a torn tail so
        stale bytes can never be mistaken for records later.
        """
        mm = self.mm
        rewritten = 0
        for start, stop in self.data_ranges(pos, self.file_size):
            while start < stop:
                n = min(len(_ZERO_CHUNK), stop - start)
                if mm[start : start + n] != _ZERO_CHUNK[:n]:
                    self.handle.pwrite(_ZERO_CHUNK[:n], start)
                    rewritten += n
                start += n
        return rewritten

    def close(self) -> None:
        try:
            self.mm.close()
        except (BufferError, ValueError):  # pragma: no cover - an export still alive
            log.warning("could not unmap %s cleanly", self.path)
        self.handle.close()

    def destroy(self) -> None:
        """Unmap and delete the file."""
        self.close()
        self.io.unlink(self.path)

    def __repr__(self) -> str:
        return f"MappedFile({self.path!r}, from={self.file_from_offset}, wrote={self.wrote_position})"
