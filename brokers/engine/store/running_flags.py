"""RunningFlags: whether the store takes puts (RocketMQ's ``RunningFlags``, reduced to three facts).

The store sets ``running`` when ``open()`` has finished and clears it at ``close()``. Two latches
stop puts until the store is reopened:

* ``healthy_error``: a record reached the commit log but its consume queue unit or index entry
  could not be written (their queue offsets would diverge from the queue);
* ``write_error``: an ``fdatasync`` failed (EIO). The disk lost or may lose what was written
  since the last good flush, and a later sync may report success for the same lost pages, so
  nothing new is acknowledged; reads go on. The abort file stays, so the next ``open()``
  recovers from what is on disk.
"""
from __future__ import annotations

import logging

log = logging.getLogger(__name__)


class RunningFlags:
    """Shared by the store and its put path; read and written under the commit log lock."""

    def __init__(self) -> None:
        self.running = False
        self.healthy_error: str | None = None
        self.write_error: str | None = None

    @property
    def writeable(self) -> bool:
        """True when a put may go ahead: open, no dispatch failure and no failed sync since."""
        return self.running and self.healthy_error is None and self.write_error is None

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
