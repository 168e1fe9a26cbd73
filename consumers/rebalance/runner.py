"""Running a rebalance job (the Celery task's body): look, notify, poll until converged.

1. Take the job (:meth:`console.leased_jobs.LeasedJob.take`): a finished job is left alone (a
   redelivered message does nothing); an active one is marked running with a fresh lease,
   ``attempts`` + 1 (a redelivery or a retry of its task takes it over).
2. The groups: the job's group; the online clustering user groups subscribing the topic; or
   every online clustering user group. One result row per group.
3. Look at each group (:func:`convergence.observe`) and record every queue's holders before
   (a redelivery keeps what the first delivery recorded) and the expected owner.
4. Dry run: the expected movement is the result (``planned``); nobody is notified.
5. Apply: take the group's Redis lease lock (a group another job holds is skipped), ask the
   brokers the members are connected to for NOTIFY_CONSUMER_IDS_CHANGED (Gantry's admin request
   10003; an Apache broker refuses it), then look again every POLL_INTERVAL_S until every group
   converged (:func:`convergence.assess`) or the deadline: the job's timeout, cut to what the
   task's soft time limit leaves. Members that join or leave meanwhile are notified again.
6. Record the holders after, the queues moved, and the outcome per group and for the job.

Each poll renews the job's lease and the group locks; a worker killed mid-job leaves the lease
to expire (the sweep fails the job) or its message to be delivered again (the next worker
takes the job over).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import redis
from django.utils import timezone

from brokers.gateway.connections import consumer_connections
from brokers.gateway.errors import RemotingError, RequestNotSupported
from brokers.gateway.groups import group_survey
from brokers.gateway.rebalance import notify_consumer_ids_changed
from console.queueing import RedisLock
from consumers.models import RebalanceGroupResult, RebalanceJob, RebalanceQueueChange
from consumers.rebalance import convergence
from consumers.rebalance.convergence import Holders, Observation
from consumers.rebalance.jobs import cluster_masters
from consumers.selectors import USER, group_kind

log = logging.getLogger(__name__)

POLL_INTERVAL_S = 0.5  # between looks at the members; a notified member rebalances within milliseconds
LOCK_PREFIX = "gantry:rebalance:group:"  # + group: the Redis lease lock one applying job holds
NOT_SUPPORTED_REASON = (
    "broker {addr} does not support GANTRY_NOTIFY_CONSUMER_IDS_CHANGED (an Apache RocketMQ broker?): "
    "members rebalance on their own every 20 s (rocketmq.client.rebalance.waitInterval)"
)


@dataclass
class GroupRun:
    result: RebalanceGroupResult
    before: dict[tuple[str, str, int], str]  # (topic, broker, queue) -> holders text
    lock: RedisLock | None = None
    notified_members: frozenset[str] = frozenset()
    previous: Holders | None = None
    last: Observation | None = None
    detail: str = ""
    settled: str = ""
    done: bool = False
    errors: list[str] = field(default_factory=list)


def _key(q) -> tuple[str, str, int]:
    return (q.topic, q.broker_name, q.queue_id)


def online_groups(masters: dict[str, str], topic: str | None = None) -> list[str]:
    """The online clustering user groups (subscribing ``topic`` when given), sorted."""
    names: set[str] = set()
    for survey in group_survey(masters, lag=False).values():
        names.update(survey.configs)
        names.update(g for _, g in survey.offsets)
    names = {g for g in names if group_kind(g) == USER}
    conns = consumer_connections(sorted(names), masters)
    return sorted(
        g
        for g, c in conns.items()
        if c.online
        and (c.message_model or "CLUSTERING") == "CLUSTERING"
        and (topic is None or topic in c.subscription_table)
    )


def _take(job_id: int) -> RebalanceJob | None:
    """Mark the job running (a redelivery or a retry takes it over); None when it finished already."""
    return RebalanceJob.take(job_id, takeover=True)


def _heartbeat(job: RebalanceJob, runs: list[GroupRun], progress: str) -> None:
    RebalanceJob.heartbeat(job.pk, progress=progress)
    for run in runs:
        if run.lock is not None and not run.done:
            try:
                run.lock.extend()
            except (redis.RedisError, OSError) as exc:  # the lease lock expires by itself; the job goes on
                log.warning("rebalance job %s: could not extend the lock of %s: %s", job.pk, run.result.group, exc)


def _finish_group(run: GroupRun, status: str, reason: str = "") -> None:
    r = run.result
    r.status, r.reason, r.finished_at = status, reason[:4000], timezone.now()
    r.save(
        update_fields=[
            "status",
            "reason",
            "finished_at",
            "queues_moved",
            "members_after",
            "notified",
            "strategy",
            "expected_known",
            "queues_total",
        ]
    )
    run.done = True


def _record_before(
    job: RebalanceJob, result: RebalanceGroupResult, obs: Observation
) -> dict[tuple[str, str, int], str]:
    """Write each queue's row (holders before, expected owner); a redelivery keeps the first rows."""
    existing = {(c.topic, c.broker_name, c.queue_id): c.owner_before for c in result.changes.all()}
    if existing:
        return existing
    holders, expected = obs.holders(), obs.expected() or {}
    rows = [
        RebalanceQueueChange(
            result=result,
            job=job,
            group=result.group,
            topic=q.topic,
            broker_name=q.broker_name,
            queue_id=q.queue_id,
            owner_before=convergence.owners_text(cids),
            owner_expected=expected.get(q, ""),
            moved=bool(expected) and convergence.moved(convergence.owners_text(cids), expected.get(q, "")),
        )
        for q, cids in sorted(holders.items())
    ]
    RebalanceQueueChange.objects.bulk_create(rows)
    result.members_before, result.strategy, result.expected_known = list(obs.members), obs.strategy, obs.expected_known
    result.queues_total = len(rows)
    result.save(update_fields=["members_before", "strategy", "expected_known", "queues_total"])
    return {(r.topic, r.broker_name, r.queue_id): r.owner_before for r in rows}


def _prepare(job: RebalanceJob, result: RebalanceGroupResult, masters: dict[str, str]) -> GroupRun:
    run = GroupRun(result, {})
    obs = convergence.observe(result.group, masters)
    if not obs.online:
        _finish_group(run, RebalanceGroupResult.FAILED, f"no member of {result.group} is online")
        return run
    if (obs.message_model or "CLUSTERING") != "CLUSTERING":
        _finish_group(run, RebalanceGroupResult.SKIPPED, f"{obs.message_model}: every member consumes every queue")
        return run
    run.before, run.last = _record_before(job, result, obs), obs
    if job.dry_run:
        moves = result.changes.filter(moved=True).count()
        result.queues_moved = moves
        reason = (
            ""
            if obs.expected_known
            else (
                f"strategy {obs.strategy or 'unknown'} cannot be recomputed here (it needs the members' configuration, "
                "or members disagree): the movement cannot be predicted; an apply waits for every queue held exactly once"
            )
        )
        if obs.not_answering:
            reason = f"no running info from {', '.join(obs.not_answering)}: the movement is incomplete"
        _finish_group(run, RebalanceGroupResult.PLANNED, reason)
        return run
    lock = RedisLock(LOCK_PREFIX + result.group, owner=f"rebalance-job-{job.pk}", ttl_s=RebalanceJob.LEASE_S)
    if not lock.acquire():
        _finish_group(
            run, RebalanceGroupResult.SKIPPED, f"another job ({lock.holder()}) is rebalancing {result.group} now"
        )
        return run
    run.lock = lock
    return run


def _notify(run: GroupRun, obs: Observation, masters: dict[str, str]) -> None:
    answers = notify_consumer_ids_changed(run.result.group, obs.broker_addrs or tuple(masters))
    notified: dict[str, dict[str, str] | list[str]] = {}
    errors: list[str] = []
    for addr, answer in sorted(answers.items()):
        if isinstance(answer, RemotingError):
            errors.append(
                NOT_SUPPORTED_REASON.format(addr=addr)
                if isinstance(answer, RequestNotSupported)
                else f"broker {addr}: {answer}"
            )
            notified[addr] = {"error": str(answer)}
        else:
            notified[addr] = list(answer)
    run.result.notified = {**run.result.notified, **notified}
    run.notified_members = frozenset(obs.members)
    run.errors = errors
    if errors and len(errors) == len(answers):
        _finish_group(run, RebalanceGroupResult.FAILED, "; ".join(errors))


def _record_after(run: GroupRun, obs: Observation | None) -> None:
    r = run.result
    holders = obs.holders() if obs else {}
    expected = (obs.expected() if obs else None) or {}
    rows = {(c.topic, c.broker_name, c.queue_id): c for c in r.changes.all()}
    for q, cids in holders.items():
        row = rows.get(_key(q))
        if row is None:  # a queue the first look did not have (a topic grew)
            row = RebalanceQueueChange(
                result=r, job_id=r.job_id, group=r.group, topic=q.topic, broker_name=q.broker_name, queue_id=q.queue_id
            )
            rows[_key(q)] = row
        row.owner_after = convergence.owners_text(cids)
        row.owner_expected = expected.get(q, row.owner_expected if not expected else "")
        row.moved = convergence.moved(row.owner_before, row.owner_after)
    for row in rows.values():
        row.save()
    r.queues_moved = sum(1 for row in rows.values() if row.moved)
    r.members_after = list(obs.members) if obs else []
    r.queues_total = len(rows)


def _progress(runs: list[GroupRun], polls: int) -> str:
    if len(runs) == 1:
        run = runs[0]
        return (
            f"look {polls}: {run.settled or 'notified'}" if not run.done else f"{run.result.group}: {run.result.status}"
        )
    done = sum(1 for r in runs if r.done)
    waiting = [f"{r.result.group}: {r.settled}" for r in runs if not r.done][:3]
    return f"look {polls}: {done}/{len(runs)} groups done" + (f"; {'; '.join(waiting)}" if waiting else "")


def _poll(job: RebalanceJob, runs: list[GroupRun], masters: dict[str, str], deadline: float) -> None:
    polls = 0
    while True:
        waiting = [r for r in runs if not r.done]
        if not waiting:
            return
        polls += 1
        for run in waiting:
            obs = convergence.observe(run.result.group, masters)
            verdict = convergence.assess(obs, run.previous)
            run.last, run.previous, run.detail, run.settled = obs, obs.holders(), verdict.detail, verdict.progress()
            if verdict.converged:
                _record_after(run, obs)
                _finish_group(run, RebalanceGroupResult.CONVERGED)
            elif obs.online and frozenset(obs.members) != run.notified_members:
                _notify(run, obs, masters)  # someone joined or left since: tell everyone again
        _heartbeat(job, runs, _progress(runs, polls))
        if all(r.done for r in runs):
            return
        if time.monotonic() >= deadline:
            for run in runs:
                if not run.done:
                    _record_after(run, run.last)
                    _finish_group(
                        run, RebalanceGroupResult.NOT_CONVERGED, f"not converged within the timeout: {run.detail}"
                    )
            return
        time.sleep(POLL_INTERVAL_S)


def _conclude(job: RebalanceJob, groups: list[str]) -> str:
    results = list(job.group_results.all())
    converged = [r for r in results if r.status == RebalanceGroupResult.CONVERGED]
    failed = [r for r in results if r.status in (RebalanceGroupResult.FAILED, RebalanceGroupResult.SKIPPED)]
    if job.dry_run:
        status = RebalanceJob.FAILED if results and len(failed) == len(results) else RebalanceJob.PLANNED
    elif len(converged) == len(results):
        status = RebalanceJob.CONVERGED
    elif failed and len(failed) == len(results):
        status = RebalanceJob.FAILED
    else:
        status = RebalanceJob.NOT_CONVERGED
    notes = [f"{r.group}: {r.reason}" if len(results) > 1 else r.reason for r in results if r.reason]
    if not groups:
        notes = [
            f"no online clustering group consumes {job.scope_value}"
            if job.scope == RebalanceJob.TOPIC
            else "no online clustering group"
        ]
    moved = sum(r.queues_moved for r in results)
    summary = (
        f"{len(converged)}/{len(results)} group(s) converged, {moved} queue(s) moved"
        if not job.dry_run
        else f"{moved} queue(s) would move in {len(results)} group(s)"
    )
    RebalanceJob.finish(
        job.pk,
        status,
        reason="; ".join(notes)[: RebalanceJob.REASON_MAX],
        progress=summary,
        groups_total=len(results),
        groups_converged=len(converged),
        queues_moved=moved,
    )
    return status


def rebalance_job_run(*, job_id: int, budget_s: float) -> str:
    """Run job ``job_id`` within ``budget_s`` seconds (what the task's time limit leaves); its final status.

    Idempotent: a job that finished is not touched again (returns its status).
    """
    started = time.monotonic()
    job = _take(job_id)
    if job is None:
        row = RebalanceJob.objects.filter(pk=job_id).first()
        return row.status if row else "missing"
    deadline = started + max(1.0, min(float(job.timeout_s), budget_s))
    masters = cluster_masters()
    if job.scope == RebalanceJob.GROUP:
        groups = [job.scope_value]
    else:
        groups = online_groups(masters, job.scope_value if job.scope == RebalanceJob.TOPIC else None)
    results = {g: RebalanceGroupResult.objects.get_or_create(job=job, group=g)[0] for g in groups}
    RebalanceJob.objects.filter(pk=job.pk).update(groups_total=len(groups))
    runs: list[GroupRun] = []
    try:
        for group in groups:
            if results[group].status == RebalanceGroupResult.PENDING:  # a redelivery skips the groups already done
                runs.append(_prepare(job, results[group], masters))
        _heartbeat(job, runs, f"{len(runs)} group(s) read" + ("" if job.dry_run else "; notifying the members"))
        if not job.dry_run:
            for run in runs:
                if not run.done and run.last is not None:
                    _notify(run, run.last, masters)
            _poll(job, runs, masters, deadline)
    finally:
        for run in runs:
            if run.lock is not None:
                run.lock.release()
    return _conclude(job, groups)
