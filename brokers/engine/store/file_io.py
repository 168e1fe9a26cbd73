"""FileIO: every file operation of the store behind one small seam.

The store (commit log segments, consume queue files, index files, the checkpoint, the abort and
lock files) and the broker's metadata files (topics, groups, offsets, delay offsets) open, write,
sync, size, rename and delete their files only through a :class:`FileIO` and the
:class:`FileHandle` objects it opens. Production uses :data:`OS_FILE_IO`, a thin layer over the
``os`` module. Tests pass another implementation to drive what the machine rarely shows on
demand: ``ENOSPC`` on a write or an allocation, ``EIO`` from ``fdatasync``, and (by recording
every write and sync) the file states a power cut can leave.

Contract (what every implementation keeps):

* Writes go through :meth:`FileHandle.pwrite` and reach the page cache at once: a memory map of
  the same file sees them (Linux's page cache is shared between ``pwrite`` and ``MAP_SHARED``).
  Nothing written is durable until :meth:`FileHandle.sync` returns.
* A failing operation raises :class:`OSError` with its ``errno`` and changes nothing the caller
  can see except what the operation itself did (a short ``pwrite`` raises, it never returns a
  short count).
* Memory maps are for reading. A store file is never written through a map: a page of a map
  over an unallocated block makes the kernel allocate on the first store into it, and on a full
  disk that is a SIGBUS that kills the process with nothing in the log.
"""

from __future__ import annotations

import errno
import os
from typing import Callable, Protocol

_fdatasync = getattr(os, "fdatasync", os.fsync)


class FileHandle(Protocol):
    """One open store file."""

    path: str

    def fileno(self) -> int:
        """The descriptor, for ``mmap`` (reads) and ``lseek`` hole queries."""

    def size(self) -> int:
        """The file's current length in bytes."""

    def pread(self, size: int, offset: int) -> bytes:
        """Read up to ``size`` bytes at ``offset``."""

    def pwrite(self, data: bytes | bytearray | memoryview, offset: int) -> None:
        """Write all of ``data`` at ``offset`` (into the page cache) or raise OSError."""

    def sync(self) -> None:
        """``fdatasync``: make every write so far durable, or raise OSError (EIO)."""

    def allocate(self, size: int) -> None:
        """Give the file ``size`` bytes with their blocks allocated (``posix_fallocate``)."""

    def truncate(self, size: int) -> None:
        """Set the file's length (``ftruncate``; growing leaves a sparse hole)."""

    def close(self) -> None:
        """Close the descriptor (idempotent)."""


class FileIO(Protocol):
    """The directory-level operations and the factory of :class:`FileHandle`."""

    def open(self, path: str, *, create: bool = False, exclusive: bool = False, mode: int = 0o600) -> FileHandle:
        """Open ``path`` read-write; ``create`` makes it when missing, ``exclusive`` fails if it exists."""

    def unlink(self, path: str) -> None:
        """Delete ``path``; a missing file is not an error."""

    def replace(self, src: str, dst: str) -> None:
        """Rename ``src`` over ``dst`` in one step (``os.replace``)."""

    def sync_dir(self, path: str) -> None:
        """Make the entries of directory ``path`` (created, renamed, removed files) durable."""


class OSFileHandle:
    """A :class:`FileHandle` over a real descriptor."""

    __slots__ = ("path", "_fd")

    def __init__(self, path: str, fd: int) -> None:
        self.path = path
        self._fd = fd

    def fileno(self) -> int:
        return self._fd

    def size(self) -> int:
        return os.fstat(self._fd).st_size

    def pread(self, size: int, offset: int) -> bytes:
        return os.pread(self._fd, size, offset)

    def pwrite(self, data: bytes | bytearray | memoryview, offset: int) -> None:
        view = memoryview(data)
        while view:
            n = os.pwrite(self._fd, view, offset)
            if n <= 0:  # pragma: no cover - the kernel reports ENOSPC instead of 0
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), self.path)
            view = view[n:]
            offset += n

    def sync(self) -> None:
        _fdatasync(self._fd)

    def allocate(self, size: int) -> None:
        try:
            os.posix_fallocate(self._fd, 0, size)
        except OSError as exc:
            if exc.errno in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                # A filesystem without fallocate: write zeros so the blocks exist (never a hole
                # a later write must allocate).
                self._zero_fill(size)
            else:
                raise

    def _zero_fill(self, size: int) -> None:
        # Rewrite only stretches that read as zeros (holes, or zeros already there): a stretch
        # holding data has its blocks, and must keep its bytes.
        chunk = bytes(1 << 20)
        have = self.size()
        pos = 0
        while pos < size:
            n = min(len(chunk), size - pos)
            if pos >= have or self.pread(n, pos) == chunk[:n]:
                self.pwrite(chunk[:n], pos)
            pos += n

    def truncate(self, size: int) -> None:
        os.ftruncate(self._fd, size)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __repr__(self) -> str:
        return f"OSFileHandle({self.path!r}, fd={self._fd})"


class OSFileIO:
    """:class:`FileIO` over the ``os`` module (the production implementation)."""

    def open(self, path: str, *, create: bool = False, exclusive: bool = False, mode: int = 0o600) -> OSFileHandle:
        flags = os.O_RDWR
        if create:
            flags |= os.O_CREAT
            if exclusive:
                flags |= os.O_EXCL
        return OSFileHandle(path, os.open(path, flags, mode))

    def unlink(self, path: str) -> None:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass

    def replace(self, src: str, dst: str) -> None:
        os.replace(src, dst)

    def sync_dir(self, path: str) -> None:
        try:
            fd = os.open(path or ".", os.O_RDONLY)
        except OSError:
            return
        try:
            os.fsync(fd)
        except OSError:  # some filesystems refuse fsync on directories; nothing more to do
            pass
        finally:
            os.close(fd)


OS_FILE_IO: FileIO = OSFileIO()


def write_file_atomically(
    io: FileIO, path: str, data: bytes, mode: int = 0o600, *, before_replace: Callable[[], None] | None = None
) -> None:
    """Replace ``path``'s content with ``data`` so a crash leaves the old or the new content.

    Writes a temp file beside it, syncs it, (calls ``before_replace``: the broker keeps a backup
    of the old content there,) renames it over ``path`` and syncs the directory. On an error
    (ENOSPC, EIO) the temp file is removed and ``path`` is untouched.
    """
    tmp = f"{path}.tmp"
    handle = io.open(tmp, create=True, mode=mode)
    try:
        handle.truncate(0)
        handle.pwrite(data, 0)
        handle.sync()
    except BaseException:
        handle.close()
        io.unlink(tmp)
        raise
    handle.close()
    if before_replace is not None:
        before_replace()
    io.replace(tmp, path)
    io.sync_dir(os.path.dirname(path))


def makedirs_private(path: str) -> None:
    """``os.makedirs`` with every directory it creates 0700, parents included (``os.makedirs``'s
    ``mode`` applies to the last one only); existing directories are left as they are."""
    missing: list[str] = []
    while path and not os.path.isdir(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            pass
