"""Live dashboards: beat's incremental refresh every minute (``dashboard-refresh-live``) turns
samples written two minutes ago into dashboard points without anyone pressing a button; it is
skipped while another refresh is active; its runs do not pile up in the history."""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone

import pytest

from analytics.models import DashboardState, RefreshRun
from analytics.runs import LIVE_RUNS_KEPT, run_open, runs_prune
from tests.analytics._lake import steady_workload

THROUGHPUT = "/api/v1/dashboards/throughput"


def _beat(settings, name: str = "dashboard-refresh-live"):
    """The schedule entry's task, called as a worker calls it for beat's message (the registered
    Celery task, in-process; a worker of its own would start a second Spark JVM)."""
    from console.celery import app

    app.loader.import_default_modules()
    entry = settings.CELERY_BEAT_SCHEDULE[name]
    task = app.tasks[entry["task"]]
    [answer] = task(*entry.get("args", ()), **entry.get("kwargs", {}))[
        "sets"
    ]  # one per configured set: default only here
    assert answer.pop("namesrv_set") == "default"
    return answer


def test_beat_runs_the_refresh_every_minute_besides_the_nightly_one(settings) -> None:
    from console.celery import app

    app.loader.import_default_modules()
    live = settings.CELERY_BEAT_SCHEDULE["dashboard-refresh-live"]
    assert live["task"] == "analytics.tasks.dashboard_refresh_task" in app.tasks and live["kwargs"] == {
        "trigger": "live"
    }
    assert live["schedule"] == settings.GANTRY_ANALYTICS["LIVE_REFRESH_S"] == 60.0
    assert (
        live["options"]["expires"] < live["schedule"]
    )  # one that waited a whole period (behind a full run) is dropped
    assert app.amqp.router.route({}, live["task"])["queue"].name == "analytics"
    assert "dashboard-refresh-nightly" in settings.CELERY_BEAT_SCHEDULE  # the nightly refresh stays


@pytest.mark.django_db
def test_a_live_refresh_is_skipped_while_another_refresh_is_active(settings) -> None:
    manual, opened = run_open(trigger="manual", requested_by="ops")
    assert opened
    answer = _beat(settings)
    assert answer["id"] == manual.pk and answer["status"] == "queued"  # no second run, nothing started
    assert list(RefreshRun.objects.values_list("trigger", flat=True)) == ["manual"]


@pytest.mark.django_db
def test_a_live_refresh_without_new_samples_is_skipped(settings, lake) -> None:
    from analytics.runner import new_samples
    from tests.analytics._lake import sample_round

    last = datetime(2026, 11, 22, 14, 0, 10, tzinfo=timezone.utc)
    sample_round(lake, last, "broker-a", queues=[("orders", 0, 10, 100)])
    assert new_samples()  # never refreshed
    DashboardState.objects.update_or_create(pk=1, defaults={"data_until": last})
    assert _beat(settings) == {
        "id": None,
        "status": "skipped",
        "error": "",
        "reason": "no samples since the last refresh",
    }
    assert not RefreshRun.objects.exists()
    sample_round(lake, last + timedelta(seconds=10), "broker-a", queues=[("orders", 0, 20, 200)])
    assert new_samples()


@pytest.mark.django_db
def test_old_live_runs_are_pruned_but_not_the_last_good_one_nor_failures() -> None:
    now = datetime.now(timezone.utc)
    old = now - LIVE_RUNS_KEPT - timedelta(minutes=5)

    def run(trigger, status, finished):
        return RefreshRun.objects.create(
            trigger=trigger,
            requested_by="beat",
            status=status,
            created_at=finished,
            started_at=finished,
            finished_at=finished,
        )

    gone = [run("live", "succeeded", old - timedelta(minutes=m)) for m in range(3)]
    kept = [run("live", "failed", old), run("nightly", "succeeded", old), run("live", "succeeded", now)]
    last_good = run("live", "succeeded", old + timedelta(minutes=1))
    DashboardState.objects.update_or_create(pk=1, defaults={"last_good_run": last_good})
    assert runs_prune(now=now) == 3
    assert set(RefreshRun.objects.values_list("pk", flat=True)) == {r.pk for r in kept} | {last_good.pk}
    assert not RefreshRun.objects.filter(pk__in=[r.pk for r in gone]).exists()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_samples_written_two_minutes_ago_reach_the_dashboards_without_a_button(
    spark, lake, settings, monkeypatch, api_client_as
) -> None:
    import analytics.spark

    # the analytics worker's warm session is the test's shared one (its settings untouched)
    monkeypatch.setattr(analytics.spark, "_session", spark)
    monkeypatch.setattr(analytics.spark, "_pid", os.getpid())
    viewer = api_client_as("viewer")
    now = datetime.now(timezone.utc).replace(microsecond=0)
    assert (
        viewer.get(THROUGHPUT, {"range": "hour"}).json()["series"] == []
    )  # sampling, no refresh yet: "No samples yet"

    steady_workload(lake, now - timedelta(minutes=12), now - timedelta(minutes=2), every_s=30)
    assert _beat(settings)["status"] == "succeeded"
    body = viewer.get(THROUGHPUT, {"range": "hour"}).json()
    [series] = body["series"]
    assert series["label"] == "orders" and series["points"][-1]["msgs_per_s"] == pytest.approx(6.0, rel=0.02)
    last_t = datetime.fromisoformat(series["points"][-1]["t"].replace("Z", "+00:00"))
    assert last_t == (now - timedelta(minutes=2)).replace(second=0)  # the newest sample's minute
    assert body["state"]["data_until"] == (now - timedelta(minutes=2)).isoformat().replace("+00:00", "Z")
    first = RefreshRun.objects.get()
    assert (first.trigger, first.requested_by) == ("live", "beat")

    # a minute later: the next run reads from the last one's hour on and adds the new samples
    steady_workload(lake, now - timedelta(minutes=1, seconds=30), now, every_s=30, origin=now - timedelta(minutes=12))
    assert _beat(settings)["status"] == "succeeded"
    points = viewer.get(THROUGHPUT, {"range": "hour"}).json()["series"][0]["points"]
    assert datetime.fromisoformat(points[-1]["t"].replace("Z", "+00:00")) == now.replace(second=0)
    second = RefreshRun.objects.order_by("-id").first()
    assert second.window_from >= first.window_to.replace(
        minute=0, second=0, microsecond=0
    )  # incremental, not from scratch
