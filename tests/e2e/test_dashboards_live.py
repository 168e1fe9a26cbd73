"""Dashboards in the browser, live and with sane axes: samples written two minutes ago appear on
an open page once beat's incremental refresh ran, without anyone pressing a button; day and week
charts with one point keep to their range; a small integer backlog ticks 0, 1 (no "1 1 1 0 0 0")."""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone

import pytest

from tests.e2e.conftest import log_in
from tests.e2e.test_dashboards import _legend, _wait_drawn, _write_lake
from tests.fixtures.console import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PLOT_INFO = "sel => window.gantryDashboards.plotInfo(document.querySelector(sel))"


def _floor(instant: datetime, seconds: int) -> datetime:
    epoch = int(instant.timestamp())
    return datetime.fromtimestamp(epoch - epoch % seconds, tz=timezone.utc)


def _beat_live(settings) -> dict:
    """The beat entry's registered Celery task, called in-process as the analytics worker calls it."""
    from console.celery import app

    app.loader.import_default_modules()
    entry = settings.CELERY_BEAT_SCHEDULE["dashboard-refresh-live"]
    [answer] = app.tasks[entry["task"]](**entry["kwargs"])["sets"]  # one per configured set: default only here
    assert answer["namesrv_set"] == "default"
    return answer


def test_an_open_page_shows_samples_two_minutes_old_without_a_button(
    page, live_server, make_user, screenshot, settings, tmp_path, spark, monkeypatch
) -> None:
    import analytics.spark
    import analytics.views

    monkeypatch.setattr(analytics.views, "LIVE_POLL_S", 2)  # the page's poll between runs (15 s in use)
    monkeypatch.setattr(analytics.spark, "_session", spark)  # the worker's warm session: the tests' shared one
    monkeypatch.setattr(analytics.spark, "_pid", os.getpid())
    lake = tmp_path / "lake"
    settings.GANTRY_ANALYTICS = {**settings.GANTRY_ANALYTICS, "LAKE_DIR": str(lake), "SAMPLE_INTERVAL_S": 20.0}
    two_minutes_ago = datetime.now(timezone.utc).replace(microsecond=0) - timedelta(minutes=2)
    _write_lake(lake, now=two_minutes_ago)  # ten minutes of sampling, the last two minutes ago
    make_user("viewer", username="watcher", password=PASSWORD)
    log_in(page, live_server.url, "watcher", PASSWORD)
    page.goto(f"{live_server.url}/dashboards/")
    page.wait_for_selector("[data-testid=panel-throughput][data-loaded=true]")
    assert page.locator("[data-testid=empty-throughput]").is_visible()  # sampled, never refreshed
    screenshot("before")

    assert _beat_live(settings)["status"] == "succeeded"
    # nobody touches the page: its poll sees the newer result and redraws
    page.wait_for_selector("[data-testid=panel-throughput][data-loaded=true] canvas", timeout=30000)
    _wait_drawn(page, "backlog")
    assert _legend(page, "throughput") == ["clicks"] and _legend(page, "backlog") == ["reporting/clicks"]
    assert page.locator("[data-testid=data-until]").inner_text() == f"{two_minutes_ago:%Y-%m-%d %H:%M:%S} UTC"
    info = page.evaluate(PLOT_INFO, "[data-testid=panel-throughput]")
    assert info["points"] >= 10
    screenshot("live")


def _throughput_points(topic: str, resolution: str, windows: list[datetime], rate: float = 12.5) -> None:
    from analytics.models import ThroughputPoint

    seconds = 60 if resolution == "1m" else 3600
    ThroughputPoint.objects.bulk_create(
        [
            ThroughputPoint(
                resolution=resolution,
                level="topic",
                window_start=w,
                topic=topic,
                messages=int(rate * seconds),
                msgs_per_s=rate,
                bytes_per_s=rate * 100,
            )
            for w in windows
        ]
    )


def _x_span(page, url: str) -> tuple[float, dict]:
    page.goto(url)
    _wait_drawn(page, "throughput")
    info = page.evaluate(PLOT_INFO, "[data-testid=panel-throughput]")
    return info["xMax"] - info["xMin"], info


def test_axes_keep_to_the_range_for_one_and_two_points_and_count_in_whole_numbers(
    page, live_server, make_user, screenshot
) -> None:
    from analytics.models import BacklogPoint

    now = datetime.now(timezone.utc)
    hour, minute = _floor(now, 3600), _floor(now, 60)
    _throughput_points("solo", "1h", [hour])  # one point in the day and the week ranges
    _throughput_points("solo", "1m", [minute - timedelta(minutes=3), minute - timedelta(minutes=2)])  # two in the hour
    BacklogPoint.objects.bulk_create(
        [  # a group's queue with a backlog of 0 or 1
            BacklogPoint(
                resolution="1m",
                level="queue",
                window_start=minute - timedelta(minutes=m),
                group="tiny",
                topic="solo",
                broker="broker-a",
                queue_id=0,
                backlog=m % 2,
                consume_rate=1.0,
                produce_rate=1.0,
            )
            for m in range(8)
        ]
    )
    make_user("viewer", username="watcher", password=PASSWORD)
    log_in(page, live_server.url, "watcher", PASSWORD)

    span, info = _x_span(page, f"{live_server.url}/dashboards/?range=day")
    assert info["points"] == 1 and 24 * 3600 <= span <= 26 * 3600, info  # a day, not years
    assert all(len(label.split("\n")[-1]) == 8 for label in info["xLabels"]), info["xLabels"]  # HH:MM:SS ticks
    screenshot("day-one-point")
    span, info = _x_span(page, f"{live_server.url}/dashboards/?range=week")
    assert info["points"] == 1 and 7 * 86400 <= span <= 8 * 86400 + 3600, info
    screenshot("week-one-point")
    span, info = _x_span(page, f"{live_server.url}/dashboards/?range=hour")
    assert info["points"] == 2 and 3600 <= span <= 3600 + 120, info
    assert info["yMin"] == 0 and info["yMax"] > 12.5

    page.goto(f"{live_server.url}/dashboards/groups/tiny/")
    _wait_drawn(page, "queue-backlog")
    info = page.evaluate(PLOT_INFO, "[data-testid=panel-queue-backlog]")
    labels = [label for label in info["yLabels"] if label]
    assert labels == ["0", "1"], info["yLabels"]  # whole numbers, each once
    assert len(labels) == len(set(info["yLabels"]) - {""})
    screenshot("group-small-backlog")


def test_the_chart_scales_for_any_number_of_points(page, live_server, make_user) -> None:
    """The scale and tick helpers the charts use, for 0, 1, 2 and many points and small integers."""
    make_user("viewer", username="watcher", password=PASSWORD)
    log_in(page, live_server.url, "watcher", PASSWORD)
    page.goto(f"{live_server.url}/dashboards/")
    page.wait_for_function("() => window.gantryDashboards && window.gantryDashboards.scales")
    got = page.evaluate("""() => {
      const s = window.gantryDashboards.scales, count = window.gantryDashboards.formats.count;
      return {
        none: s.x(NaN, NaN, [], 3600), onlyOne: s.x(NaN, NaN, [1000], 3600), one: s.x(0, 86400, [43200], 3600),
        two: s.x(0, 3600, [600, 660], 60), outside: s.x(100, 200, [50, 300], 60),
        yFlat: s.y(0), ySmall: s.y(1), ticks: s.ticks([0, 0.2, 0.4, 0.6, 0.8, 1], count), big: s.ticks([0, 5000, 10000], count),
      };
    }""")
    assert got["none"] == [0, 1] and got["onlyOne"] == [1000 - 3600, 1000 + 3600]
    assert got["one"] == [0, 86400] and got["two"] == [0, 3600] and got["outside"] == [50, 300]
    assert got["yFlat"] == [0, 1] and got["ySmall"] == [0, pytest.approx(1.1)]
    assert got["ticks"] == ["0", "", "", "1", "", ""] and got["big"] == ["0", "5,000", "10k"]
