"""The refresh runner against a real lake in tmp_path, the shared local Spark session and the
test database: results, incremental reads, atomic replacement, stale marking, lost runs."""

from __future__ import annotations

from datetime import timedelta

import pytest

from analytics import selectors
from analytics.models import BacklogTrend, DashboardState, Ranking, RefreshRun, ThroughputPoint
from analytics.runner import dashboard_refresh, refresh_plan
from analytics.runs import run_open, runs_reap
from tests.analytics._lake import at, steady_workload

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def refresh(spark, as_of, **kwargs):
    return dashboard_refresh(trigger="manual", requested_by="test", spark=spark, as_of=as_of, **kwargs)


def topic_rates(resolution="1m", topic="orders"):
    return {
        p.window_start: p.msgs_per_s
        for p in ThroughputPoint.objects.filter(resolution=resolution, level="topic", topic=topic).order_by(
            "window_start"
        )
    }


def test_the_plan_reads_one_hour_and_a_sample_margin_before_the_watermark_hour():
    plan = refresh_plan(as_of=at("14:20"), watermark=at("14:05"), sample_interval_s=10)
    assert plan.emit_from == {"1h": at("14:00"), "1m": at("14:00")}
    assert plan.read_from == at("13:19:40")  # the top list's hour before 14:20, less two sample intervals
    first = refresh_plan(as_of=at("14:20"), watermark=None, sample_interval_s=10)
    assert first.emit_from["1h"] == at("14:00") - timedelta(days=8)
    assert first.emit_from["1m"] == at("13:20") - timedelta(days=1)  # minutes are kept a day and an hour


def test_a_refresh_turns_the_lake_into_throughput_backlog_trends_and_top_lists(spark, lake):
    steady_workload(lake, at("13:58"), at("14:10"), every_s=10)
    run = refresh(spark, at("14:10:05"))
    assert run.status == "succeeded", run.error
    assert run.rows_read == 2 * 2 * 73  # 73 rounds, two queues, two datasets
    rates = topic_rates()
    assert set(rates) == {at("13:58") + timedelta(minutes=m) for m in range(13)}
    assert all(rate == pytest.approx(6.0, rel=0.01) for rate in rates.values())
    queue_level = ThroughputPoint.objects.get(resolution="1m", level="queue", queue_id=1, window_start=at("14:05"))
    assert (queue_level.broker, queue_level.topic, queue_level.msgs_per_s, queue_level.bytes_per_s) == (
        "broker-a",
        "orders",
        3.0,
        300.0,
    )
    assert topic_rates("1h") == {at("13:00"): pytest.approx(6.0, rel=0.01), at("14:00"): pytest.approx(6.0, rel=0.01)}

    trend = BacklogTrend.objects.get(group="billing", topic="orders")
    assert trend.trend == "growing" and trend.slope_per_s == pytest.approx(2.0, rel=0.02)
    assert trend.backlog == 2 * 720 and trend.consume_rate == pytest.approx(4.0, rel=0.02)
    assert [(r.kind, r.rank, r.name) for r in Ranking.objects.all()] == [
        ("groups", 1, "billing"),
        ("topics", 1, "orders"),
    ]

    state = DashboardState.load()
    assert state.watermark == at("14:10:05") and state.data_until == at("14:10") and state.stale_since is None
    view = selectors.backlog_view(range="hour", by="group", now=at("14:10:05"))
    [series] = view["series"]
    assert series["key"] == {"group": "billing", "topic": "orders", "broker": None, "queue_id": None}
    assert (
        series["points"][-1]
        == {"t": "2026-11-22T14:10:00Z", "backlog": 1440, "consume_rate": None, "produce_rate": None}
        or series["points"][-1]["backlog"] == 1440
    )
    assert view["trends"][0]["trend"] == "growing" and view["top"] == [{"rank": 1, "name": "billing", "value": 1440.0}]


def test_the_next_run_reads_only_the_partitions_since_its_watermark_and_replaces_only_newer_windows(spark, lake):
    steady_workload(lake, at("11:50"), at("14:10"), every_s=30)
    assert refresh(spark, at("14:10:05")).status == "succeeded"
    old_ids = dict(ThroughputPoint.objects.filter(window_start__lt=at("14:00")).values_list("id", "window_start"))
    (lake / "queue_samples" / "date=2026-11-22" / "hour=11" / "part-0-broken.parquet").write_bytes(b"not parquet")

    steady_workload(lake, at("14:10:30"), at("14:20"), every_s=30, origin=at("11:50"))
    run = refresh(spark, at("14:20:10"))
    assert run.status == "succeeded", run.error  # the broken file is in an hour it did not read
    assert run.window_from == at("14:00")
    # it read from 13:19 (the top list's hour before 14:20, less two sample intervals): 2 x 2 rows a round
    assert run.rows_read == (61 * 2 + 1) * 4
    kept = dict(ThroughputPoint.objects.filter(window_start__lt=at("14:00")).values_list("id", "window_start"))
    assert kept == old_ids  # older windows untouched, same rows
    rates = topic_rates()
    assert max(rates) == at("14:20") and all(r == pytest.approx(6.0, rel=0.01) for r in rates.values())
    assert topic_rates("1h")[at("14:00")] == pytest.approx(6.0, rel=0.01)


def test_a_failed_run_keeps_the_last_good_result_marks_it_stale_and_the_next_run_clears_it(spark, lake):
    steady_workload(lake, at("13:58"), at("14:10"), every_s=10)
    good = refresh(spark, at("14:10:05"))
    before = selectors.throughput_view(range="hour", by="topic", now=at("14:10:05"))
    steady_workload(lake, at("14:10:10"), at("14:15"), every_s=10, origin=at("13:58"))
    broken = lake / "queue_samples" / "date=2026-11-22" / "hour=14" / "part-1-broken.parquet"
    broken.write_bytes(b"not parquet")

    failed = refresh(spark, at("14:15:05"))
    assert failed.status == "failed" and failed.finished_at is not None
    assert (
        failed.error.startswith(("SparkException", "AnalysisException", "Py4JJavaError")) and "\n" not in failed.error
    ), failed.error
    after = selectors.throughput_view(range="hour", by="topic", now=at("14:10:05"))
    assert after["series"] == before["series"] and after["top"] == before["top"]
    assert after["state"]["stale_since"] == selectors.iso(failed.started_at)
    assert after["state"]["last_refresh_at"] == selectors.iso(good.finished_at)
    assert after["state"]["run"]["status"] == "failed"

    broken.unlink()
    fixed = refresh(spark, at("14:15:05"))
    assert fixed.status == "succeeded", fixed.error
    state = selectors.dashboard_state()
    assert state["stale_since"] is None and state["data_until"] == "2026-11-22T14:15:00Z"
    assert max(topic_rates()) == at("14:15")


def test_the_nightly_call_opens_its_own_run_and_a_finished_run_delivered_again_does_nothing(spark, lake):
    steady_workload(lake, at("14:00"), at("14:02"), every_s=10)
    run = dashboard_refresh(trigger="nightly", spark=spark, as_of=at("14:02:05"))  # the beat's call: no run id
    assert (run.status, run.trigger, run.requested_by) == ("succeeded", "nightly", "beat")
    again = dashboard_refresh(run_id=run.id, spark=spark, as_of=at("14:30"))
    assert again == run and DashboardState.load().watermark == at("14:02:05")


def test_a_nightly_call_while_a_run_is_active_returns_that_run(lake):
    active, opened = run_open(trigger="manual", requested_by="someone")
    assert opened
    info = dashboard_refresh(trigger="nightly")  # no Spark needed: nothing starts
    assert info.id == active.pk and info.status == "queued" and RefreshRun.objects.count() == 1


def test_a_running_run_without_heartbeat_reads_as_lost_then_is_recorded_failed(settings, lake):
    run, _ = run_open(trigger="api", requested_by="someone")
    started = at("14:00")
    RefreshRun.objects.filter(pk=run.pk).update(
        status="running", started_at=started, heartbeat_at=started + timedelta(seconds=30)
    )
    lost_at = started + timedelta(seconds=30 + 121)

    state = selectors.dashboard_state(now=started + timedelta(seconds=60))
    assert state["run"]["status"] == "running" and state["stale_since"] is None
    state = selectors.dashboard_state(now=lost_at)
    assert state["run"]["status"] == "failed" and state["run"]["error"].startswith("worker lost")
    assert state["stale_since"] == "2026-11-22T14:00:00Z"
    assert RefreshRun.objects.get(pk=run.pk).status == "running"  # reading changed nothing

    assert runs_reap(now=lost_at) == [run.pk]
    recorded = RefreshRun.objects.get(pk=run.pk)
    assert recorded.status == "failed" and recorded.error.startswith("worker lost")
    assert DashboardState.load().stale_since == started
    _, opened = run_open(trigger="api", requested_by="someone", now=lost_at)
    assert opened
