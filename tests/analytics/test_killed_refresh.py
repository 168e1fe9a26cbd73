"""A refresh killed mid-run (SIGKILL to a real Celery worker on the ``analytics`` queue, JVM and
all) leaves the previous result on the dashboards, marked stale from the killed run's start; the
next run, on a new worker, succeeds and clears it."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from analytics.models import RefreshRun
from analytics.runner import dashboard_refresh
from tests.analytics._lake import steady_workload

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

THROUGHPUT = "/api/v1/dashboards/throughput"


def _wait_for(run_id: int, predicate, timeout_s: float, what: str) -> RefreshRun:
    deadline = time.monotonic() + timeout_s
    while True:
        run = RefreshRun.objects.get(pk=run_id)
        if predicate(run):
            return run
        if time.monotonic() > deadline:
            raise AssertionError(
                f"run {run_id} not {what} within {timeout_s} s: {run.status} {run.progress!r} {run.error!r}"
            )
        time.sleep(0.05)


def test_a_killed_refresh_leaves_the_last_result_marked_stale_and_the_next_run_fixes_it(
    spark, lake, settings, celery_worker, api_client_as
):
    now = timezone.now()
    # The first result ends three minutes ago, so the newer samples below fall in later minutes
    # however fast the runs go (a refresh leaves out samples after its own start).
    origin = now - timedelta(minutes=13)
    steady_workload(lake, origin, now - timedelta(minutes=3), every_s=10)
    settings.GANTRY_ANALYTICS = {**settings.GANTRY_ANALYTICS, "SAMPLE_INTERVAL_S": 10.0, "RUN_LOST_AFTER_S": 3.0}
    good = dashboard_refresh(trigger="manual", requested_by="test", spark=spark)
    assert good.status == "succeeded", good.error
    viewer, operator = api_client_as("viewer"), api_client_as("operator")
    before = viewer.get(THROUGHPUT, {"by": "topic"}).json()
    assert before["series"] and before["state"]["stale_since"] is None

    steady_workload(lake, now - timedelta(minutes=3) + timedelta(seconds=10), now, every_s=10, origin=origin)
    env = {"GANTRY_LAKE_DIR": str(lake), "GANTRY_SAMPLE_INTERVAL_S": "10", "SPARK_MASTER": "local[1]"}
    worker = celery_worker(queues="analytics", env=env)
    answer = operator.post("/api/v1/dashboards/refresh")
    assert answer.status_code == 202
    killed_id = answer.json()["id"]
    # Kill it once Spark is at work on the jobs (the worker marked the run running and got past starting Spark).
    killed = _wait_for(
        killed_id,
        lambda r: r.status == "running" and r.progress not in ("starting", "starting Spark"),
        180,
        "computing",
    )
    worker.kill()
    assert RefreshRun.objects.get(pk=killed_id).status == "running"  # nobody said goodbye
    time.sleep(3.5)  # RUN_LOST_AFTER_S without a heartbeat

    after = viewer.get(THROUGHPUT, {"by": "topic"}).json()
    assert after["series"] == before["series"] and after["top"] == before["top"]
    state = after["state"]
    assert state["stale_since"] is not None and state["stale_since"].startswith(
        killed.started_at.strftime("%Y-%m-%dT%H:%M:%S")
    )
    assert state["last_refresh_at"] == before["state"]["last_refresh_at"]
    assert (
        state["run"]["id"] == killed_id
        and state["run"]["status"] == "failed"
        and state["run"]["error"].startswith("worker lost")
    )

    answer = operator.post("/api/v1/dashboards/refresh")
    assert answer.status_code == 202 and answer.json()["id"] != killed_id
    recorded = RefreshRun.objects.get(pk=killed_id)
    assert recorded.status == "failed" and recorded.error.startswith(
        "worker lost"
    )  # recorded when the next run was asked for
    settings.GANTRY_ANALYTICS = {
        **settings.GANTRY_ANALYTICS,
        "RUN_LOST_AFTER_S": 120.0,
    }  # the new worker beats every 10 s
    celery_worker(queues="analytics", env=env)
    fixed = _wait_for(answer.json()["id"], lambda r: r.status not in RefreshRun.ACTIVE, 240, "finished")
    assert fixed.status == "succeeded", fixed.error

    final = viewer.get(THROUGHPUT, {"by": "topic"}).json()
    assert final["state"]["stale_since"] is None and final["state"]["run"]["status"] == "succeeded"
    assert final["state"]["data_until"] > before["state"]["data_until"]
    assert max(p["t"] for p in final["series"][0]["points"]) > max(p["t"] for p in before["series"][0]["points"])
