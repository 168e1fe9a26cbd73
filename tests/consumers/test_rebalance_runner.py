"""The rebalance job's body, run in this process against the session cluster and real PushConsumers
(the Celery task around it is tested in test_rebalance_celery.py)."""

from __future__ import annotations

import pytest

from consumers.models import RebalanceGroupResult, RebalanceJob
from consumers.rebalance import runner
from consumers.rebalance.convergence import Observation
from consumers.rebalance.jobs import scope_key
from tests.brokers.engine.remoting.test_blocking import ServerThread
from tests.consumers._rebalance import avg, balanced_group, held, moved_between, push_consumer, wait_until

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def job(scope: str, value: str, dry_run: bool, timeout_s: int = 15) -> RebalanceJob:
    return RebalanceJob.objects.create(
        requested_by="tester",
        scope=scope,
        scope_value=value,
        scope_key=scope_key(scope, value, dry_run),
        dry_run=dry_run,
        timeout_s=timeout_s,
    )


def test_a_fourth_member_dry_run_then_apply(console_cluster, celery_redis, topic, group) -> None:
    members, queues = balanced_group(console_cluster, group, topic, 3)
    try:
        members.append(push_consumer(console_cluster, group, topic, "c4"))
        cids = [m.client_id for m in members]
        wait_until(lambda: held(members, topic)[cids[3]], what="the fourth member to take queues")
        before = held(members, topic)
        assert before != avg(queues, cids)  # nobody told the first three

        planned = job("group", group, dry_run=True)
        assert runner.rebalance_job_run(job_id=planned.pk, budget_s=20) == "planned"
        planned.refresh_from_db()
        assert planned.queues_moved == moved_between(before, avg(queues, cids)) > 0
        assert held(members, topic) == before  # a dry run changes nothing
        result = planned.group_results.get()
        assert result.status == RebalanceGroupResult.PLANNED and result.expected_known and result.strategy == "AVG"
        assert sorted(result.members_before) == sorted(cids)
        assert {(c.broker_name, c.queue_id): c.owner_expected for c in result.changes.all()} == {
            (q.broker_name, q.queue_id): cid for cid, qs in avg(queues, cids).items() for q in qs
        }

        applied = job("group", group, dry_run=False)
        assert runner.rebalance_job_run(job_id=applied.pk, budget_s=20) == "converged"
        applied.refresh_from_db()
        assert held(members, topic) == avg(queues, cids)
        assert applied.queues_moved == moved_between(before, avg(queues, cids))
        assert applied.groups_total == applied.groups_converged == 1 and applied.lease_until is None
        result = applied.group_results.get()
        assert set(result.notified) == {console_cluster.broker_addr(b) for b in console_cluster.broker_names}
        assert all(sorted(ids) == sorted(cids) for ids in result.notified.values())
        moves = result.changes.filter(moved=True)
        assert moves.count() == applied.queues_moved and all(
            c.owner_after == c.owner_expected for c in result.changes.all()
        )

        # idempotent: a second delivery of a finished job changes nothing
        assert runner.rebalance_job_run(job_id=applied.pk, budget_s=20) == "converged"
        applied.refresh_from_db()
        assert applied.attempts == 1
    finally:
        for m in members:
            m.shutdown()


def test_a_topic_scope_rebalances_each_group_of_the_topic(console_cluster, celery_redis, topic, group) -> None:
    first, queues = balanced_group(console_cluster, group, topic, 2, prefix="a")
    other = group + "_2"
    second, _ = balanced_group(console_cluster, other, topic, 1, prefix="b")
    try:
        first.append(push_consumer(console_cluster, group, topic, "a3"))
        second.append(push_consumer(console_cluster, other, topic, "b2"))
        wait_until(
            lambda: held(first, topic)[first[2].client_id] and held(second, topic)[second[1].client_id], what="joiners"
        )
        run = job("topic", topic, dry_run=False)
        assert runner.rebalance_job_run(job_id=run.pk, budget_s=20) == "converged"
        run.refresh_from_db()
        assert sorted(r.group for r in run.group_results.all()) == sorted([group, other])
        assert held(first, topic) == avg(queues, [m.client_id for m in first])
        assert held(second, topic) == avg(queues, [m.client_id for m in second])
    finally:
        for m in first + second:
            m.shutdown()


def test_a_broker_without_the_notify_request_fails_the_group_with_a_clear_reason(console_cluster) -> None:
    """An Apache RocketMQ broker answers GANTRY_NOTIFY_CONSUMER_IDS_CHANGED with REQUEST_CODE_NOT_SUPPORTED
    (here: a bare remoting server, which answers every request so)."""
    apache = ServerThread()
    try:
        row = job("group", "G_apache", dry_run=False)
        run = runner.GroupRun(RebalanceGroupResult.objects.create(job=row, group="G_apache"), {})
        runner._notify(run, Observation("G_apache", ("c1",), (apache.addr,), "CLUSTERING", ()), {})
        run.result.refresh_from_db()
        assert run.done and run.result.status == "failed"
        assert run.result.reason.startswith(f"broker {apache.addr} does not support GANTRY_NOTIFY_CONSUMER_IDS_CHANGED")
        assert "error" in run.result.notified[apache.addr]
    finally:
        apache.stop()
