"""Analytics tasks: metrics sampling (beat, every SAMPLE_INTERVAL_S) and the dashboard refresh
(queue ``analytics``: incremental every ``LIVE_REFRESH_S`` and in full nightly from beat, on demand
from the console and the API).

Per name-server set (docs/clusters.md): beat's sample and refresh run once for every configured set,
each inside that set's scope, so its brokers are sampled into its own lake and its results are its
own; a set that fails does not stop the others. A queued run (the console's "refresh now") carries
its set on the row and runs in that set's scope.

Thin: JSON arguments in, one service call per set, a JSON-able summary out. Both are safe to run twice:
a repeated sample is one more sample; a refresh delivered again after its run finished does
nothing (analytics.runner.dashboard_refresh), and one delivered again while its run is marked
running takes the run over (its worker died).
"""

from __future__ import annotations

from dataclasses import asdict

from celery import shared_task
from django.conf import settings

from analytics import runner, sampler
from analytics.models import RefreshRun
from brokers.gateway import namesrv_sets


def _limits(name: str, soft_margin_s: int) -> dict:
    hard = settings.GANTRY_TASK_TIME_LIMITS[name]
    return {"time_limit": hard, "soft_time_limit": max(1, hard - soft_margin_s)}


def _sample() -> dict:
    result = asdict(sampler.metrics_sample())
    result["files"] = len(result["files"])
    return result


@shared_task(name="analytics.tasks.metrics_sample_task", acks_late=True, ignore_result=True, **_limits("short", 5))
def metrics_sample_task() -> dict:
    """Sample every set's brokers once, each into its set's lake; the counts per set (the file names stay
    out of the worker's log, which would print them every few seconds)."""
    return {"sets": namesrv_sets.each_set(_sample, "metrics sample")}


def _refresh(trigger: str) -> dict:
    if trigger == "live" and not runner.new_samples():
        return {"id": None, "status": "skipped", "error": "", "reason": "no samples since the last refresh"}
    info = runner.dashboard_refresh(trigger=trigger)
    return {"id": info.id, "status": info.status, "error": info.error}


@shared_task(name="analytics.tasks.dashboard_refresh_task", acks_late=True, **_limits("dashboard_refresh", 30))
def dashboard_refresh_task(run_id: int | None = None, trigger: str = "nightly") -> dict:
    """Run refresh ``run_id`` (in its set's scope); without one (beat: ``live`` every minute, ``nightly``)
    open a run for ``trigger`` in every set, skipping a set whose run is active (it covers it)."""
    if run_id is None:
        return {"sets": namesrv_sets.each_set(lambda: _refresh(trigger), "dashboard refresh")}
    tier = RefreshRun.objects.filter(pk=run_id).values_list("namesrv_set", flat=True).first()
    target = namesrv_sets.lookup(tier) if tier else None
    with namesrv_sets.scope(target):
        info = runner.dashboard_refresh(run_id=run_id, trigger=trigger)
    return {"id": info.id, "status": info.status, "error": info.error, "namesrv_set": tier}
