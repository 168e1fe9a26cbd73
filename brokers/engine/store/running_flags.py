"""RunningFlags: whether the store takes puts (RocketMQ's ``RunningFlags``, reduced to three facts).

The store sets ``running`` when ``open()`` has finished and clears it at ``close()``. Two latches
stop puts until the store is reopened:

* ``healthy_error``: a record reached the commit log but its consume queue unit or index entry
  could not be written (their queue offsets would diverge from the queue);
* ``write_error``: an ``fdatasync`` failed (EIO). The disk lost or may lose what was written
  since the last good flush, and a later sync may report success for the same lost pages, so
  nothing new is acknowledged; reads go on. The abort file stays, so the next ``open()``
  recovers from what is on disk.

The clean service sets ``disk_full`` (RocketMQ's DISK_FULL_BIT) while the disk is used above
``diskSpaceWarningLevelRatio`` and clears it once usage drops: puts are refused meanwhile, but a
slave's copy of its master's log goes on (RocketMQ's appendToCommitLog ignores the bit).
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


class RunningFlags:
    """Shared by the store and its put path; read and written under the commit log lock."""

    def __init__(self) -> None:
        self.running = False
        self.healthy_error: str | None = None
        self.disk_full = False
        self.write_error: str | None = None

    @property
    def writeable(self) -> bool:
        """True when a put may go ahead: open, no dispatch failure nor failed sync since, the disk not full."""
        return self.running and self.healthy_error is None and self.write_error is None and not self.disk_full

    @property
    def replica_writeable(self) -> bool:
        """True when a slave may append its master's bytes (the disk-full bit does not stop it)."""
        return self.running and self.healthy_error is None and self.write_error is None

    def get_and_make_disk_full(self) -> bool:
        """Set the disk-full bit; return True when it was clear (the caller logs the change)."""
        was_ok, self.disk_full = not self.disk_full, True
        return was_ok

    def get_and_make_disk_ok(self) -> bool:
        """Clear the disk-full bit; return True when it was already clear."""
        was_ok, self.disk_full = not self.disk_full, False
        return was_ok

    def make_unhealthy(self, why: str) -> None:
        """Refuse further puts until the store is reopened, remembering ``why`` for runtime info."""
        self.healthy_error = why

    def make_unwritable(self, why: str) -> None:
        """Refuse further puts until the store is reopened after a failed sync (the first reason stays)."""
        if self.write_error is None:
            log.error("store: %s; refusing writes until the store is reopened (reads go on)", why)
            self.write_error = why

    def reset(self) -> None:
        """Clear both latches (at open)."""
        self.healthy_error = None
        self.write_error = None
