"""Dashboards in the browser: charts drawn by the vendored uPlot from /api/v1/dashboards JSON,
range and "by" switching, drill-down to a topic's and a group's queues, and "Refresh now"
running the real refresh (lake -> Spark jobs -> result rows) with its progress, then a failed
refresh that leaves the last result in place, marked stale."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import pytest

from tests.analytics._dashboard_data import seed_dashboards
from tests.fixtures.console import PASSWORD
from tests.e2e.conftest import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# Pixels of a series' colour on a chart's canvas: proof the line was drawn, not just the axes.
COLOURED_PIXELS = """([selector, hex]) => {
  const c = document.querySelector(selector + ' canvas');
  if (!c) return -1;
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  const r = parseInt(hex.slice(1, 3), 16), g = parseInt(hex.slice(3, 5), 16), b = parseInt(hex.slice(5, 7), 16);
  let n = 0;
  for (let i = 0; i < d.length; i += 4) if (Math.abs(d[i] - r) < 40 && Math.abs(d[i + 1] - g) < 40 && Math.abs(d[i + 2] - b) < 40 && d[i + 3] > 200) n++;
  return n;
}"""
FIRST_COLOUR, SECOND_COLOUR = "#2f5bd3", "#e8590c"


def _wait_drawn(page, panel: str) -> None:
    page.wait_for_selector(f"[data-testid=panel-{panel}][data-loaded=true] canvas")


def _legend(page, panel: str) -> list[str]:
    return page.locator(f"[data-testid=panel-{panel}] .u-legend .u-series:not(:first-child) .u-label").all_inner_texts()


def test_charts_draw_from_the_api_switch_range_and_drill_down(page, live_server, make_user, screenshot) -> None:
    seed_dashboards()
    make_user("viewer", username="watcher", password=PASSWORD)
    log_in(page, live_server.url, "watcher", PASSWORD)
    api_calls: list[str] = []
    page.on("request", lambda r: api_calls.append(r.url) if "/api/v1/dashboards/" in r.url else None)
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(live_server.url) else None)

    page.click("nav >> text=Dashboards")
    page.wait_for_url(f"{live_server.url}/dashboards/")
    _wait_drawn(page, "throughput")
    _wait_drawn(page, "backlog")
    assert _legend(page, "throughput") == ["orders", "payments"]
    assert _legend(page, "backlog") == ["audit/payments", "billing/orders"]
    assert page.evaluate(COLOURED_PIXELS, ["[data-testid=panel-throughput]", FIRST_COLOUR]) > 200
    assert page.evaluate(COLOURED_PIXELS, ["[data-testid=panel-throughput]", SECOND_COLOUR]) > 200
    assert any("throughput?by=topic&range=hour" in u for u in api_calls) and any(
        "backlog?by=group&range=hour" in u for u in api_calls
    )
    assert page.locator("[data-testid=refresh-now]").count() == 0  # viewers do not refresh
    assert "refreshed" in page.locator("[data-testid=panel-throughput] [data-role=state]").inner_text()

    # hovering shows the values under the cursor, in the panel's unit
    box = page.locator("[data-testid=panel-throughput] .u-over").bounding_box()
    page.mouse.move(box["x"] + box["width"] * 0.8, box["y"] + box["height"] / 2)
    values = page.locator(
        "[data-testid=panel-throughput] .u-legend .u-series:not(:first-child) .u-value"
    ).all_inner_texts()
    assert all(v.endswith(" msgs/s") for v in values), values
    assert (
        page.locator("[data-testid=panel-throughput] .u-legend .u-series:first-child .u-value")
        .inner_text()
        .startswith("20")
    )
    screenshot("overview-hour")

    # the last day, hour windows: an htmx swap of the body, the URL follows
    api_calls.clear()
    page.click("[data-testid=range] >> text=Last day")
    page.wait_for_url(f"{live_server.url}/dashboards/?range=day")
    page.wait_for_selector("[data-testid=panel-throughput][data-range=day][data-loaded=true] canvas")
    assert any("range=day" in u for u in api_calls)
    assert page.locator("[data-testid=range] a.current").inner_text() == "Last day"
    assert "per hour" in page.locator("[data-testid=panel-throughput] [data-role=state]").inner_text()

    # by broker, then bytes per second
    page.select_option("[data-testid=panel-throughput] select[data-control=by]", "broker")
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=panel-throughput] .u-legend .u-label')].some(e => e.innerText === 'broker-a')"
    )
    assert _legend(page, "throughput") == ["broker-a", "broker-b"]
    page.select_option("[data-testid=panel-throughput] select[data-control=metric]", "bytes_per_s")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=panel-throughput] .u-legend').innerText.includes('KiB/s')"
    )
    screenshot("overview-day-by-broker-bytes")

    # drill down to the topic's queues from the chart
    page.select_option("[data-testid=panel-throughput] select[data-control=by]", "topic")
    page.click("[data-testid=panel-throughput] [data-role=drill] >> text=orders")
    page.wait_for_url(f"{live_server.url}/dashboards/topics/orders/")
    _wait_drawn(page, "queue-msgs")
    assert _legend(page, "queue-msgs") == [
        "orders/broker-a/0",
        "orders/broker-a/1",
        "orders/broker-b/0",
        "orders/broker-b/1",
    ]
    assert page.locator("[data-testid=queues] tbody tr").count() == 4
    _wait_drawn(page, "queue-bytes")
    screenshot("topic-orders")

    # and to a group's queues from the trends table
    page.goto(f"{live_server.url}/dashboards/")
    page.click("[data-testid=trends] >> text=billing")
    page.wait_for_url(f"{live_server.url}/dashboards/groups/billing/")
    _wait_drawn(page, "queue-backlog")
    _wait_drawn(page, "queue-rates")
    assert len(_legend(page, "queue-backlog")) == 4
    page.select_option("[data-testid=panel-queue-rates] select[data-control=metric]", "produce_rate")
    page.wait_for_selector("[data-testid=panel-queue-rates][data-loaded=true] canvas")
    screenshot("group-billing")
    assert outside == []  # no CDN, nothing off the site


def _write_lake(root, *, now: datetime, minutes: int = 12, step_s: int = 20) -> None:
    """Samples every ``step_s`` for the last ``minutes``: topic ``clicks`` (3 queues on broker-a,
    ~50 msgs/s each, more on queue 0) and group ``reporting`` falling behind on it."""
    from analytics.lake import GROUP_SAMPLES, QUEUE_SAMPLES, write_samples

    start = now - timedelta(minutes=minutes)
    rounds = minutes * 60 // step_s
    for i in range(rounds + 1):
        ts = start + timedelta(seconds=i * step_s)
        ts_ms = int(ts.timestamp() * 1000)
        max_offsets = [i * step_s * (50 + 30 * (q == 0)) for q in range(3)]
        write_samples(
            root,
            QUEUE_SAMPLES,
            ts_ms=ts_ms,
            broker="broker-a",
            columns={
                "broker": ["broker-a"] * 3,
                "topic": ["clicks"] * 3,
                "queue_id": [0, 1, 2],
                "min_offset": [0, 0, 0],
                "max_offset": max_offsets,
                "put_bytes": [m * 300 for m in max_offsets],
            },
        )
        write_samples(
            root,
            GROUP_SAMPLES,
            ts_ms=ts_ms,
            broker="broker-a",
            columns={
                "broker": ["broker-a"] * 3,
                "group": ["reporting"] * 3,
                "topic": ["clicks"] * 3,
                "queue_id": [0, 1, 2],
                "committed_offset": [int(m * 0.8) for m in max_offsets],
                "max_offset": max_offsets,
            },
        )


def _run_in_background(run_id: int, spark_session, root) -> threading.Thread:
    from django.db import connection

    from analytics import runner

    def work() -> None:
        try:
            runner.dashboard_refresh(run_id=run_id, spark=spark_session, root=root)
        finally:
            connection.close()

    thread = threading.Thread(target=work, name=f"refresh-{run_id}", daemon=True)
    thread.start()
    return thread


def test_refresh_now_runs_the_refresh_with_progress_and_a_failure_keeps_the_last_result(
    page, live_server, make_user, screenshot, celery_redis, settings, tmp_path, spark
) -> None:  # noqa: F811
    from analytics.models import RefreshRun

    lake = tmp_path / "lake"
    settings.GANTRY_ANALYTICS = {**settings.GANTRY_ANALYTICS, "LAKE_DIR": str(lake), "SAMPLE_INTERVAL_S": 20.0}
    _write_lake(lake, now=datetime.now(timezone.utc))
    make_user("operator", username="ops", password=PASSWORD)
    log_in(page, live_server.url, "ops", PASSWORD)

    page.goto(f"{live_server.url}/dashboards/")
    page.wait_for_selector("[data-testid=panel-throughput][data-loaded=true]")
    assert page.locator("[data-testid=empty-throughput]").is_visible()
    assert "No samples yet" in page.locator("[data-testid=empty-throughput]").inner_text()
    assert page.locator("[data-testid=last-refresh]").inner_text() == "never"
    screenshot("empty")

    # Refresh now: the run is queued (no analytics worker here), the fragment polls it
    page.click("[data-testid=refresh-now]")
    page.wait_for_selector("[data-testid=run-status] >> text=queued")
    assert page.locator("[data-testid=refresh-now]").is_disabled()
    assert page.locator("#refresh-status progress").is_visible()
    run = RefreshRun.objects.get(status="queued")

    # the refresh runs (the analytics worker's code, in a thread here): the page follows its progress
    thread = _run_in_background(run.pk, spark, lake)
    page.wait_for_selector("[data-testid=run-status] >> text=running", timeout=30000)
    page.wait_for_selector("[data-testid=run-progress]")
    seen = {page.locator("[data-testid=run-progress]").inner_text()}
    screenshot("progress")
    while thread.is_alive():
        texts = page.locator("[data-testid=run-progress]").all_inner_texts()
        seen.update(texts)
        thread.join(0.3)
    assert len(seen) >= 2, seen  # the steps went by, not one frozen line
    page.wait_for_selector("[data-testid=run-status] >> text=succeeded", timeout=15000)
    assert RefreshRun.objects.get(pk=run.pk).status == "succeeded"

    # the end reloads the page body: tables and charts from the new result
    page.wait_for_selector("[data-testid=top-topics] >> text=clicks")
    _wait_drawn(page, "throughput")
    _wait_drawn(page, "backlog")
    assert _legend(page, "throughput") == ["clicks"]
    assert _legend(page, "backlog") == ["reporting/clicks"]
    assert page.locator("[data-testid=last-refresh]").inner_text() != "never"
    assert not page.locator("[data-testid=refresh-now]").is_disabled()
    assert (
        page.evaluate(COLOURED_PIXELS, ["[data-testid=panel-throughput]", FIRST_COLOUR]) > 40
    )  # 12 minutes of an hour
    screenshot("refreshed")

    # a refresh that fails (a broken file in the lake): the last good result stays, marked stale
    broken = next((lake / "queue_samples").rglob("hour=*")) / "part-0-broker-a-broken.parquet"
    broken.write_bytes(b"not parquet at all")
    page.click("[data-testid=refresh-now]")
    page.wait_for_selector("[data-testid=run-status] >> text=queued")
    failing = RefreshRun.objects.get(status="queued")
    _run_in_background(failing.pk, spark, lake).join(120)
    page.wait_for_selector("[data-testid=run-status] >> text=failed", timeout=15000)
    page.wait_for_selector("[data-testid=stale]")
    assert "stale since" in page.locator("[data-testid=stale]").inner_text()
    assert len(page.locator("[data-testid=run-error]").inner_text()) <= 200  # the headline; the Java stack folds away
    page.wait_for_selector("[data-testid=panel-throughput] [data-testid=panel-stale]")
    assert _legend(page, "throughput") == ["clicks"]  # the last good result, whole
    assert page.locator("[data-testid=top-topics]").inner_text().count("clicks") == 1
    screenshot("failed-stale")
