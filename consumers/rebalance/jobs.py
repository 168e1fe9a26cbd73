"""Rebalance jobs: trigger one (the two front doors), finish one, fail the ones whose worker is gone.

A trigger creates the job (``queued``) in its own transaction, then hands ``job_id`` to Celery
(:func:`console.queueing.submit`, task id = the job's ``task_id``), naming the task by
:data:`REBALANCE_TASK`: the task module calls this one, never the other way round. The
database allows one active (queued or running) job per scope key, so two triggers racing for
one group get one job:
the loser answers with the job already active (HTTP 200 instead of 202). When Redis is down
the submit fails within a second (QueueUnavailable, HTTP 503) and the job is failed with that
reason at once: nothing stays queued that no worker will ever see.

A running job holds a lease (``lease_until``) that its worker renews at every poll. A job whose
lease passed lost its worker (killed, or cut off): :func:`rebalance_jobs_sweep` (the health scan,
every read of a job, every trigger of its scope) fails it with the reason "worker lost". A
redelivered task of a job that is still running takes it over (same job, ``attempts`` + 1); one
that finds its job finished does nothing.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from celery import signature
from django.db import IntegrityError, transaction
from django.db.models import QuerySet

from brokers.gateway import namesrv_sets
from brokers.gateway.cluster import masters_by_addr
from brokers.gateway.connections import consumer_connections
from brokers.gateway.groups import group_survey
from brokers.gateway.topic_routes import topic_route_data
from console.actor import Actor
from console.audit import audited
from console.errors import Conflict, InvalidInput, NotFound, QueueUnavailable
from console.queueing import submit
from console.roles import Role
from consumers.models import RebalanceJob
from consumers.rebalance import records
from consumers.rebalance.types import Triggered
from consumers.rules import checked_group, checked_topic

DEFAULT_TIMEOUT_S = 30  # a group converges in about a second once notified; 30 s covers slow members and retries
MAX_TIMEOUT_S = 300  # the rebalance task's hard limit (settings.GANTRY_TASK_TIME_LIMITS) caps it again
SCOPES = (RebalanceJob.GROUP, RebalanceJob.TOPIC, RebalanceJob.ALL)
REBALANCE_TASK = "consumers.tasks.rebalance_job_task"  # the Celery task that runs a job (its registered name)


def scope_key(scope: str, value: str, dry_run: bool) -> str:
    """The key of "one active job at a time": dry runs change nothing, so they never block an apply."""
    return f"{'dry' if dry_run else 'apply'}:{scope}" + (f":{value}" if scope != RebalanceJob.ALL else "")


def cluster_masters() -> dict[str, str]:
    """Master address -> broker name of every broker group the name server knows."""
    return masters_by_addr()


def _require_online_group(name: str) -> None:
    """NotFound for a group no broker knows; Conflict for one with no member online or broadcasting."""
    brokers = cluster_masters()
    conns = consumer_connections([name], brokers)[name]
    if conns.online:
        if (conns.message_model or "CLUSTERING") != "CLUSTERING":
            raise Conflict(
                f"consumer group {name} is {conns.message_model}: every member consumes every queue, there is nothing to rebalance"
            )
        return
    surveys = group_survey(brokers, lag=False).values()
    if not any(name in s.configs or any(g == name for _, g in s.offsets) for s in surveys):
        raise NotFound(f"consumer group {name} does not exist")
    raise Conflict(f"no member of consumer group {name} is online: there is nothing to rebalance")


def _checked_scope(scope: str, value: str) -> str:
    if scope not in SCOPES:
        raise InvalidInput("scope", f"must be one of {', '.join(SCOPES)}.")
    if scope == RebalanceJob.GROUP:
        value = checked_group(value, "group")
        _require_online_group(value)
    elif scope == RebalanceJob.TOPIC:
        value = checked_topic(value, "topic")
        topic_route_data(value)  # NotFound when the topic does not exist
    else:
        value = ""
    return value


def _checked_timeout(timeout_s: int | None) -> int:
    if timeout_s is None:
        return DEFAULT_TIMEOUT_S
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, int) or not 1 <= timeout_s <= MAX_TIMEOUT_S:
        raise InvalidInput("timeout_s", f"must be an integer from 1 to {MAX_TIMEOUT_S} (seconds).")
    return timeout_s


def rebalance_trigger(
    *, actor: Actor, scope: str, value: str = "", dry_run: bool = True, timeout_s: int | None = None
) -> Triggered:
    """Trigger a rebalance of a group, the groups of a topic, or every online group.

    A dry run records the expected movement and notifies nobody; an apply makes the brokers
    notify the members (NOTIFY_CONSUMER_IDS_CHANGED) and waits for convergence (audited).
    Returns the new job, or the one already active for the same scope (``created`` False).
    """
    actor.require(Role.OPERATOR)
    timeout = _checked_timeout(timeout_s)
    if dry_run:
        return _trigger(actor, scope, _checked_scope(scope, value), True, timeout)
    target_type = {"group": "group", "topic": "topic", "all": "cluster"}.get(scope, "group")
    with audited(
        actor=actor, action=f"{target_type}.rebalance", target_type=target_type, target=value or "all groups"
    ) as note:
        note.before = {"scope": scope, "value": value, "timeout_s": timeout}
        triggered = _trigger(actor, scope, _checked_scope(scope, value), False, timeout)
        note.after = {"job": triggered.job.id, "status": triggered.job.status}
        if not triggered.created:
            note.reason = f"job {triggered.job.id} was already {triggered.job.status} for this scope: no new job"
    return triggered


def _trigger(actor: Actor, scope: str, value: str, dry_run: bool, timeout_s: int) -> Triggered:
    key, tier = scope_key(scope, value, dry_run), namesrv_sets.current_name()  # one active job per set and key
    rebalance_jobs_sweep(
        jobs=RebalanceJob.objects.filter(namesrv_set=tier, scope_key=key)
    )  # an active job whose worker vanished no longer blocks
    for _ in range(3):  # create, or find the active one; retried when the active one finished in between
        try:
            with transaction.atomic():
                job = RebalanceJob.objects.create(
                    requested_by=actor.username,
                    source=actor.source,
                    scope=scope,
                    scope_value=value,
                    namesrv_set=tier,
                    scope_key=key,
                    dry_run=dry_run,
                    timeout_s=timeout_s,
                    task_id=str(uuid.uuid4()),
                )
            break
        except IntegrityError:
            active = RebalanceJob.objects.filter(
                namesrv_set=tier, scope_key=key, status__in=RebalanceJob.ACTIVE
            ).first()
            if active is not None:
                return Triggered(records.job_view(active), False)
    else:
        raise Conflict("another rebalance of this scope was being created; try again")
    try:
        submit(signature(REBALANCE_TASK), kwargs={"job_id": job.pk}, task_id=job.task_id)
    except QueueUnavailable as exc:
        rebalance_job_fail(job_id=job.pk, reason=exc.message)
        raise
    job.refresh_from_db()
    return Triggered(records.job_view(job), True)


# -- finishing -------------------------------------------------------------------------------------------


def rebalance_job_fail(*, job_id: int, reason: str) -> bool:
    """Fail an active job (and its unfinished groups) with ``reason``; False when it had finished."""
    return RebalanceJob.fail(job_id, reason)


def rebalance_jobs_sweep_set(namesrv_set: str) -> int:
    """The health scan's sweep (``settings.GANTRY_HEALTH_SCAN_SWEEPS``): the set's jobs that lost their worker, failed."""
    return rebalance_jobs_sweep(jobs=RebalanceJob.objects.filter(namesrv_set=namesrv_set))


def rebalance_jobs_sweep(*, jobs: QuerySet[RebalanceJob] | None = None, now: datetime | None = None) -> int:
    """Fail the active jobs of ``jobs`` (default: all) that lost their worker; how many were failed.

    Running with its lease passed: the worker died or was cut off (a redelivered task finds the
    job finished and does nothing). Queued for longer than ``RebalanceJob.QUEUED_MAX_S``: no
    worker took it. One sweep for every leased job: :meth:`console.leased_jobs.LeasedJob.sweep`.
    """
    return len(RebalanceJob.sweep(jobs=jobs, now=now))


def job_or_404(job_id: int) -> RebalanceJob:
    job = RebalanceJob.objects.filter(pk=job_id).first()
    if job is None:
        raise NotFound(f"rebalance job {job_id} does not exist")
    return job
