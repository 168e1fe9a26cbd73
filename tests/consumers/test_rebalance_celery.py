"""Rebalance triggers end to end: the API, a real redis-server, real Celery worker processes, the
session cluster and real PushConsumers whose group does not tell them when members come and go
(notifyConsumerIdsChangedEnable off, periodic rebalance 10 minutes away): only the trigger can
make them rebalance."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection

from consumers.models import RebalanceJob
from tests.consumers._rebalance import avg, balanced_group, held, moved_between, push_consumer, wait_until

pytestmark = pytest.mark.slow
VISIBILITY_TIMEOUT_S = 20  # of the kill test's workers: their rebalance hard limit is 10 s


def url(group: str) -> str:
    return f"/api/v1/groups/{group}/rebalance"


def finished(client, job_id: int, timeout_s: float = 60.0) -> dict:
    def done():
        body = client.get(f"/api/v1/rebalance-jobs/{job_id}").json()
        return body if not body["active"] else None

    return wait_until(done, timeout_s, f"job {job_id} to finish", every_s=0.3)


@pytest.fixture
def group_of_three(console_cluster, topic, group):
    members, queues = balanced_group(console_cluster, group, topic, 3)
    yield members, queues
    for m in members:
        m.shutdown()


def test_a_fourth_member_joins_and_the_trigger_converges(
    celery_worker, operator, group_of_three, console_cluster, topic, group
) -> None:
    celery_worker()
    members, queues = group_of_three
    members.append(push_consumer(console_cluster, group, topic, "c4"))
    cids = [m.client_id for m in members]
    wait_until(lambda: held(members, topic)[cids[3]], what="the fourth member to take its queues")
    before = held(members, topic)
    expected_moves = moved_between(
        avg(queues, cids[:3]), avg(queues, cids)
    )  # the allocation core: AVG over 3, then over 4
    assert expected_moves == moved_between(before, avg(queues, cids)) == 5

    dry = operator.post(url(group), {}, format="json")
    assert dry.status_code == 202 and dry.json()["dry_run"] is True
    plan = finished(operator, dry.json()["id"])
    assert plan["status"] == "planned" and plan["queues_moved"] == expected_moves
    assert held(members, topic) == before  # nothing moved yet

    applied = operator.post(url(group), {"dry_run": False, "timeout_s": 30}, format="json")
    assert applied.status_code == 202
    job = finished(operator, applied.json()["id"])
    assert job["status"] == "converged", job
    assert job["queues_moved"] == expected_moves and job["groups_converged"] == job["groups_total"] == 1
    assert held(members, topic) == avg(queues, cids)
    assert job["duration_s"] is not None and job["attempts"] == 1
    [result] = job["groups"]
    assert sum(c["moved"] for c in result["changes"]) == expected_moves
    assert all(c["after"] == c["expected"] for c in result["changes"])


def test_redis_stopped_gives_a_clear_failure_and_no_stuck_job(
    celery_worker, celery_redis, operator, console_cluster, topic, group
) -> None:
    celery_worker()
    members, queues = balanced_group(console_cluster, group, topic, 2)
    try:
        celery_redis.stop()
        refused = operator.post(url(group), {"dry_run": False}, format="json")  # how fast: bench/latency_bench.py
        assert refused.status_code == 503 and refused.json()["code"] == "queue_unavailable"
        job = RebalanceJob.objects.get()
        assert (
            job.status == "failed"
            and "Redis" in job.reason
            and not RebalanceJob.objects.filter(status__in=RebalanceJob.ACTIVE).exists()
        )

        celery_redis.start()  # the worker reconnects; the next trigger runs
        members.append(push_consumer(console_cluster, group, topic, "c3"))
        again = operator.post(url(group), {"dry_run": False, "timeout_s": 30}, format="json")
        assert again.status_code == 202
        assert finished(operator, again.json()["id"], timeout_s=90)["status"] == "converged"
        assert held(members, topic) == avg(queues, [m.client_id for m in members])
    finally:
        for m in members:
            m.shutdown()


def test_two_triggers_at_once_make_one_job(
    celery_worker, api_client_as, operator, group_of_three, console_cluster, topic, group
) -> None:
    members, queues = group_of_three
    members.append(push_consumer(console_cluster, group, topic, "c4"))
    wait_until(lambda: held(members, topic)[members[3].client_id], what="the fourth member")
    token = operator._credentials["HTTP_AUTHORIZATION"]
    answers: list = []
    barrier = threading.Barrier(2)

    def trigger() -> None:
        from rest_framework.test import APIClient

        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=token)
        barrier.wait()
        try:
            answers.append(client.post(url(group), {"dry_run": False}, format="json"))
        finally:
            connection.close()

    threads = [threading.Thread(target=trigger) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(a.status_code for a in answers) == [200, 202]
    assert len({a.json()["id"] for a in answers}) == 1
    # the worker starts once both have answered: with it running, a fast job could have converged between
    # the two triggers, and the second would rightly have made a job of its own
    celery_worker()
    job = finished(operator, answers[0].json()["id"])
    assert job["status"] == "converged"
    assert RebalanceJob.objects.filter(scope_value=group, dry_run=False).count() == 1
    assert held(members, topic) == avg(queues, [m.client_id for m in members])


def test_a_worker_killed_mid_job_is_redelivered_and_the_job_ends(
    celery_worker, operator, group_of_three, members, console_cluster, topic, group
) -> None:
    # A short visibility timeout (hard limit 10 s) so the message comes back within the test.
    env = {"GANTRY_CELERY_VISIBILITY_TIMEOUT_S": str(VISIBILITY_TIMEOUT_S)}
    first = celery_worker(env=env)
    pushers, queues = group_of_three
    stuck = members(group, topic, "stuck")  # a member that never rebalances: the job cannot converge while it is there
    response = operator.post(url(group), {"dry_run": False, "timeout_s": 120}, format="json")
    assert response.status_code == 202
    job_id = response.json()["id"]

    def polling() -> bool:
        job = RebalanceJob.objects.get(pk=job_id)
        return job.status == "running" and job.progress.startswith("look")

    wait_until(polling, 10, "the job to poll")
    first.kill()
    stuck.close()  # it leaves while no worker runs; only the redelivered job can tell the others
    # Kombu puts an unacknowledged message back once it is older than the visibility timeout, when a
    # worker sweeps: at its start, then every unacked_restore_interval x unacked_restore_throttle
    # seconds (100 s by default). Start the second worker once the message is old enough.
    received = RebalanceJob.objects.get(pk=job_id).started_at
    time.sleep(max(0.0, received.timestamp() + VISIBILITY_TIMEOUT_S + 1 - time.time()))
    celery_worker(env=env)

    def ended():
        job = RebalanceJob.objects.get(pk=job_id)
        return job if job.status not in RebalanceJob.ACTIVE else None

    job = wait_until(ended, 60, "the redelivered job to end", every_s=0.5)
    assert job.attempts == 2  # delivered again to the second worker, which took the job over
    assert job.status == "converged", job.reason
    assert held(pushers, topic) == avg(queues, [m.client_id for m in pushers])


def test_a_cluster_that_stops_answering_fails_the_job_after_retries(
    celery_worker, operator, console_cluster, topic, group, members, unused_addr
) -> None:
    # The worker's name server is gone (the web side still reaches the cluster, so the trigger is accepted).
    celery_worker(env={"NAMESRV_ADDR": unused_addr})
    members(group, topic, "m1")
    response = operator.post(url(group), {"dry_run": False}, format="json")
    assert response.status_code == 202
    job = finished(operator, response.json()["id"], timeout_s=60)
    assert job["status"] == "failed" and job["reason"].startswith("name server unreachable")
    assert job["attempts"] == 4  # the first run and three retries (1, 2, 4 s apart)
