"""/api/v1/dashboards: roles, the §4 envelopes (docs/analytics.md), refusals naming the field, and
"refresh now" against a real Redis (queued, deduplicated, 503 fast when Redis is down)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from analytics.models import BacklogPoint, BacklogTrend, DashboardState, Ranking, RefreshRun, ThroughputPoint

pytestmark = pytest.mark.django_db

THROUGHPUT = "/api/v1/dashboards/throughput"
BACKLOG = "/api/v1/dashboards/backlog"
REFRESH = "/api/v1/dashboards/refresh"


def _minute(ago: int):
    now = timezone.now()
    return now.replace(second=0, microsecond=0) - timedelta(minutes=ago)


@pytest.fixture
def results():
    """Result rows as a refresh leaves them: two minutes of topic orders, a group's backlog."""
    for ago, rate in ((2, 100.0), (1, 120.5)):
        ThroughputPoint.objects.create(
            resolution="1m",
            level="topic",
            window_start=_minute(ago),
            topic="orders",
            messages=int(rate * 60),
            msgs_per_s=rate,
            bytes_per_s=rate * 100,
        )
        for queue_id in (0, 1):
            ThroughputPoint.objects.create(
                resolution="1m",
                level="queue",
                window_start=_minute(ago),
                broker="broker-a",
                topic="orders",
                queue_id=queue_id,
                messages=int(rate * 30),
                msgs_per_s=rate / 2,
                bytes_per_s=None,
            )
        BacklogPoint.objects.create(
            resolution="1m",
            level="group",
            window_start=_minute(ago),
            group="billing",
            topic="orders",
            backlog=int(rate),
            consume_rate=rate - 1,
            produce_rate=rate,
        )
    ThroughputPoint.objects.create(
        resolution="1m", level="topic", window_start=_minute(90), topic="orders", messages=1, msgs_per_s=1.0
    )
    ThroughputPoint.objects.create(
        resolution="1h",
        level="topic",
        window_start=_minute(0).replace(minute=0),
        topic="orders",
        messages=1000,
        msgs_per_s=110.0,
    )
    BacklogTrend.objects.create(
        group="billing",
        topic="orders",
        backlog=120,
        slope_per_s=0.5,
        trend="growing",
        consume_rate=119.5,
        produce_rate=120.5,
        time_to_drain_s=None,
        as_of=timezone.now(),
    )
    Ranking.objects.create(kind="topics", rank=1, name="orders", value=110.25, as_of=timezone.now())
    Ranking.objects.create(kind="groups", rank=1, name="billing", value=120.0, as_of=timezone.now())
    run = RefreshRun.objects.create(
        trigger="nightly",
        requested_by="beat",
        status="succeeded",
        started_at=timezone.now(),
        finished_at=timezone.now(),
        heartbeat_at=timezone.now(),
    )
    DashboardState.objects.create(pk=1, last_good_run=run, watermark=timezone.now(), data_until=_minute(0))


def test_anonymous_callers_get_401_and_viewers_may_read_but_not_refresh(api_client_as):
    anonymous, viewer = api_client_as(None), api_client_as("viewer")
    for url in (THROUGHPUT, BACKLOG, "/api/v1/dashboards/refresh-runs/1"):
        assert anonymous.get(url).status_code == 401
    assert anonymous.post(REFRESH).status_code == 401
    assert viewer.get(THROUGHPUT).status_code == 200 and viewer.get(BACKLOG).status_code == 200
    answer = viewer.post(REFRESH)
    assert answer.status_code == 403 and answer.json()["code"] == "permission_denied"
    assert viewer.get("/api/v1/dashboards/refresh-runs/12345").status_code == 404


def test_throughput_json_is_the_documented_envelope(api_client_as, results):
    body = api_client_as("viewer").get(THROUGHPUT, {"range": "hour", "by": "topic"}).json()
    assert set(body) == {"range", "resolution", "by", "from", "to", "state", "coverage", "series", "top"}
    assert (body["range"], body["resolution"], body["by"]) == ("hour", "1m", "topic")
    assert body["from"].endswith("Z") and body["to"].endswith("Z")
    [series] = body["series"]
    assert series["key"] == {"topic": "orders", "broker": None, "queue_id": None} and series["label"] == "orders"
    t = _minute(2).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert series["points"][0] == {"t": t, "msgs_per_s": 100.0, "bytes_per_s": 10000.0}
    assert [p["msgs_per_s"] for p in series["points"]] == [100.0, 120.5]  # the 90-minute-old point is outside the hour
    assert body["top"] == [{"rank": 1, "name": "orders", "value": 110.25}]
    state = body["state"]
    assert set(state) == {"last_refresh_at", "data_until", "stale_since", "run"} and state["stale_since"] is None
    assert state["run"]["status"] == "succeeded" and state["run"]["trigger"] == "nightly"

    day = api_client_as("operator").get(THROUGHPUT, {"range": "day"}).json()
    assert day["resolution"] == "1h" and [p["msgs_per_s"] for p in day["series"][0]["points"]] == [110.0]


def test_throughput_by_queue_filters_by_topic_and_broker(api_client_as, results):
    viewer = api_client_as("viewer")
    body = viewer.get(THROUGHPUT, {"by": "queue", "topic": "orders", "broker": "broker-a"}).json()
    assert [s["key"] for s in body["series"]] == [
        {"topic": "orders", "broker": "broker-a", "queue_id": q} for q in (0, 1)
    ]
    assert body["series"][0]["label"] == "orders/broker-a/0" and body["series"][0]["points"][0]["bytes_per_s"] is None
    assert viewer.get(THROUGHPUT, {"by": "queue", "topic": "other"}).json()["series"] == []


def test_backlog_json_has_points_trends_and_top(api_client_as, results):
    body = api_client_as("viewer").get(BACKLOG, {"range": "hour", "by": "group", "group": "billing"}).json()
    assert set(body) == {"range", "resolution", "by", "from", "to", "state", "coverage", "series", "trends", "top"}
    [series] = body["series"]
    assert series["key"] == {"group": "billing", "topic": "orders", "broker": None, "queue_id": None}
    assert series["points"][-1] == {
        "t": _minute(1).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "backlog": 120,
        "consume_rate": 119.5,
        "produce_rate": 120.5,
    }
    assert body["trends"] == [
        {
            "group": "billing",
            "topic": "orders",
            "backlog": 120,
            "trend": "growing",
            "slope_per_s": 0.5,
            "consume_rate": 119.5,
            "produce_rate": 120.5,
            "time_to_drain_s": None,
        }
    ]
    assert body["top"] == [{"rank": 1, "name": "billing", "value": 120.0}]


@pytest.mark.parametrize(
    ("url", "params", "field"),
    [
        (THROUGHPUT, {"range": "month"}, "range"),
        (THROUGHPUT, {"by": "group"}, "by"),
        (THROUGHPUT, {"resolution": "5m"}, "resolution"),
        (THROUGHPUT, {"rnage": "day"}, "rnage"),
        (THROUGHPUT, {"by": "broker", "topic": "orders"}, "topic"),
        (THROUGHPUT, {"by": "topic", "broker": "broker-a"}, "broker"),
        (BACKLOG, {"by": "topic"}, "by"),
        (BACKLOG, {"range": ""}, "range"),
    ],
)
def test_bad_query_parameters_are_refused_naming_the_field(api_client_as, url, params, field):
    answer = api_client_as("viewer").get(url, params)
    assert answer.status_code == 400, answer.json()
    assert field in answer.json()["fields"]


def test_refresh_queues_a_run_once_and_shows_it(api_client_as, celery_redis):
    operator = api_client_as("operator")
    first = operator.post(REFRESH, {}, format="json")
    assert first.status_code == 202
    run = first.json()
    assert (run["status"], run["trigger"], run["requested_by"], run["error"]) == ("queued", "api", "api-operator", "")
    assert set(run) >= {
        "id",
        "status",
        "progress",
        "trigger",
        "requested_by",
        "created_at",
        "started_at",
        "finished_at",
        "error",
    }
    again = operator.post(REFRESH)
    assert again.status_code == 200 and again.json()["id"] == run["id"]  # the active run, not a second one
    assert RefreshRun.objects.get(pk=run["id"]).task_id
    shown = api_client_as("viewer").get(f"/api/v1/dashboards/refresh-runs/{run['id']}").json()
    assert shown == run
    assert operator.post(REFRESH, {"now": True}, format="json").json()["fields"] == {"now": ["unknown field."]}
    from brokers.models import NamesrvSet

    NamesrvSet.objects.create(name="second", namesrv_addr="127.0.0.1:9")
    other = operator.post(
        f"{REFRESH}?namesrv_set=second", {}, format="json"
    )  # "refresh now" on another set: that set's run
    assert other.status_code == 202 and other.json()["id"] != run["id"]
    assert RefreshRun.objects.get(pk=other.json()["id"]).namesrv_set == "second"
    assert RefreshRun.objects.get(pk=run["id"]).namesrv_set == "default"


def test_refresh_answers_503_fast_when_redis_is_down_and_the_run_is_recorded_failed(api_client_as, celery_redis):
    operator = api_client_as("operator")
    celery_redis.stop()
    answer = operator.post(REFRESH)  # how fast: bench/latency_bench.py
    assert answer.status_code == 503 and answer.json()["code"] == "queue_unavailable"
    assert str(celery_redis.port) in answer.json()["detail"]
    run = RefreshRun.objects.get()
    assert run.status == "failed" and "unreachable" in run.error and run.finished_at is not None
    assert DashboardState.load().stale_since is None  # a run that never started leaves the result as current as it was
    celery_redis.start()
    assert operator.post(REFRESH).status_code == 202  # the failed run does not block the next


def test_internal_topics_are_the_brokers_own() -> None:
    from analytics.selectors import internal_topics

    topics = [
        "Orders",
        "SCHEDULE_TOPIC_XXXX",
        "broker-a",
        "DefaultCluster",
        "DefaultCluster_REPLY_TOPIC",
        "%RETRY%billing",
        "Audit_REPLY_TOPIC",
    ]
    assert internal_topics(topics, ["broker-a", "broker-b"]) == {
        "SCHEDULE_TOPIC_XXXX",
        "broker-a",
        "DefaultCluster",
        "DefaultCluster_REPLY_TOPIC",
    }


def test_system_topics_are_left_out_of_the_topic_chart_unless_asked_for_and_never_top(api_client_as, results):
    for name, rate in (
        ("SCHEDULE_TOPIC_XXXX", 2.0),
        ("broker-a", 0.0),
        ("DefaultCluster", 0.0),
        ("DefaultCluster_REPLY_TOPIC", 0.0),
        ("RMQ_SYS_TRACE_TOPIC", 500.0),
    ):
        ThroughputPoint.objects.create(
            resolution="1m",
            level="topic",
            window_start=_minute(1),
            topic=name,
            messages=int(rate * 60),
            msgs_per_s=rate,
        )
    ThroughputPoint.objects.create(
        resolution="1m", level="broker", window_start=_minute(1), broker="broker-a", messages=1, msgs_per_s=1.0
    )
    Ranking.objects.create(kind="topics", rank=2, name="SCHEDULE_TOPIC_XXXX", value=2.0, as_of=timezone.now())
    Ranking.objects.create(kind="topics", rank=3, name="broker-a", value=0.0, as_of=timezone.now())
    viewer = api_client_as("viewer")
    body = viewer.get(THROUGHPUT, {"range": "hour", "by": "topic"}).json()
    assert [s["label"] for s in body["series"]] == ["orders"]  # the trace topic would dwarf it
    assert [t["name"] for t in body["top"]] == ["orders"]
    shown = viewer.get(THROUGHPUT, {"range": "hour", "by": "topic", "system": "true"}).json()
    assert [s["label"] for s in shown["series"]] == [
        "RMQ_SYS_TRACE_TOPIC",
        "SCHEDULE_TOPIC_XXXX",
        "orders",
    ]  # those that carried messages
    asked = viewer.get(THROUGHPUT, {"range": "hour", "by": "topic", "topic": "broker-a"}).json()
    assert [s["label"] for s in asked["series"]] == ["broker-a"]  # asked for by name: shown
