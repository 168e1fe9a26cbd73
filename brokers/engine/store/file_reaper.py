"""MappedFileReaper: unmap deleted store files once nobody reads through their maps.

Deleting a segment (commit log, consume queue or index file) unlinks its name at once: the
space is the kernel's to free as soon as the last mapping goes. Unmapping is deferred, as
RocketMQ's ``ReferenceResource`` defers the release of a ``MappedFile`` until its reference
count drops to zero: a reader that holds a ``memoryview`` or slice of a map (a pull on its way
to the socket) keeps the pages valid; ``mmap.close()`` refuses with BufferError while such an
export lives, and the reaper tries again on the next pass. A file is also kept for at least
``grace_s`` after it was retired, so a reader that took the file from the old list a moment
ago finishes its copy before the map goes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from brokers.engine.store.mapped_file import MappedFile

log = logging.getLogger(__name__)

DESTROY_GRACE_S = 1.0  # a retired map lives at least this long (a reader's copy takes microseconds)


class MappedFileReaper:
    """The retired maps of a store and when each was retired (``monotonic`` seconds)."""

    def __init__(self, monotonic: Callable[[], float], grace_s: float = DESTROY_GRACE_S) -> None:
        self._monotonic = monotonic
        self._grace_s = grace_s
        self._lock = threading.Lock()
        self._retired: list[tuple[float, MappedFile]] = []

    def retire(self, mf: MappedFile) -> None:
        """Unmap ``mf`` on a later :meth:`reap` (its file is already unlinked)."""
        with self._lock:
            self._retired.append((self._monotonic(), mf))

    @property
    def pending(self) -> int:
        """Retired maps not unmapped yet."""
        with self._lock:
            return len(self._retired)

    def reap(self, *, force: bool = False) -> int:
        """Unmap every retired map older than the grace period (all of them with ``force``)
        that no reader holds; return how many were unmapped."""
        now = self._monotonic()
        with self._lock:
            retired, self._retired = self._retired, []
        kept: list[tuple[float, MappedFile]] = []
        closed = 0
        for at, mf in retired:
            if not force and now - at < self._grace_s:
                kept.append((at, mf))
                continue
            try:
                mf.mm.close()
                closed += 1
            except BufferError:  # a reader still holds a view of the map: next pass
                kept.append((at, mf))
            except ValueError:  # already closed
                closed += 1
        if kept:
            with self._lock:
                self._retired = kept + self._retired
        return closed

    def close(self) -> None:
        """At store close: unmap what can be; a map still exported is left to the garbage collector."""
        self.reap(force=True)
        with self._lock:
            left, self._retired = self._retired, []
        if left:
            log.warning("%d deleted store file(s) still had readers at close; their maps go with them", len(left))
