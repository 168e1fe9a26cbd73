"""Promotion jobs: trigger one (the two front doors), finish one, fail the ones whose worker is gone.

A trigger checks the request against the cluster before anything is created — the broker name
is known to the name servers, the id is a live slave of it (the candidate's own runtime says
SLAVE) — then creates the job (``queued``) and hands ``job_id`` to Celery
(:func:`console.queueing.submit`, task id = the job's ``task_id``), naming the task by
:data:`PROMOTION_TASK`. A refused request changes nothing and creates no job. The database
allows one active job per ``scope_key`` (``apply:<broker name>``, ``dry:<broker name>``: a dry
run changes nothing, so it never blocks an apply), so two requests racing for one group get one
job: the second answers with the job already active (HTTP 200 instead of 202). When Redis is
down the submit fails within a second (HTTP 503) and the job is failed with that reason at once.

A running job holds a lease (``lease_until``) its worker renews; a job whose lease passed lost
its worker: :func:`promotion_jobs_sweep` (every read of a job, every trigger for its group)
fails it. The lease is :class:`console.leased_jobs.LeasedJob`'s (``PromotionJob.LEASE_S``,
``QUEUED_MAX_S``). Applies are audited twice: the request (``broker.promote``: the group before, the
job) and the job's end (``broker.promote.finished``: the group before and after, the
candidate's answer; failed with the reason when it did not promote).
"""

from __future__ import annotations

import uuid
from datetime import datetime

from celery import signature
from django.db import IntegrityError, transaction
from django.db.models import QuerySet

from brokers.engine.common.topic_validator import InvalidNameError, validate_broker_name
from brokers.gateway import namesrv_sets
from brokers.gateway.overview import LIVE, BrokerRow, broker_group
from brokers.gateway.promotion import PROMOTION_ROLES
from brokers.models import PromotionJob
from brokers.promotion.snapshots import group_json, job_view
from brokers.promotion.types import Triggered
from console.actor import Actor
from console.audit import audited
from console.errors import Conflict, InvalidInput, NotFound, QueueUnavailable
from console.queueing import submit
from console.roles import Role

PROMOTION_TASK = "brokers.tasks.promotion_job_task"  # the Celery task that runs a job (its registered name)


def scope_key(broker_name: str, dry_run: bool) -> str:
    """The key of "one active job at a time" per broker group; dry runs never block an apply."""
    return f"{'dry' if dry_run else 'apply'}:{broker_name}"


def checked_request(broker_name: object, broker_id: object, force: object, dry_run: object, role: object) -> None:
    """InvalidInput naming the field for a request that cannot be a promotion (before the cluster is asked)."""
    if not isinstance(broker_name, str):
        raise InvalidInput("name", "must be a broker name.")
    try:
        validate_broker_name(broker_name)
    except InvalidNameError as exc:
        raise InvalidInput("name", f"illegal broker name: {exc}") from None
    if isinstance(broker_id, bool) or not isinstance(broker_id, int) or broker_id < 0:
        raise InvalidInput("broker_id", "must be a broker id: an integer >= 1 (a slave's id).")
    if not isinstance(force, bool):
        raise InvalidInput("force", "must be true or false.")
    if not isinstance(dry_run, bool):
        raise InvalidInput("dry_run", "must be true or false.")
    if role not in (None, "", *PROMOTION_ROLES):
        raise InvalidInput(
            "role", f"must be one of {', '.join(PROMOTION_ROLES)} (default: the role of the group's master)."
        )


def checked_candidate(broker_name: str, broker_id: int) -> tuple[BrokerRow, dict]:
    """The candidate slave's row and the group's JSON; NotFound, InvalidInput (broker_id) or Conflict."""
    group = broker_group(broker_name)  # NotFound when no name server knows it
    members = ", ".join(
        f"{m.broker_id} ({'master' if m.broker_id == 0 else 'slave'}, {m.addr}, {m.status})" for m in group.members
    )
    if broker_id == 0:
        raise InvalidInput(
            "broker_id",
            f"id 0 is the master of {broker_name}; only a slave (id >= 1) can be promoted. Members: {members}.",
        )
    candidate = group.member(broker_id)
    if candidate is None:
        raise InvalidInput("broker_id", f"{broker_name} has no broker with id {broker_id}. Members: {members}.")
    if candidate.status != LIVE:
        raise Conflict(
            f"{broker_name} id {broker_id} ({candidate.addr}) is {candidate.status}: "
            f"a promotion needs the candidate running{f' ({candidate.error})' if candidate.error else ''}"
        )
    if candidate.ha is not None and not candidate.ha.is_slave:
        raise Conflict(
            f"{broker_name} id {broker_id} ({candidate.addr}) is not a slave (role {candidate.ha.role}); "
            "only a slave can be promoted"
        )
    return candidate, group_json(group)


def promotion_trigger(
    *,
    actor: Actor,
    broker_name: str,
    broker_id: int,
    force: bool = False,
    dry_run: bool = True,
    role: str | None = None,
) -> Triggered:
    """Promote slave ``broker_id`` of ``broker_name`` to master (admin), or plan it (``dry_run``, the default).

    A dry run asks the candidate what the promotion would do and lose; nothing changes. An apply
    asks it to promote itself (refused when it lacks acknowledged data, or while its master is
    alive, unless ``force``). Returns the new job, or the one already active (``created`` False).
    """
    actor.require(Role.ADMIN)
    checked_request(broker_name, broker_id, force, dry_run, role)
    if dry_run:
        candidate, before = checked_candidate(broker_name, broker_id)
        return _trigger(actor, broker_name, broker_id, candidate.addr, force, True, role or "", before)
    with audited(
        actor=actor, action="broker.promote", target_type="broker", target=f"{broker_name} id {broker_id}"
    ) as note:
        note.before = {"broker_name": broker_name, "broker_id": broker_id, "force": force, "role": role or ""}
        candidate, before = checked_candidate(broker_name, broker_id)
        note.before["group"] = before
        triggered = _trigger(actor, broker_name, broker_id, candidate.addr, force, False, role or "", before)
        note.after = {"job": triggered.job.id, "status": triggered.job.status}
        if not triggered.created:
            note.reason = f"job {triggered.job.id} was already {triggered.job.status} for {broker_name}: no new job"
    return triggered


def _trigger(
    actor: Actor, broker_name: str, broker_id: int, addr: str, force: bool, dry_run: bool, role: str, before: dict
) -> Triggered:
    key, tier = scope_key(broker_name, dry_run), namesrv_sets.current_name()  # one active job per set and key
    promotion_jobs_sweep(
        jobs=PromotionJob.objects.filter(namesrv_set=tier, scope_key=key)
    )  # an active job whose worker vanished no longer blocks
    for _ in range(3):  # create, or find the active one; retried when the active one finished in between
        try:
            with transaction.atomic():
                job = PromotionJob.objects.create(
                    requested_by=actor.username,
                    source=actor.source,
                    broker_name=broker_name,
                    broker_id=broker_id,
                    candidate_addr=addr,
                    role=role,
                    force=force,
                    dry_run=dry_run,
                    namesrv_set=tier,
                    scope_key=key,
                    before=before,
                    task_id=str(uuid.uuid4()),
                )
            break
        except IntegrityError:
            active = PromotionJob.objects.filter(
                namesrv_set=tier, scope_key=key, status__in=PromotionJob.ACTIVE
            ).first()
            if active is not None:
                return Triggered(job_view(active), False)
    else:
        raise Conflict(f"another promotion of {broker_name} was being created; try again")
    try:
        submit(signature(PROMOTION_TASK), kwargs={"job_id": job.pk}, task_id=job.task_id)
    except QueueUnavailable as exc:
        promotion_job_fail(job_id=job.pk, reason=exc.message)
        raise
    job.refresh_from_db()
    return Triggered(job_view(job), True)


# -- finishing -------------------------------------------------------------------------------------------


def promotion_job_fail(*, job_id: int, reason: str) -> bool:
    """Fail an active job with ``reason``; False when it had finished."""
    return PromotionJob.fail(job_id, reason)


def promotion_jobs_sweep(*, jobs: QuerySet[PromotionJob] | None = None, now: datetime | None = None) -> int:
    """Fail the active jobs of ``jobs`` (default: all) that lost their worker (:meth:`LeasedJob.sweep`); how many."""
    return len(PromotionJob.sweep(jobs=jobs, now=now))


def job_or_404(job_id: int) -> PromotionJob:
    job = PromotionJob.objects.filter(pk=job_id).first()
    if job is None:
        raise NotFound(f"promotion job {job_id} does not exist")
    return job
