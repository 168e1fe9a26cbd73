"""Broker-group background work: promotion jobs.

Thin like every task: a job id in, one call of the job's runner. The hard time limit comes from
``settings.GANTRY_TASK_TIME_LIMITS["promotion"]`` (below Redis's visibility timeout); connection
errors are retried (a candidate or name server restarting), and a task that gives up fails its
job, so a job never stays running.
"""

from __future__ import annotations

from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from brokers.gateway.errors import RemotingConnectError, RemotingTimeoutError
from brokers.promotion import jobs, runner
from console.audit import describe_failure

TRANSIENT_ERRORS = (RemotingConnectError, RemotingTimeoutError)  # worth another try
CONCLUDE_MARGIN_S = 2  # of the soft limit, kept for recording the outcome


def _limits() -> tuple[int, int]:
    """(hard, soft) seconds: the soft limit a tenth earlier (1..10 s) so the task can still write the outcome."""
    hard = int(settings.GANTRY_TASK_TIME_LIMITS["promotion"])
    return hard, max(1, hard - max(1, min(10, hard // 10)))


PROMOTION_LIMIT_S, PROMOTION_SOFT_LIMIT_S = _limits()


class PromotionTask(Task):
    """Fails the job when the task gives up (last retry spent, or an unexpected error)."""

    def on_failure(self, exc, task_id, args, kwargs, einfo) -> None:
        job_id = (kwargs or {}).get("job_id")
        if isinstance(job_id, int):
            jobs.promotion_job_fail(job_id=job_id, reason=describe_failure(exc))


@shared_task(
    bind=True,
    base=PromotionTask,
    name=jobs.PROMOTION_TASK,
    acks_late=True,
    time_limit=PROMOTION_LIMIT_S,
    soft_time_limit=PROMOTION_SOFT_LIMIT_S,
    autoretry_for=TRANSIENT_ERRORS,
    max_retries=3,
    retry_backoff=1,
    retry_backoff_max=5,
    retry_jitter=False,
)
def promotion_job_task(self, job_id: int) -> str:
    """Run promotion job ``job_id``; its final status. A redelivered message of a finished job does nothing."""
    try:
        return runner.promotion_job_run(job_id=job_id, budget_s=PROMOTION_SOFT_LIMIT_S - CONCLUDE_MARGIN_S)
    except SoftTimeLimitExceeded:
        jobs.promotion_job_fail(
            job_id=job_id, reason=f"the task's time limit ({PROMOTION_SOFT_LIMIT_S} s) passed before the job ended"
        )
        return "failed"
