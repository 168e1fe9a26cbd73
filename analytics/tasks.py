"""Analytics tasks: metrics sampling (beat, every SAMPLE_INTERVAL_S) and the dashboard refresh
(queue ``analytics``: incremental every ``LIVE_REFRESH_S`` and in full nightly from beat, on demand
from the console and the API).

Thin: JSON arguments in, one service call, a JSON-able summary out. Both are safe to run twice:
a repeated sample is one more sample; a refresh delivered again after its run finished does
nothing (analytics.runner.dashboard_refresh), and one delivered again while its run is marked
running takes the run over (its worker died).
"""
from __future__ import annotations

from dataclasses import asdict

from celery import shared_task
from django.conf import settings

from analytics import runner, sampler


def _limits(name: str, soft_margin_s: int) -> dict:
    hard = settings.GANTRY_TASK_TIME_LIMITS[name]
    return {"time_limit": hard, "soft_time_limit": max(1, hard - soft_margin_s)}


@shared_task(name="analytics.tasks.metrics_sample_task", acks_late=True, ignore_result=True, **_limits("short", 5))
def metrics_sample_task() -> dict:
    """Sample every broker once into the metrics lake; the counts (the file names stay out of the
    worker's log, which would print them every few seconds)."""
    result = asdict(sampler.metrics_sample())
    result["files"] = len(result["files"])
    return result


@shared_task(name="analytics.tasks.dashboard_refresh_task", acks_late=True, **_limits("dashboard_refresh", 30))
def dashboard_refresh_task(run_id: int | None = None, trigger: str = "nightly") -> dict:
    """Run refresh ``run_id``; without one (beat: ``live`` every minute, ``nightly``) open a run for
    ``trigger`` unless one is active, in which case this run is skipped (the active one covers it)."""
    if run_id is None and trigger == "live" and not runner.new_samples():
        return {"id": None, "status": "skipped", "error": "", "reason": "no samples since the last refresh"}
    info = runner.dashboard_refresh(run_id=run_id, trigger=trigger)
    return {"id": info.id, "status": info.status, "error": info.error}
