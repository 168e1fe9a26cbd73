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
from brokers.engine.store.mapped_file import fsync_dir


class StoreLock:
    def __init__(self, lock_path: str, abort_path: str) -> None:
        self.lock_path = lock_path
        self.abort_path = abort_path
        self._fd = -1

    def acquire(self) -> None:
        """Take the directory lock or raise StoreLockedError naming the lock file."""
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip()
            os.close(fd)
            who = f" (pid {holder})" if holder else ""
            raise StoreLockedError(
                f"store directory {os.path.dirname(self.lock_path)} is in use by another store"
                f"{who}: its lock file {self.lock_path} is held") from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd >= 0:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = -1

    @property
    def held(self) -> bool:
        return self._fd >= 0

    def abort_exists(self) -> bool:
        return os.path.exists(self.abort_path)

    def create_abort(self) -> None:
        with open(self.abort_path, "wb"):
            pass
        fsync_dir(os.path.dirname(self.abort_path))

    def remove_abort(self) -> None:
        try:
            os.unlink(self.abort_path)
        except FileNotFoundError:
            return
        fsync_dir(os.path.dirname(self.abort_path))
