"""Reads of promotion jobs: one job, the history (filtered), a group's newest job.

Every read first fails the jobs it would show whose worker is gone (an expired lease), so a job
is never shown running after its worker died.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import QuerySet

from brokers.gateway import namesrv_sets
from brokers.models import PromotionJob
from brokers.promotion.jobs import job_or_404, promotion_jobs_sweep
from brokers.promotion.snapshots import job_view
from brokers.promotion.types import PromotionJobView


def promotion_job_get(*, job_id: int) -> PromotionJobView:
    """One job; NotFound when there is none."""
    promotion_jobs_sweep(jobs=PromotionJob.objects.filter(pk=job_id))
    return job_view(job_or_404(job_id))


def promotion_job_list(
    *, broker_name: str = "", statuses: frozenset[str] = frozenset(), dry_run: bool | None = None
) -> QuerySet[PromotionJob]:
    """The jobs matching the filters, newest first, as a lazy queryset (callers paginate, then :func:`job_views`)."""
    promotion_jobs_sweep(jobs=PromotionJob.objects.filter(status__in=PromotionJob.ACTIVE))
    jobs = PromotionJob.objects.filter(namesrv_set=namesrv_sets.current_name())  # the current set's jobs only
    if broker_name:
        jobs = jobs.filter(broker_name=broker_name)
    if statuses:
        jobs = jobs.filter(status__in=statuses)
    if dry_run is not None:
        jobs = jobs.filter(dry_run=dry_run)
    return jobs.order_by("-created_at", "-id")


def job_views(rows: Iterable[PromotionJob]) -> list[PromotionJobView]:
    return [job_view(r) for r in rows]


def latest_group_job(*, broker_name: str) -> PromotionJobView | None:
    """The group's newest job (its page's promotion panel)."""
    row = PromotionJob.objects.filter(namesrv_set=namesrv_sets.current_name(), broker_name=broker_name).first()
    if row is None:
        return None
    promotion_jobs_sweep(jobs=PromotionJob.objects.filter(pk=row.pk))
    row.refresh_from_db()
    return job_view(row)
