"""Rebalance rows as the frozen dataclasses of :mod:`consumers.rebalance.types`."""

from __future__ import annotations

from consumers.models import RebalanceGroupResult, RebalanceJob, RebalanceQueueChange
from consumers.rebalance.types import GroupResult, Job, QueueChange


def change_view(row: RebalanceQueueChange) -> QueueChange:
    return QueueChange(
        row.topic,
        row.broker_name,
        row.queue_id,
        row.owner_before,
        row.owner_expected,
        row.owner_after,
        row.moved,
        row.job_id,
        row.group,
        row.created_at,
    )


def group_view(row: RebalanceGroupResult, changes: bool = True) -> GroupResult:
    return GroupResult(
        group=row.group,
        status=row.status,
        reason=row.reason,
        strategy=row.strategy,
        expected_known=row.expected_known,
        members_before=tuple(row.members_before),
        members_after=tuple(row.members_after),
        queues_total=row.queues_total,
        queues_moved=row.queues_moved,
        notified=dict(row.notified),
        changes=tuple(change_view(c) for c in row.changes.all()) if changes else (),
    )


def job_view(row: RebalanceJob, groups: bool = False) -> Job:
    """The job; with ``groups``, its per-group results and every queue's before/expected/after."""
    results: tuple[GroupResult, ...] = ()
    if groups:
        results = tuple(group_view(r) for r in row.group_results.prefetch_related("changes").all())
    return Job(
        id=row.pk,
        requested_by=row.requested_by,
        source=row.source,
        scope=row.scope,
        scope_value=row.scope_value,
        dry_run=row.dry_run,
        status=row.status,
        reason=row.reason,
        progress=row.progress,
        timeout_s=row.timeout_s,
        attempts=row.attempts,
        created_at=row.created_at,
        started_at=row.started_at,
        finished_at=row.finished_at,
        heartbeat_at=row.heartbeat_at,
        groups_total=row.groups_total,
        groups_converged=row.groups_converged,
        queues_moved=row.queues_moved,
        groups=results,
        namesrv_set=row.namesrv_set,
    )
