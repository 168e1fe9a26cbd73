"""Running a promotion job (the Celery task's body).

1. Take the job (:meth:`console.leased_jobs.LeasedJob.take`, taking over a running one: the
   task's retry or redelivery): a finished job is left alone (a redelivered message does nothing);
   an active one is marked running with a fresh lease, ``attempts`` + 1.
2. A redelivered apply first looks at the candidate: one that is no longer a slave promoted
   itself on the first delivery, and the job records that instead of asking again.
3. Ask the candidate (GANTRY_PROMOTE_SLAVE, 10004) with ``dryRun`` as the job says; the answer's
   JSON is the job's ``plan``.
4. Dry run: ``planned``, with the reason a real run would be refused (if it would).
   Apply: ``promoted`` once the candidate says so, then wait (at most ROUTE_WAIT_S) for the name
   servers to route the group's brokerId 0 to it, noting in the reason when they did not yet;
   a refusal (SYSTEM_ERROR) is ``refused`` with the broker's remark (what would be lost).
   REQUEST_CODE_NOT_SUPPORTED (an Apache broker, or a Gantry broker without promotion) is
   ``failed`` with a reason that says so. Connection errors propagate: the task retries them.
5. Record the group after (applies) and audit the end (``broker.promote.finished``).
"""

from __future__ import annotations

import logging
import time

from brokers.gateway.cluster import cluster_info
from brokers.gateway.errors import MQBrokerError, RemotingError
from brokers.gateway.overview import broker_group
from brokers.gateway.promotion import PromotionNotSupported, PromotionRefused, slave_promote
from brokers.models import PromotionJob
from brokers.promotion.snapshots import group_json, job_view
from console.actor import Actor
from console.audit import record_audit
from console.errors import ServiceError
from console.roles import Role

log = logging.getLogger(__name__)

ROUTE_WAIT_S = 15.0  # a promoted broker registers as brokerId 0 at once; the name servers answer within this
POLL_INTERVAL_S = 0.5


def _take(job_id: int) -> PromotionJob | None:
    """Mark the job running (a redelivery or a retry takes it over); None when it finished already."""
    return PromotionJob.take(job_id, takeover=True)


def _heartbeat(job: PromotionJob, progress: str) -> None:
    PromotionJob.heartbeat(job.pk, progress=progress)


def _group_now(job: PromotionJob) -> dict:
    try:
        return group_json(broker_group(job.broker_name))
    except (RemotingError, ServiceError) as exc:
        return {"broker_name": job.broker_name, "error": str(exc), "members": []}


def _finish(
    job: PromotionJob, status: str, reason: str = "", *, plan: dict | None = None, after: dict | None = None
) -> str:
    fields: dict = {"reason": reason[: PromotionJob.REASON_MAX]}
    if plan is not None:
        fields["plan"] = plan
    if after is not None:
        fields["after"] = after
    fields["progress"] = {
        PromotionJob.PLANNED: "planned",
        PromotionJob.PROMOTED: "promoted",
        PromotionJob.REFUSED: "refused by the candidate: nothing changed",
    }.get(status, status)
    PromotionJob.finish(job.pk, status, **fields)
    if not job.dry_run:
        job.refresh_from_db()
        view = job_view(job)
        record_audit(
            actor=Actor(job.requested_by, Role.ADMIN, job.source),
            action="broker.promote.finished",
            target_type="broker",
            target=f"{job.broker_name} id {job.broker_id}",
            before=job.before,
            after={"job": job.pk, "status": status, "plan": job.plan, "group": job.after, "summary": view.summary},
            ok=status == PromotionJob.PROMOTED,
            reason=reason,
        )
    return status


def _wait_for_route(job: PromotionJob, deadline: float) -> str:
    """Wait until the name servers route brokerId 0 of the group to the candidate; "" then, else why not."""
    seen = ""
    while True:
        try:
            data = cluster_info().broker_datas.get(job.broker_name)
            seen = (data.broker_addrs.get(0) or "") if data is not None else ""
            if seen == job.candidate_addr:
                return ""
        except RemotingError as exc:
            seen = f"no answer ({exc})"
        _heartbeat(
            job, f"promoted; waiting for the name servers to route {job.broker_name}'s master to {job.candidate_addr}"
        )
        if time.monotonic() >= deadline:
            return (
                f"the name servers did not route {job.broker_name}'s master (brokerId 0) to {job.candidate_addr} "
                f"within {ROUTE_WAIT_S:.0f} s (they route it to {seen or 'nobody'}); clients follow once they do"
            )
        time.sleep(POLL_INTERVAL_S)


def promotion_job_run(*, job_id: int, budget_s: float) -> str:
    """Run job ``job_id`` within ``budget_s`` seconds; its final status. A finished job is not touched again."""
    started = time.monotonic()
    job = _take(job_id)
    if job is None:
        row = PromotionJob.objects.filter(pk=job_id).first()
        return row.status if row else "missing"
    if not job.dry_run and job.attempts > 1:
        now = _group_now(job)
        role = next((m.get("role") for m in now.get("members", ()) if m.get("addr") == job.candidate_addr), "")
        if role and role != "SLAVE":
            return _finish(
                job,
                PromotionJob.PROMOTED,
                f"found {job.candidate_addr} already {role} when the job was delivered again",
                after=now,
            )
    try:
        result = slave_promote(
            addr=job.candidate_addr,
            broker_name=job.broker_name,
            broker_id=job.broker_id,
            force=job.force,
            dry_run=job.dry_run,
            role=job.role or None,
        )
    except PromotionNotSupported as exc:
        return _finish(job, PromotionJob.FAILED, str(exc), after=None if job.dry_run else _group_now(job))
    except PromotionRefused as exc:
        if not job.dry_run:
            return _finish(job, PromotionJob.REFUSED, (exc.remark or str(exc)).strip(), after=_group_now(job))
        return _finish(job, PromotionJob.FAILED, str(exc), after=None)
    except MQBrokerError as exc:
        return _finish(job, PromotionJob.FAILED, str(exc), after=None if job.dry_run else _group_now(job))
    plan = result.to_json()
    if job.dry_run:
        reason = f"a real promotion would be refused: {result.refused}" if result.refused else ""
        return _finish(job, PromotionJob.PLANNED, reason, plan=plan)
    PromotionJob.objects.filter(pk=job.pk).update(plan=plan)
    if not result.promoted:
        return _finish(
            job,
            PromotionJob.REFUSED,
            result.refused or "the candidate answered without promoting itself",
            plan=plan,
            after=_group_now(job),
        )
    note = _wait_for_route(job, started + max(1.0, min(ROUTE_WAIT_S, budget_s)))
    return _finish(job, PromotionJob.PROMOTED, note, plan=plan, after=_group_now(job))
