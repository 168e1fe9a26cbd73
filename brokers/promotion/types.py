"""Frozen dataclasses of promotion jobs, between the job services/selectors and the views, templates
and serializers (no ORM row leaves the package)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from brokers.gateway.promotion import PromotionResult
from console.tracked_jobs import JobTiming


@dataclass(frozen=True)
class MemberState:
    """One member of the group as a job recorded it (before or after)."""

    broker_id: int
    addr: str
    status: str  # live, not answering, expired
    role: str = ""
    epoch: int | None = None
    connection: str = ""  # haConnectionState
    lag_bytes: int | None = None
    lag_ms: int | None = None
    master_addr: str = ""


@dataclass(frozen=True)
class GroupState:
    """A broker group as a job recorded it: its members, and the master's address per the name servers."""

    broker_name: str
    members: tuple[MemberState, ...] = ()
    master_addr: str = ""  # brokerId 0's address in the name servers' route ("" none)
    epoch: int | None = None

    @property
    def recorded(self) -> bool:
        return bool(self.broker_name)


@dataclass(frozen=True)
class PromotionJobView(JobTiming):
    """A promotion job as the API and the console show it."""

    id: int
    requested_by: str
    source: str
    broker_name: str
    broker_id: int
    candidate_addr: str
    role: str
    force: bool
    dry_run: bool
    status: str  # queued, running, planned, promoted, refused, failed
    reason: str
    progress: str
    attempts: int
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    heartbeat_at: datetime | None
    plan: PromotionResult | None  # the candidate's answer (None before it answered)
    before: GroupState
    after: GroupState
    namesrv_set: str = "default"  # the tier it runs against (docs/clusters.md)

    @property
    def candidate(self) -> str:
        return f"{self.broker_name} id {self.broker_id} ({self.candidate_addr})"

    @property
    def summary(self) -> str:
        """What the promotion would do (a plan) or did, in one sentence."""
        p = self.plan
        if p is None:
            return ""
        verb = "would promote" if self.dry_run else ("promoted" if p.promoted else "did not promote")
        return (
            f"{verb} {self.candidate} from {p.from_role or 'SLAVE'} to {p.to_role or '?'}, group epoch {p.epoch} → {p.new_epoch}; "
            f"it holds the commit log up to {p.max_phy_offset:,} (master's last known end {p.known_master_max_offset:,}, "
            f"acknowledged up to {p.acked_offset:,})"
        )


@dataclass(frozen=True)
class Triggered:
    """What a trigger answered: the job, and whether it is new (202) or the one already active (200)."""

    job: PromotionJobView
    created: bool
