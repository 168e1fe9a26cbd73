"""Frozen dataclasses of rebalance jobs, between the job services/selectors and the views,
templates and serializers (no ORM row leaves the package)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.utils.translation import gettext

from console.tracked_jobs import STATUS_TEXTS, JobTiming

FINISHED = ("planned", "converged", "not_converged", "failed")


@dataclass(frozen=True)
class QueueChange:
    """One queue of a group in a job: holders before, the expected owner, holders after."""

    topic: str
    broker_name: str
    queue_id: int
    before: str  # client ids joined by ", "; "" nobody
    expected: str  # "" unknown (the strategy needs its configuration) or nobody
    after: str  # "" until the job finished (or nobody)
    moved: bool
    job_id: int = 0
    group: str = ""
    at: datetime | None = None

    @property
    def queue(self) -> str:
        return f"{self.broker_name}:{self.queue_id}"


@dataclass(frozen=True)
class GroupResult:
    group: str
    status: str  # pending, planned, converged, not_converged, failed, skipped
    reason: str
    strategy: str
    expected_known: bool
    members_before: tuple[str, ...]
    members_after: tuple[str, ...]
    queues_total: int
    queues_moved: int
    notified: dict
    changes: tuple[QueueChange, ...] = ()

    @property
    def moves(self) -> tuple[QueueChange, ...]:
        return tuple(c for c in self.changes if c.moved)

    @property
    def status_text(self) -> str:
        """The status in the page's language (the API keeps the status itself)."""
        return gettext(STATUS_TEXTS[self.status]) if self.status in STATUS_TEXTS else self.status.replace("_", " ")


@dataclass(frozen=True)
class Job(JobTiming):
    """A rebalance job as the API and the console show it."""

    id: int
    requested_by: str
    source: str
    scope: str  # group, topic, all
    scope_value: str
    dry_run: bool
    status: str  # queued, running, planned, converged, not_converged, failed
    reason: str
    progress: str
    timeout_s: int
    attempts: int
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    heartbeat_at: datetime | None
    groups_total: int
    groups_converged: int
    queues_moved: int
    groups: tuple[GroupResult, ...] = ()
    namesrv_set: str = "default"  # the tier it runs against (docs/clusters.md)

    @property
    def target(self) -> str:
        return self.scope_value if self.scope != "all" else "all groups"

    @property
    def group(self) -> str | None:
        """The group of a single-group job (its page offers Apply after a dry run)."""
        return self.scope_value if self.scope == "group" else None


@dataclass(frozen=True)
class Triggered:
    """What a trigger answered: the job, and whether it is new (202) or the one already active (200)."""

    job: Job
    created: bool


@dataclass(frozen=True)
class JobPage:
    """A filtered list of jobs, and the queue moves of one group (its flapping history)."""

    jobs: tuple[Job, ...]
    moves: tuple[QueueChange, ...] = ()
    page: Any = None  # a django Page over row numbers (no rows in it), for the pager
