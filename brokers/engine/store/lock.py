"""The ``lock`` and ``abort`` files of a store directory (reference §6.6).

``lock`` is held with ``flock`` for as long as a store is open, so a second store on the same
directory (another broker process, or another MessageStore in this one) fails at once. The OS
drops the lock when the holder dies, so a killed broker never leaves a stale lock behind.

``abort`` exists while a store is open; finding it at open means the last run did not close
cleanly, so recovery re-checks the commit log and rebuilds what the queues and index miss.
"""

from __future__ import annotations

import fcntl
import os

from brokers.engine.store.errors import StoreLockedError
from brokers.engine.store.file_io import OS_FILE_IO, FileHandle, FileIO


class StoreLock:
    def __init__(self, lock_path: str, abort_path: str, io: FileIO = OS_FILE_IO) -> None:
        self.lock_path = lock_path
        self.abort_path = abort_path
        self._io = io
        self._handle: FileHandle | None = None

    def acquire(self) -> None:
        """Take the directory lock or raise StoreLockedError naming the lock file."""
        handle = self._io.open(self.lock_path, create=True, mode=0o600)
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = handle.pread(64, 0).decode("ascii", "replace").strip()
            handle.close()
            who = f" (pid {holder})" if holder else ""
            raise StoreLockedError(
                f"store directory {os.path.dirname(self.lock_path)} is in use by another store"
                f"{who}: its lock file {self.lock_path} is held"
            ) from None
        except BaseException:
            handle.close()
            raise
        try:
            handle.truncate(0)
            handle.pwrite(f"{os.getpid()}\n".encode("ascii"), 0)
        except OSError:  # the pid is for the operator only; a full disk must not stop an open
            pass
        self._handle = handle

    def release(self) -> None:
        if self._handle is not None:
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None

    @property
    def held(self) -> bool:
        return self._handle is not None

    def abort_exists(self) -> bool:
        return os.path.exists(self.abort_path)

    def create_abort(self) -> None:
        self._io.open(self.abort_path, create=True, mode=0o600).close()
        self._io.sync_dir(os.path.dirname(self.abort_path))

    def remove_abort(self) -> None:
        if not os.path.exists(self.abort_path):
            return
        self._io.unlink(self.abort_path)
        self._io.sync_dir(os.path.dirname(self.abort_path))
