"""MappedFile: one fixed-size, memory-mapped store file (a commit log segment, a consume queue
file, an index file).

Files are sized to their full length when created and mapped shared: bytes written into the
map are in the page cache at once and survive the process being killed. Commit log segments are
preallocated (``posix_fallocate``), so a full disk fails at segment creation with ENOSPC instead
of a SIGBUS on a later write into a sparse hole; consume queue and index files stay sparse
(thousands of queues x 6 MB would otherwise claim disk they never use). Durability against power
loss comes from :meth:`MappedFile.flush`, which calls ``fdatasync`` on the file (it drops the
GIL, unlike ``mmap.flush``, so the asyncio thread keeps running during a sync).

Segment names are the 20-digit zero-padded start offset (RocketMQ's ``UtilAll.offset2FileName``).
"""
from __future__ import annotations

import errno
import logging
import mmap
import os
import resource

from brokers.engine.store.errors import StoreCorruptionError

log = logging.getLogger(__name__)

FILE_NAME_DIGITS = 20
_fdatasync = getattr(os, "fdatasync", os.fsync)
_ZERO_CHUNK = bytes(1 << 20)


def offset_to_file_name(offset: int) -> str:
    """Return the 20-digit zero-padded name of a file starting at ``offset``."""
    return f"{offset:0{FILE_NAME_DIGITS}d}"


def parse_file_name(name: str) -> int | None:
    """Return the start offset a file name encodes, or None when it is not a segment name."""
    if len(name) == FILE_NAME_DIGITS and name.isdigit():
        return int(name)
    return None


def fsync_dir(path: str) -> None:
    """Make a directory's entries (a created, renamed or removed file) durable."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some filesystems refuse fsync on directories; nothing more to do
        pass
    finally:
        os.close(fd)


def raise_open_file_limit() -> None:
    """Each mapped file holds a descriptor; lift the soft limit towards the hard one."""
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = 1 << 16 if hard == resource.RLIM_INFINITY else min(hard, 1 << 16)
        if soft != resource.RLIM_INFINITY and soft < want:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    except (ValueError, OSError):  # pragma: no cover - not fatal
        pass


def _allocate(fd: int, size: int) -> None:
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as exc:
        if exc.errno in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
            os.ftruncate(fd, size)  # filesystem without fallocate: a sparse file will do
        else:
            raise


class MappedFile:
    """A file of exactly ``file_size`` bytes mapped read-write.

    ``wrote_position`` and ``flushed_position`` are owned by the caller (the commit log or
    consume queue knows where its data ends); this class only maps, syncs and zeroes.
    """

    __slots__ = ("path", "file_from_offset", "file_size", "mm", "wrote_position", "flushed_position")

    def __init__(self, path: str, file_from_offset: int, file_size: int, *, create: bool = False,
                 preallocate: bool = False) -> None:
        self.path = path
        self.file_from_offset = file_from_offset
        self.file_size = file_size
        self.wrote_position = 0
        self.flushed_position = 0
        flags = os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0)
        fd = os.open(path, flags, 0o644)
        try:
            actual = os.fstat(fd).st_size
            if actual > file_size:
                raise StoreCorruptionError(
                    f"{path} is {actual} bytes but files of this kind are {file_size} bytes "
                    "(was the configured file size changed?)", path=path, offset=file_from_offset)
            if actual < file_size:
                # New file, or a file cut short (a torn tail): the missing part reads as zeros.
                if preallocate:
                    _allocate(fd, file_size)
                else:
                    os.ftruncate(fd, file_size)
            self.mm = mmap.mmap(fd, file_size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        except BaseException:
            os.close(fd)
            if create:
                try:
                    os.unlink(path)
                except OSError:
                    pass
            raise
        os.close(fd)
        if create:
            fsync_dir(os.path.dirname(path))

    @property
    def file_end_offset(self) -> int:
        return self.file_from_offset + self.file_size

    def flush(self) -> bool:
        """fdatasync the file (every page dirtied through the map included); return True.

        The caller decides whether a sync is needed and updates ``flushed_position`` with the
        position it snapshotted before calling.
        """
        fd = os.open(self.path, os.O_RDWR)
        try:
            _fdatasync(fd)
        finally:
            os.close(fd)
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
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return [(start, end)]
        out: list[tuple[int, int]] = []
        try:
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
        finally:
            os.close(fd)
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
                    mm[start : start + n] = _ZERO_CHUNK[:n]
                    rewritten += n
                start += n
        return rewritten

    def close(self) -> None:
        try:
            self.mm.close()
        except (BufferError, ValueError):  # pragma: no cover - an export still alive
            log.warning("could not unmap %s cleanly", self.path)

    def destroy(self) -> None:
        """Unmap and delete the file."""
        self.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass

    def __repr__(self) -> str:
        return f"MappedFile({self.path!r}, from={self.file_from_offset}, wrote={self.wrote_position})"
