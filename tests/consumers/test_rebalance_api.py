"""/api/v1/groups/{name}/rebalance and /api/v1/rebalance-jobs without a worker: roles, refusals,
Redis down, one active job per scope, the history's filters, and jobs whose worker vanished.
(A worker runs them in test_rebalance_celery.py.)"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from console.models import AuditEntry
from consumers.models import RebalanceGroupResult, RebalanceJob, RebalanceQueueChange
from consumers.rebalance.jobs import rebalance_jobs_sweep, scope_key

pytestmark = pytest.mark.django_db


def url(group: str) -> str:
    return f"/api/v1/groups/{group}/rebalance"


def test_viewers_see_operators_trigger(api_client_as, viewer, console_cluster) -> None:
    anonymous = api_client_as(None)
    assert anonymous.post(url("G"), {}, format="json").status_code == 401
    assert anonymous.get("/api/v1/rebalance-jobs").status_code == 401
    for path in (url("G"), "/api/v1/rebalance-jobs"):
        refused = viewer.post(path, {"scope": "all"} if path.endswith("jobs") else {}, format="json")
        assert refused.status_code == 403 and "operator" in refused.json()["detail"]
    assert viewer.get("/api/v1/rebalance-jobs").status_code == 200


def test_bad_input_is_refused_naming_the_field(operator, console_cluster) -> None:
    for body, field in (
        ({"dry_run": "yes"}, "dry_run"),
        ({"timeout_s": 0}, "timeout_s"),
        ({"timeout_s": 301}, "timeout_s"),
        ({"timeout_s": "10"}, "timeout_s"),
        ({"force": True}, "force"),
    ):
        response = operator.post(url("G_any"), body, format="json")
        assert response.status_code == 400 and field in response.json()["fields"], (body, response.json())
    for body, field in (
        ({"scope": "topic"}, "topic"),
        ({"scope": "group"}, "group"),
        ({"scope": "cluster"}, "scope"),
        ({"scope": "all", "group": "G"}, "group"),
        ({}, "scope"),
    ):
        response = operator.post("/api/v1/rebalance-jobs", body, format="json")
        assert response.status_code == 400 and field in response.json()["fields"], (body, response.json())
    assert operator.post(url("bad group!"), {}, format="json").status_code == 400
    response = operator.get("/api/v1/rebalance-jobs", {"status": "stuck"})
    assert response.status_code == 400 and "status" in response.json()["fields"]
    assert operator.get("/api/v1/rebalance-jobs", {"since": "yesterday"}).json()["fields"].keys() == {"since"}


def test_unknown_group_or_topic_is_404_and_an_offline_group_409(
    operator, console_cluster, topic, group, members
) -> None:
    response = operator.post(url("G_nobody_knows_this"), {}, format="json")
    assert response.status_code == 404 and response.json()["code"] == "not_found"
    response = operator.post("/api/v1/rebalance-jobs", {"scope": "topic", "topic": "T_no_such_topic"}, format="json")
    assert response.status_code == 404
    m = members(group, topic, "gone")
    m.update_offset(m.fetch_subscribe_message_queues(topic)[0], 0)  # the brokers remember the group by its offset
    m.close()
    response = operator.post(url(group), {}, format="json")
    assert response.status_code == 409 and "online" in response.json()["detail"]
    assert operator.get("/api/v1/rebalance-jobs/999999").status_code == 404
    assert not RebalanceJob.objects.exists()


def test_redis_down_answers_503_at_once_and_fails_the_job(operator, online, celery_redis) -> None:
    celery_redis.stop()
    response = operator.post(url(online), {"dry_run": False}, format="json")  # how fast: bench/latency_bench.py
    assert response.status_code == 503 and response.json()["code"] == "queue_unavailable"
    assert "Redis" in response.json()["detail"] and str(celery_redis.port) in response.json()["detail"]
    job = RebalanceJob.objects.get()
    assert job.status == RebalanceJob.FAILED and "Redis" in job.reason and job.finished_at is not None
    audit = AuditEntry.objects.get(action="group.rebalance")
    assert audit.result == AuditEntry.FAILED and "Redis" in audit.reason
    celery_redis.start()
    again = operator.post(url(online), {"dry_run": False}, format="json")  # a failed job does not block the next
    assert again.status_code == 202 and again.json()["status"] == "queued" and again.json()["id"] != job.pk


def test_cluster_down_answers_503_at_once_and_leaves_no_job_behind(
    operator, mq_settings, unused_addr, celery_redis
) -> None:
    mq_settings(unused_addr)  # nothing listens: the name server is down
    response = operator.post(url("G_anything"), {"dry_run": False}, format="json")  # how fast: bench/latency_bench.py
    assert response.status_code == 503 and response.json()["code"] == "namesrv_unreachable"
    assert not RebalanceJob.objects.filter(status__in=[RebalanceJob.QUEUED, RebalanceJob.RUNNING]).exists()


def test_one_active_job_per_scope_and_dry_runs_never_block_applies(operator, online, celery_redis) -> None:
    first = operator.post(url(online), {"dry_run": False, "timeout_s": 20}, format="json")
    assert first.status_code == 202
    body = first.json()
    assert (
        body["status"] == "queued" and body["dry_run"] is False and body["timeout_s"] == 20 and body["scope"] == "group"
    )
    assert body["scope_value"] == online and body["requested_by"] == "api-operator" and body["source"] == "api"
    second = operator.post(url(online), {"dry_run": False}, format="json")
    assert second.status_code == 200 and second.json()["id"] == body["id"]
    also = operator.post("/api/v1/rebalance-jobs", {"scope": "group", "group": online, "dry_run": False}, format="json")
    assert also.status_code == 200 and also.json()["id"] == body["id"]
    dry = operator.post(url(online), {}, format="json")  # dry_run defaults to true
    assert dry.status_code == 202 and dry.json()["dry_run"] is True and dry.json()["id"] != body["id"]
    assert [e.reason for e in AuditEntry.objects.filter(action="group.rebalance").order_by("id")] == [
        "",
        f"job {body['id']} was already queued for this scope: no new job",
        f"job {body['id']} was already queued for this scope: no new job",
    ]
    assert operator.get(body["url"]).json()["status"] == "queued"


def _job(status: str, group: str, dry_run: bool = False, **kwargs) -> RebalanceJob:
    job = RebalanceJob.objects.create(
        requested_by="ops",
        scope="group",
        scope_value=group,
        dry_run=dry_run,
        status=status,
        scope_key=scope_key("group", group, dry_run) + ("" if status in RebalanceJob.ACTIVE else f"#{status}"),
        **kwargs,
    )
    result = RebalanceGroupResult.objects.create(
        job=job, group=group, status="converged", strategy="AVG", queues_total=2, queues_moved=1
    )
    RebalanceQueueChange.objects.create(
        result=result,
        job=job,
        group=group,
        topic="T",
        broker_name="broker-a",
        queue_id=0,
        owner_before="c1",
        owner_expected="c2",
        owner_after="c2",
        moved=True,
    )
    RebalanceQueueChange.objects.create(
        result=result,
        job=job,
        group=group,
        topic="T",
        broker_name="broker-a",
        queue_id=1,
        owner_before="c1",
        owner_expected="c1",
        owner_after="c1",
        moved=False,
    )
    return job


def test_the_history_filters_and_one_job_in_full(viewer) -> None:
    old = _job("converged", "G1", created_at=timezone.now() - timedelta(days=2))
    new = _job("not_converged", "G1")
    _job("planned", "G1", dry_run=True)
    _job("failed", "G2")
    ids = lambda **q: [j["id"] for j in viewer.get("/api/v1/rebalance-jobs", q).json()["results"]]  # noqa: E731
    assert len(ids()) == 4
    assert ids(group="G1", dry_run="false") == [new.pk, old.pk]
    assert ids(status="converged,not_converged") == [new.pk, old.pk]
    assert ids(since=(timezone.now() - timedelta(days=1)).isoformat(), group="G1", dry_run="false") == [new.pk]
    assert ids(topic="T", scope="group", requested_by="ops", page_size=1) == [ids()[0]]
    body = viewer.get(f"/api/v1/rebalance-jobs/{old.pk}").json()
    [g] = body["groups"]
    assert g["group"] == "G1" and g["queues_moved"] == 1 and g["strategy"] == "AVG"
    assert g["changes"][0] == {
        "topic": "T",
        "broker_name": "broker-a",
        "queue_id": 0,
        "before": "c1",
        "expected": "c2",
        "after": "c2",
        "moved": True,
    }


def test_a_running_job_whose_worker_vanished_is_failed_when_read_or_swept(viewer) -> None:
    lost = _job(
        "running",
        "G1",
        lease_until=timezone.now() - timedelta(seconds=1),
        heartbeat_at=timezone.now() - timedelta(seconds=20),
    )
    body = viewer.get(f"/api/v1/rebalance-jobs/{lost.pk}").json()
    assert body["status"] == "failed" and body["reason"].startswith("worker lost: no heartbeat since")
    never = _job("queued", "G2", created_at=timezone.now() - timedelta(hours=1))
    alive = _job("running", "G3", lease_until=timezone.now() + timedelta(seconds=10))
    assert rebalance_jobs_sweep() == 1
    never.refresh_from_db()
    alive.refresh_from_db()
    assert never.status == "failed" and "no worker took the job" in never.reason and alive.status == "running"
