"""The overview's small charts of the last hour: messages in (per broker) and out (per group) and the backlog per
group, drawn by the dashboards' script and vendored uPlot from the dashboards' JSON (nothing from another origin),
kept drawn through the overview's 5 s refresh, in light and dark mode."""

from __future__ import annotations

import pytest

from tests.analytics._dashboard_data import seed_dashboards
from tests.e2e.conftest import log_in
from tests.e2e.test_dashboards import COLOURED_PIXELS, FIRST_COLOUR, SECOND_COLOUR, _legend, _wait_drawn
from tests.fixtures.console import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

BACKGROUND = """(selector) => getComputedStyle(document.querySelector(selector)).backgroundColor"""
BRIGHT_PIXELS = """(selector) => { const c = document.querySelector(selector + ' canvas');
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; let n = 0;
  for (let i = 0; i < d.length; i += 4) if (d[i] > 225 && d[i + 1] > 225 && d[i + 2] > 225 && d[i + 3] > 200) n++;
  return n; }"""
LUMINANCE = """(selector) => { const m = getComputedStyle(document.querySelector(selector)).backgroundColor.match(/[\\d.]+/g).map(Number);
  return (0.2126 * m[0] + 0.7152 * m[1] + 0.0722 * m[2]) / 255; }"""


def test_the_overview_draws_the_last_hour_and_keeps_it_through_the_refresh(
    page, live_server, make_user, session_cluster, mq_settings, screenshot
) -> None:
    mq_settings(session_cluster.namesrv_addr)
    seed_dashboards()
    make_user("viewer", username="watcher", password=PASSWORD)
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(live_server.url) else None)
    log_in(page, live_server.url, "watcher", PASSWORD)
    page.goto(f"{live_server.url}/")
    for panel in ("overview-tps-in", "overview-tps-out", "overview-backlog"):
        _wait_drawn(page, panel)
        drawn = sum(
            page.evaluate(COLOURED_PIXELS, [f"[data-testid=panel-{panel}]", c]) for c in (FIRST_COLOUR, SECOND_COLOUR)
        )
        assert drawn > 50, (
            panel
        )  # the lines, not only the axes (the seeded groups consume alike: one line may cover the other)
        height = page.locator(f"[data-testid=panel-{panel}] canvas").first.bounding_box()["height"]
        assert height <= 200, (panel, height)  # small: the overview leads with health
    assert _legend(page, "overview-tps-in") == ["broker-a", "broker-b"]
    assert _legend(page, "overview-tps-out") == ["audit/payments", "billing/orders"]
    assert _legend(page, "overview-backlog") == ["audit/payments", "billing/orders"]
    health = page.locator("[data-testid=health]").bounding_box()["y"]
    assert health < page.locator("[data-testid=overview-charts]").bounding_box()["y"]
    assert not outside, outside

    # the overview refreshes every 5 s: the charts stay, drawn, the same elements
    page.evaluate(
        "() => { window.__panel = document.querySelector('[data-testid=panel-overview-backlog]'); window.__swaps = 0;"
        " document.body.addEventListener('htmx:afterSwap', () => window.__swaps++); }"
    )
    page.wait_for_function("() => window.__swaps >= 1", timeout=15000)
    assert page.evaluate("() => document.querySelector('[data-testid=panel-overview-backlog]') === window.__panel")
    assert page.locator("[data-testid=panel-overview-backlog] canvas").count() >= 1
    assert page.locator("[data-testid=brokers]").count() == 1

    assert page.evaluate(LUMINANCE, "[data-testid=panel-overview-tps-in]") > 0.8
    screenshot("overview-charts-light")
    page.emulate_media(color_scheme="dark")
    page.wait_for_function(
        "() => { const m = getComputedStyle(document.querySelector('[data-testid=panel-overview-tps-in]'))"
        ".backgroundColor.match(/[\\d.]+/g).map(Number); return m[0] + m[1] + m[2] < 200; }"
    )
    assert page.evaluate(LUMINANCE, "[data-testid=panel-overview-tps-in]") < 0.2
    # drawn again with the dark scheme's axes and grid: no light grid lines left on the dark panel
    page.wait_for_function(f"() => ({BRIGHT_PIXELS})('[data-testid=panel-overview-tps-in]') < 50", timeout=10000)
    screenshot("overview-charts-dark")
