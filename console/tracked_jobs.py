"""What every tracked Celery job view shares (rebalance jobs, promotion jobs): its states and timing.

A job is queued, then running, then ends in a state of its own kind (converged, planned, promoted,
refused, failed ...); :class:`JobTiming` gives a frozen job view its ``active`` flag, the status as
text, and its duration (to the finish, else to the last heartbeat of a running job).
"""
from __future__ import annotations

from datetime import datetime

ACTIVE = ("queued", "running")  # the states a job can still leave


class JobTiming:
    """Mixin for frozen job views with ``status``, ``started_at``, ``finished_at`` and ``heartbeat_at``."""

    status: str
    started_at: datetime | None
    finished_at: datetime | None
    heartbeat_at: datetime | None

    @property
    def active(self) -> bool:
        return self.status in ACTIVE

    @property
    def status_text(self) -> str:
        return self.status.replace("_", " ")

    @property
    def duration_s(self) -> float | None:
        if self.started_at is None:
            return None
        return ((self.finished_at or self.heartbeat_at or self.started_at) - self.started_at).total_seconds()
