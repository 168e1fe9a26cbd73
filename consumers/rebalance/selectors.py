"""Reads of rebalance jobs: one job (with its groups and queue changes), the filtered history,
and a group's queue moves over its jobs (so a flapping group shows).

Every read first fails the jobs it would show whose worker is gone (an expired lease), so a
job is never shown "running" after its worker died, even when no health scan runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.core.paginator import Paginator
from django.db.models import Q, QuerySet

from brokers.gateway import namesrv_sets
from consumers.models import RebalanceJob, RebalanceQueueChange
from consumers.rebalance import records
from consumers.rebalance.jobs import job_or_404, rebalance_jobs_sweep
from consumers.rebalance.types import Job, JobPage, QueueChange

MOVES_SHOWN = 200  # queue moves listed on a group's history (newest first)


@dataclass(frozen=True)
class JobFilter:
    group: str = ""  # jobs that touched the group (its own, or a topic/all job that included it)
    topic: str = ""  # topic-scope jobs of the topic, and jobs that moved one of its queues
    status: frozenset[str] = frozenset()
    scope: str = ""
    dry_run: bool | None = None
    since: datetime | None = None
    until: datetime | None = None
    requested_by: str = ""


def rebalance_job_get(*, job_id: int) -> Job:
    """One job with its per-group results and queue rows; NotFound when there is none."""
    rebalance_jobs_sweep(jobs=RebalanceJob.objects.filter(pk=job_id))
    return records.job_view(job_or_404(job_id), groups=True)


def _filtered(f: JobFilter) -> QuerySet[RebalanceJob]:
    jobs = RebalanceJob.objects.filter(namesrv_set=namesrv_sets.current_name())  # the current set's jobs only
    if f.group:
        jobs = jobs.filter(Q(scope=RebalanceJob.GROUP, scope_value=f.group) | Q(group_results__group=f.group))
    if f.topic:
        jobs = jobs.filter(Q(scope=RebalanceJob.TOPIC, scope_value=f.topic) | Q(queue_changes__topic=f.topic))
    if f.status:
        jobs = jobs.filter(status__in=f.status)
    if f.scope:
        jobs = jobs.filter(scope=f.scope)
    if f.dry_run is not None:
        jobs = jobs.filter(dry_run=f.dry_run)
    if f.since is not None:
        jobs = jobs.filter(created_at__gte=f.since)
    if f.until is not None:
        jobs = jobs.filter(created_at__lt=f.until)
    if f.requested_by:
        jobs = jobs.filter(requested_by=f.requested_by)
    return jobs.distinct().order_by("-created_at", "-id")


def rebalance_job_list(*, filters: JobFilter = JobFilter()) -> QuerySet[RebalanceJob]:
    """The jobs matching ``filters``, newest first, as a lazy queryset: the callers paginate it,
    then render each page's rows with :func:`job_views`."""
    rebalance_jobs_sweep(jobs=RebalanceJob.objects.filter(status__in=RebalanceJob.ACTIVE))
    return _filtered(filters)


def job_views(rows: Iterable[RebalanceJob]) -> list[Job]:
    return [records.job_view(r) for r in rows]


def group_moves(*, group: str, filters: JobFilter = JobFilter()) -> tuple[QueueChange, ...]:
    """The queues a group's applied jobs moved, newest first: the same queue moving back and
    forth between jobs is a flapping group."""
    rows = RebalanceQueueChange.objects.filter(
        group=group, moved=True, job__dry_run=False, job__namesrv_set=namesrv_sets.current_name()
    )
    if filters.since is not None:
        rows = rows.filter(created_at__gte=filters.since)
    if filters.until is not None:
        rows = rows.filter(created_at__lt=filters.until)
    return tuple(
        records.change_view(r)
        for r in rows.order_by("-created_at", "-job_id", "topic", "broker_name", "queue_id")[:MOVES_SHOWN]
    )


def rebalance_history(*, filters: JobFilter, page_number: object = 1, per_page: int = 50) -> JobPage:
    """The console's history page: one page of jobs, newest first, and with a group its queue moves."""
    rows = rebalance_job_list(filters=filters)
    page = Paginator(range(rows.count()), per_page).get_page(page_number)
    jobs = job_views(rows[page.start_index() - 1 : page.end_index()]) if page.paginator.count else []
    return JobPage(tuple(jobs), group_moves(group=filters.group, filters=filters) if filters.group else (), page)


def latest_group_job(*, group: str) -> Job | None:
    """The group's newest own job, with its queue rows (the group page's rebalance panel)."""
    row = RebalanceJob.objects.filter(
        namesrv_set=namesrv_sets.current_name(), scope=RebalanceJob.GROUP, scope_value=group
    ).first()
    if row is None:
        return None
    rebalance_jobs_sweep(jobs=RebalanceJob.objects.filter(pk=row.pk))
    row.refresh_from_db()
    return records.job_view(row, groups=True)
