"""What every tracked Celery job view shares (rebalance jobs, promotion jobs): its states and timing.

A job is queued, then running, then ends in a state of its own kind (converged, planned, promoted,
refused, failed ...); :class:`JobTiming` gives a frozen job view its ``active`` flag, the status as
text, and its duration (to the finish, else to the last heartbeat of a running job).
"""

from __future__ import annotations

from datetime import datetime

from django.utils.translation import gettext, gettext_noop

ACTIVE = ("queued", "running")  # the states a job can still leave
STATUS_TEXTS = {  # the status as a page shows it, in the page's language (the API keeps the status itself)
    "queued": gettext_noop("queued"),
    "running": gettext_noop("running"),
    "planned": gettext_noop("planned"),
    "converged": gettext_noop("converged"),
    "not_converged": gettext_noop("not converged"),
    "promoted": gettext_noop("promoted"),
    "refused": gettext_noop("refused"),
    "failed": gettext_noop("failed"),
    "pending": gettext_noop("pending"),
    "skipped": gettext_noop("skipped"),
}


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
        return gettext(STATUS_TEXTS[self.status]) if self.status in STATUS_TEXTS else self.status.replace("_", " ")

    @property
    def duration_s(self) -> float | None:
        if self.started_at is None:
            return None
        return ((self.finished_at or self.heartbeat_at or self.started_at) - self.started_at).total_seconds()
