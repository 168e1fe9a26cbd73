"""Consumer-group background work: rebalance jobs (the periodic health scan is health/tasks.py).

Tasks are thin: JSON arguments (a job id), one service call. Their hard time limits come from
``settings.GANTRY_TASK_TIME_LIMITS`` (below Redis's visibility timeout, so a message is only
delivered again when its worker died); the soft limit leaves the job time to record how it ended.
"""

from __future__ import annotations

import redis
from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from brokers.gateway.errors import RemotingConnectError, RemotingTimeoutError
from console.audit import describe_failure
from consumers.rebalance import jobs, runner

# Connection errors worth another try (a name server or broker restarting, Redis failing over).
TRANSIENT_ERRORS = (RemotingConnectError, RemotingTimeoutError, redis.ConnectionError, redis.TimeoutError)
CONCLUDE_MARGIN_S = 2  # of the soft limit, kept for recording the outcome after the last poll


def _limits(kind: str) -> tuple[int, int]:
    """(hard, soft) seconds: the soft limit a tenth earlier (1..10 s) so the task can still write the outcome."""
    hard = int(settings.GANTRY_TASK_TIME_LIMITS[kind])
    return hard, max(1, hard - max(1, min(10, hard // 10)))


REBALANCE_LIMIT_S, REBALANCE_SOFT_LIMIT_S = _limits("rebalance")


class RebalanceTask(Task):
    """Fails the job when the task gives up (last retry spent, or an unexpected error): never left running."""

    def on_failure(self, exc, task_id, args, kwargs, einfo) -> None:
        job_id = (kwargs or {}).get("job_id")
        if isinstance(job_id, int):
            jobs.rebalance_job_fail(job_id=job_id, reason=describe_failure(exc))


@shared_task(
    bind=True,
    base=RebalanceTask,
    name=jobs.REBALANCE_TASK,
    acks_late=True,
    time_limit=REBALANCE_LIMIT_S,
    soft_time_limit=REBALANCE_SOFT_LIMIT_S,
    autoretry_for=TRANSIENT_ERRORS,
    max_retries=3,
    retry_backoff=1,
    retry_backoff_max=5,
    retry_jitter=False,
)
def rebalance_job_task(self, job_id: int) -> str:
    """Run rebalance job ``job_id``; its final status. A redelivered message of a finished job does nothing."""
    try:
        return runner.rebalance_job_run(job_id=job_id, budget_s=REBALANCE_SOFT_LIMIT_S - CONCLUDE_MARGIN_S)
    except SoftTimeLimitExceeded:
        jobs.rebalance_job_fail(
            job_id=job_id, reason=f"the task's time limit ({REBALANCE_SOFT_LIMIT_S} s) passed before the job ended"
        )
        return "failed"
