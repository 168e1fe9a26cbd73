"""The dashboard pages through Django's test client: who sees what, the tables behind the charts,
range switching as an htmx swap, the drill-downs, and "Refresh now" (operators only; queued
runs poll; the end reloads the charts; a failed run leaves the last result, marked stale; Redis
down is a message in the page, not a 500)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.analytics._dashboard_data import seed_dashboards

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def seeded():
    return seed_dashboards()


def test_anonymous_is_sent_to_log_in(client) -> None:
    for url in ("/dashboards/", "/dashboards/topics/orders/", "/dashboards/groups/billing/", "/dashboards/refresh"):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/login/?next="), url


def test_viewer_sees_the_overview_but_no_refresh_control(as_role, seeded) -> None:
    response = as_role("viewer").get("/dashboards/")
    assert response.status_code == 200
    html = response.content.decode()
    # the nav links the dashboards, marked current
    assert re.search(r'<a href="/dashboards/" data-testid="menu-dashboards" aria-current="page">Dashboards</a>', html)
    # the chart panels name their JSON; the chart library and script are served locally
    assert 'data-api="/api/v1/dashboards/throughput"' in html and 'data-api="/api/v1/dashboards/backlog"' in html
    assert "/static/vendor/uplot/uPlot.iife.min.js" in html and "/static/js/dashboards.js" in html
    assert "//cdn" not in html and "https://" not in html
    # top lists and trends, linked to the drill-downs
    assert '<a href="/dashboards/topics/orders/">orders</a>' in html
    assert '<a href="/dashboards/groups/billing/">billing</a>' in html
    assert "▲ growing" in html and "▼ draining" in html
    assert "1 h 4 min" in html  # audit drains in 64 minutes
    assert 'data-testid="last-refresh"' in html and "never" not in _between(
        html, 'data-testid="last-refresh">', "</dd>"
    )
    assert 'data-testid="refresh-now"' not in html
    assert 'data-testid="stale"' not in html


def test_viewer_may_not_refresh(as_role) -> None:
    response = as_role("viewer").post("/dashboards/refresh", **HTMX)
    assert response.status_code == 403
    from analytics.models import RefreshRun

    assert not RefreshRun.objects.exists()


def test_operator_sees_the_refresh_control_with_a_real_form_action(as_role, seeded) -> None:
    html = as_role("operator").get("/dashboards/?range=day").content.decode()
    form = _between(html, '<form class="refresh-form"', "</form>")
    assert 'method="post" action="/dashboards/refresh"' in form and 'hx-post="/dashboards/refresh"' in form
    assert 'name="next" value="/dashboards/?range=day"' in form
    assert '<button type="submit" data-testid="refresh-now">Refresh now</button>' in form


def test_empty_dashboards_say_so(as_role) -> None:
    html = as_role("viewer").get("/dashboards/").content.decode()
    assert "No throughput yet." in html and "No backlog yet." in html and "No trends yet" in html
    assert "No samples yet — the sampler writes every 10 s and the dashboards refresh every minute." in html
    assert "never" in _between(html, 'data-testid="last-refresh">', "</dd>")


def test_range_switch_is_an_htmx_swap_of_the_same_partial(as_role, seeded) -> None:
    client = as_role("viewer")
    page = client.get("/dashboards/?range=week").content.decode()
    fragment = client.get("/dashboards/?range=week", **HTMX).content.decode()
    assert "<html" not in fragment and fragment.strip().startswith('<div id="dashboard-body"')
    assert fragment.strip() in page  # the page includes exactly what the swap returns
    assert 'data-range="week" class="current"' in fragment
    assert 'data-range="week"' in _between(fragment, 'data-testid="panel-throughput"', ">")
    for r in ("hour", "day", "week"):  # real links under hx-get
        assert f'href="/dashboards/?range={r}" hx-get="/dashboards/?range={r}"' in fragment
    refused = client.get(
        "/dashboards/?range=fortnight"
    )  # unknown: refused (console.query_filters), not the default range
    assert refused.status_code == 400 and 'data-field="range"' in refused.content.decode()


def test_topic_drill_down_lists_its_queues(as_role, seeded) -> None:
    response = as_role("viewer").get("/dashboards/topics/orders/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-params="by=queue&amp;topic=orders"' in html
    rows = re.findall(r'<tr data-queue="([^"]+)">', html)
    assert rows == ["broker-a:0", "broker-a:1", "broker-b:0", "broker-b:1"]
    assert "KiB/s" in html
    assert as_role("viewer").get("/dashboards/topics/nothing-here/").status_code == 200  # no rows: says so
    assert "No throughput of nothing-here" in as_role("viewer").get("/dashboards/topics/nothing-here/").content.decode()


def test_group_drill_down_lists_queues_and_its_trend(as_role, seeded) -> None:
    html = as_role("viewer").get("/dashboards/groups/billing/").content.decode()
    assert 'data-params="by=queue&amp;group=billing"' in html
    rows = re.findall(r'<tr data-queue="([^"]+)">', html)
    assert rows == ["orders:broker-a:0", "orders:broker-a:1", "orders:broker-b:0", "orders:broker-b:1"]
    trends = _between(html, 'data-testid="trends"', "</table>")
    assert "billing" in trends and "audit" not in trends and "falling behind" in trends  # growing
    assert "one-minute aggregates" in _between(html, 'data-testid="aggregates-note"', "</p>")


def test_refresh_with_redis_down_is_a_message_not_a_500(as_role, seeded, settings, unused_addr) -> None:
    settings.REDIS_URL = f"redis://{unused_addr}/0"
    client = as_role("operator")
    response = client.post("/dashboards/refresh", {"next": "/dashboards/"}, **HTMX)
    assert response.status_code == 503
    html = response.content.decode()
    assert html.strip().startswith('<div id="refresh-status"')
    assert re.search(r'data-testid="refresh-error">Redis at 127\.0\.0\.1:\d+ is unreachable', html)
    assert 'data-testid="refresh-now"' in html  # the control stays, to try again
    assert 'data-testid="stale"' not in html  # a run that never started does not make the result stale

    response = client.post("/dashboards/refresh", {"next": "/dashboards/?range=day"}, follow=True)  # without JavaScript
    assert response.redirect_chain == [("/dashboards/?range=day", 302)]
    assert "is unreachable, background work cannot be queued" in _between(
        response.content.decode(), 'data-testid="messages"', "</ul>"
    )
    assert '<a href="/dashboards/topics/orders/">orders</a>' in response.content.decode()  # the last result stays


def test_refresh_now_queues_a_run_that_polls_until_it_ends(as_role, seeded, celery_redis) -> None:
    from analytics.models import RefreshRun
    from analytics.runs import run_start

    client = as_role("operator")
    response = client.post("/dashboards/refresh", **HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    run = RefreshRun.objects.get(status="queued")
    assert f'hx-get="/dashboards/refresh?run={run.pk}" hx-trigger="every 1s"' in html
    assert 'data-testid="run-status">queued<' in html
    assert re.search(r'data-testid="refresh-now" disabled', html)

    again = client.post("/dashboards/refresh", **HTMX).content.decode()  # one run at a time
    assert RefreshRun.objects.count() == 2  # the seeded good run and this one
    assert f'data-run-id="{run.pk}"' in again

    run_start(run.pk)
    RefreshRun.objects.filter(pk=run.pk).update(progress="throughput 1m by queue")
    poll = client.get(f"/dashboards/refresh?run={run.pk}", **HTMX)
    assert 'hx-trigger="every 1s"' in poll.content.decode() and "HX-Trigger" not in poll
    assert 'data-testid="run-progress">throughput 1m by queue<' in poll.content.decode()

    RefreshRun.objects.filter(pk=run.pk).update(status="succeeded", progress="done", finished_at=timezone.now())
    done = client.get(f"/dashboards/refresh?run={run.pk}", **HTMX)
    assert done["HX-Trigger"] == "dashboards-refreshed"  # the page body reloads its tables and charts
    assert 'hx-trigger="every 1s"' not in done.content.decode()  # the run's polling stops; the slow live poll goes on
    assert "?seen=" in done.content.decode()
    assert 'data-testid="run-status">succeeded<' in done.content.decode()
    # the page body listens for that event and reloads itself
    page = client.get("/dashboards/").content.decode()
    assert 'hx-get="/dashboards/?range=hour" hx-trigger="dashboards-refreshed from:body"' in page


def test_refresh_without_javascript_redirects_back_with_a_message(as_role, seeded, celery_redis) -> None:
    client = as_role("operator")
    response = client.post("/dashboards/refresh", {"next": "/dashboards/topics/orders/"}, follow=True)
    assert response.redirect_chain == [("/dashboards/topics/orders/", 302)]
    assert re.search(r"Dashboard refresh #\d+ queued\.", response.content.decode())
    response = client.post("/dashboards/refresh", {"next": "https://elsewhere.example/"})
    assert response["Location"] == "/dashboards/"  # only back to this site
    assert client.get("/dashboards/refresh")["Location"] == "/dashboards/"


def test_a_failed_run_keeps_the_last_result_marked_stale(as_role, seeded) -> None:
    from analytics.runs import run_fail, run_open, run_start

    run, _ = run_open(trigger="manual", requested_by="operator-user")
    run_start(run.pk, now=timezone.now() - timedelta(seconds=30))
    run_fail(run.pk, "Spark: executor lost")
    html = as_role("viewer").get("/dashboards/").content.decode()
    badge = _between(html, 'data-testid="stale"', "</span>")
    assert "stale since" in badge
    assert 'data-testid="run-error">Spark: executor lost<' in html and "The last good result stays." in html
    assert '<a href="/dashboards/topics/orders/">orders</a>' in html  # the last good result, not half of a new one
    assert 'hx-trigger="every 1s"' not in html


def test_a_run_started_elsewhere_is_followed_by_the_page(as_role, seeded) -> None:
    from analytics.runs import run_open

    run, _ = run_open(trigger="nightly", requested_by="beat")
    html = as_role("viewer").get("/dashboards/groups/billing/").content.decode()
    assert f'hx-get="/dashboards/refresh?run={run.pk}" hx-trigger="every 1s"' in html  # viewers watch it too
    poll = as_role("viewer").get(f"/dashboards/refresh?run={run.pk}", **HTMX)
    assert poll.status_code == 200 and 'data-testid="refresh-now"' not in poll.content.decode()
    assert as_role("viewer").get("/dashboards/refresh?run=999999", **HTMX).status_code == 404


def _between(text: str, start: str, end: str) -> str:
    i = text.index(start)
    return text[i : text.index(end, i + len(start))]


def test_time_to_drain_reads_nothing_to_drain_an_estimate_or_keeping_pace(as_role, seeded) -> None:
    from analytics.models import BacklogTrend

    now = seeded["now"]
    BacklogTrend.objects.bulk_create(
        [  # as the job leaves them (analytics.jobs.trend_rule)
            BacklogTrend(
                group="healthy",
                topic="orders",
                backlog=0,
                slope_per_s=0.0,
                trend="steady",
                consume_rate=50.0,
                produce_rate=50.0,
                time_to_drain_s=0.0,
                as_of=now,
            ),
            BacklogTrend(
                group="inflight",
                topic="orders",
                backlog=4,
                slope_per_s=0.2,
                trend="steady",
                consume_rate=50.0,
                produce_rate=50.0,
                time_to_drain_s=None,
                as_of=now,
            ),
        ]
    )
    html = as_role("viewer").get("/dashboards/").content.decode()
    row = {g: _between(html, f'<tr data-group="{g}"', "</tr>") for g in ("healthy", "inflight", "audit")}
    assert "nothing to drain" in row["healthy"] and "never" not in row["healthy"]
    assert "keeping pace" in row["inflight"] and "not draining" not in row["inflight"] and ">steady<" in row["inflight"]
    assert "one-minute aggregates" in html and 'data-params="by=topic"' in html  # system topics off by default
    shown = as_role("viewer").get("/dashboards/?range=hour&system=1").content.decode()
    assert 'data-params="by=topic&amp;system=true"' in shown and "Hide system topics" in shown
    assert "1 h 4 min" in row["audit"]  # shrinking: an estimate


def test_between_runs_the_page_polls_for_a_newer_result(as_role, seeded) -> None:
    from analytics.models import DashboardState, RefreshRun

    client = as_role("viewer")
    html = client.get("/dashboards/").content.decode()
    seen = re.search(
        r'hx-get="/dashboards/refresh\?seen=([^"]+)" hx-trigger="every (\d+)s \[document.visibilityState', html
    )
    assert seen, _between(html, '<div id="refresh-status"', ">")
    same = client.get(f"/dashboards/refresh?seen={seen.group(1)}", **HTMX)
    assert same.status_code == 200 and "HX-Trigger" not in same  # nothing new: the charts stay
    # beat's live refresh finished meanwhile: the next poll reloads the charts
    newer = RefreshRun.objects.create(
        trigger="live", requested_by="beat", status="succeeded", finished_at=timezone.now()
    )
    DashboardState.objects.filter(pk=1).update(last_good_run=newer)
    answer = client.get(f"/dashboards/refresh?seen={seen.group(1)}", **HTMX)
    assert answer["HX-Trigger"] == "dashboards-refreshed"
    assert "seen=" + newer.finished_at.strftime("%Y-%m-%dT%H") in answer.content.decode().replace("%3A", ":")


def test_another_sets_pages_and_api_show_that_sets_rows_only(as_role, viewer, seeded) -> None:
    """Every set has dashboards of its own (docs/clusters.md): on another set default's figures are not shown
    as that tier's, and no coverage note is needed (the API's ``coverage`` names the current set)."""
    from brokers.models import NamesrvSet

    NamesrvSet.objects.create(name="second", namesrv_addr="127.0.0.1:9")
    page = as_role("viewer")
    for url in ("/dashboards/", "/dashboards/topics/orders/", "/dashboards/groups/billing/"):
        for tier in ("default", "second"):
            assert b'data-testid="dashboards-coverage"' not in page.get(f"{url}?namesrv_set={tier}").content, url
    assert (
        '<a href="/dashboards/topics/orders/">orders</a>'
        not in page.get("/dashboards/?namesrv_set=second").content.decode()
    )
    for kind in ("throughput", "backlog"):
        mine = viewer.get(f"/api/v1/dashboards/{kind}?range=day").json()
        assert mine["coverage"] == {"namesrv_set": "default", "covers_current_set": True, "note": ""} and mine["series"]
        other = viewer.get(f"/api/v1/dashboards/{kind}?range=day&namesrv_set=second").json()
        assert other["coverage"] == {"namesrv_set": "second", "covers_current_set": True, "note": ""}
        assert other["series"] == [] and other["top"] == [] and other["state"]["run"] is None
