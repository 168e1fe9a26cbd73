"""End to end, against the real cluster: produce at a known rate, sample every 2 s into a real
lake, refresh with the runner on the shared Spark session, read the dashboards' JSON.

One module-scoped scenario runs live once (about 80 to 150 s: until a whole calendar minute lies
inside the production and the stopped consumer has caught up again):

- topic A gets 50 msgs/s, paced on an absolute schedule, over 8 queues on two brokers;
- topic B gets 20 msgs/s; group G consumes it at most 40 msgs/s, is stopped (closed) after at least 12 s,
  15 s before a calendar minute ends, for 25 s, then restarted, and drains the backlog at about 20 msgs/s net.

The tests then refresh "as of" instants of the scenario (the trend of a run looks back from its
``as_of``), so Spark's speed on a busy machine does not move the phases they look at.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from analytics.runner import dashboard_refresh
from analytics.sampler import metrics_sample
from brokers.engine.client import (
    ClientConfig,
    ConsumerConfig,
    ConsumeConcurrentlyStatus,
    Message,
    Producer,
    PushConsumer,
)
from brokers.engine.client.admin import BlockingMQAdminClient
from tests.brokers.engine.client._cluster import create_topic

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow,
    pytest.mark.timeout(600),
    # a live 80-150 s scenario: its database work (results written by the runner, read by the
    # dashboards API) is what test_runner.py and test_api.py already do on PostgreSQL
    pytest.mark.sqlite_pass,
]

RATE_A = 50.0
RATE_B = 20.0
CONSUME_B = 40.0  # the consumer's capacity: it drains at RATE_B net once restarted
SAMPLE_S = 2.0
CONSUMING_S = 12.0
STOPPED_S = 25.0
STOP_BEFORE_MINUTE_S = 15.0  # the stop starts this long before a minute's end (see the scenario)
FAST = ClientConfig(
    rebalance_interval_s=0.5,
    poll_name_server_interval_s=0.5,
    heartbeat_broker_interval_s=1.0,
    persist_consumer_offset_interval_s=0.5,
)


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


@dataclass
class Scenario:
    lake: Path
    topic_a: str
    topic_b: str
    group: str
    produce_from: datetime | None = None
    produce_until: datetime | None = None
    stopped_at: datetime | None = None
    restarted_at: datetime | None = None
    drained_at: datetime | None = None
    rounds: int = 0
    sample_errors: list = field(default_factory=list)


class Paced(threading.Thread):
    """Send to ``topic`` at ``rate`` msgs/s on an absolute schedule (late sends catch up)."""

    def __init__(self, producer: Producer, topic: str, rate: float) -> None:
        super().__init__(name=f"paced-{topic}", daemon=True)
        self.producer, self.topic, self.rate = producer, topic, rate
        self.stop = threading.Event()
        self.sent = 0
        self.errors: list[Exception] = []

    def run(self) -> None:
        start = time.monotonic()
        while not self.stop.is_set():
            delay = start + self.sent / self.rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            try:
                self.producer.send(Message(self.topic, b"x" * 64))
            except Exception as exc:  # noqa: BLE001 (reported by the fixture)
                self.errors.append(exc)
            self.sent += 1


class Sampler(threading.Thread):
    def __init__(self, scenario: Scenario) -> None:
        super().__init__(name="sampler", daemon=True)
        self.scenario = scenario
        self.stop = threading.Event()

    def run(self) -> None:
        start = time.monotonic()
        while not self.stop.is_set():
            try:
                result = metrics_sample(root=self.scenario.lake)
                self.scenario.sample_errors += list(result.errors.values())
                self.scenario.rounds += 1
            except Exception as exc:  # noqa: BLE001
                self.scenario.sample_errors.append(exc)
            self.stop.wait(SAMPLE_S - (time.monotonic() - start) % SAMPLE_S)


class Throttled:
    """A listener consuming at most CONSUME_B msgs/s; remembers the newest store time it saw."""

    def __init__(self) -> None:
        self.newest_ms = 0

    def __call__(self, msgs) -> ConsumeConcurrentlyStatus:
        for m in msgs:
            time.sleep(1 / CONSUME_B)
            self.newest_ms = max(self.newest_ms, m.store_timestamp)
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS


def _consumer(namesrv: str, group: str, topic: str, listener) -> PushConsumer:
    c = PushConsumer(
        group,
        namesrv,
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        client_config=FAST,
        config=ConsumerConfig(consume_thread_min=1, consume_thread_max=1),
    )
    c.subscribe(topic, "*")
    c.register_listener(listener)
    return c.start()


def _wait(predicate, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _sleep_until(when: datetime) -> None:
    time.sleep(max(0.0, (when - utcnow()).total_seconds()))


def _next_minute(after: datetime) -> datetime:
    return after.replace(second=0, microsecond=0) + timedelta(minutes=1)


@pytest.fixture(scope="module")
def scenario(session_cluster, tmp_path_factory):
    from django.conf import settings
    from django.test import override_settings

    from brokers.gateway.client import reset_admin_client

    tag = f"{int(time.time())}"
    s = Scenario(
        lake=tmp_path_factory.mktemp("e2e-lake"), topic_a=f"E2E_A_{tag}", topic_b=f"E2E_B_{tag}", group=f"E2E_G_{tag}"
    )
    namesrv = session_cluster.namesrv_addr
    with override_settings(MQ={**settings.MQ, "NAMESRV_ADDR": namesrv, "ADMIN_TIMEOUT_S": 2.0}):
        reset_admin_client()
        with BlockingMQAdminClient(namesrv) as admin:
            create_topic(admin, session_cluster, s.topic_a, queues=4)
            create_topic(admin, session_cluster, s.topic_b, queues=1)
        sampler = Sampler(s)
        listener = Throttled()
        with Producer("e2e_producer_a", namesrv) as producer_a, Producer("e2e_producer_b", namesrv) as producer_b:
            consumer = _consumer(namesrv, s.group, s.topic_b, listener)
            paced = [Paced(producer_a, s.topic_a, RATE_A), Paced(producer_b, s.topic_b, RATE_B)]
            try:
                _wait(
                    lambda: any(mq.topic == s.topic_b for mq in consumer.assigned_queues()), 30, "the consumer's queues"
                )
                sampler.start()
                s.produce_from = utcnow()
                for p in paced:
                    p.start()
                # stop so that a calendar minute ends inside the stop: a window shows its last sample, and a
                # stop-and-drain of ~50 s can otherwise lie inside one minute and no window would show it
                _sleep_until(
                    _next_minute(s.produce_from + timedelta(seconds=CONSUMING_S + STOP_BEFORE_MINUTE_S))
                    - timedelta(seconds=STOP_BEFORE_MINUTE_S)
                )
                consumer.shutdown()  # commits its offsets; then nothing consumes topic B
                s.stopped_at = utcnow()
                time.sleep(STOPPED_S)
                consumer = _consumer(namesrv, s.group, s.topic_b, listener)
                s.restarted_at = utcnow()
                _wait(lambda: listener.newest_ms / 1000 > time.time() - 1.5, 120, "the restarted consumer to catch up")
                s.drained_at = utcnow()
                # a whole minute of production with a sample margin on both sides, and the drain sampled
                # (the same margin as the whole-minute filter of the throughput test: 2 samples)
                minute = _next_minute(s.produce_from + timedelta(seconds=2 * SAMPLE_S))
                _sleep_until(
                    max(s.drained_at + timedelta(seconds=4 * SAMPLE_S), minute + timedelta(seconds=60 + 2 * SAMPLE_S))
                )
            finally:
                for p in paced:
                    p.stop.set()
                for p in paced:
                    p.join(10)
                s.produce_until = utcnow()
                time.sleep(SAMPLE_S)
                sampler.stop.set()
                sampler.join(10)
                consumer.shutdown()
        reset_admin_client()
    assert not any(p.errors for p in paced), [p.errors for p in paced]
    # a round a busy machine misses only widens one interval; the rates stay exact
    expected_rounds = (s.produce_until - s.produce_from).total_seconds() / SAMPLE_S
    assert s.rounds >= 0.8 * expected_rounds and len(s.sample_errors) <= 0.1 * s.rounds, s.sample_errors
    yield s


@pytest.fixture
def analytics_settings(settings, scenario, session_cluster, mq_settings):
    mq_settings(session_cluster.namesrv_addr)
    settings.GANTRY_ANALYTICS = {
        **settings.GANTRY_ANALYTICS,
        "LAKE_DIR": str(scenario.lake),
        "SAMPLE_INTERVAL_S": SAMPLE_S,
        "TREND_LOOKBACK_S": 8,
    }
    return settings


def _refresh(spark, as_of: datetime):
    run = dashboard_refresh(trigger="api", requested_by="test", spark=spark, as_of=as_of)
    assert run.status == "succeeded", run.error
    return run


def _parse(t: str) -> datetime:
    return datetime.fromisoformat(t.replace("Z", "+00:00"))


def test_throughput_on_the_dashboard_is_within_5_percent_of_the_produced_rate(
    scenario, analytics_settings, spark, api_client_as
):
    _refresh(spark, scenario.produce_until)
    viewer = api_client_as("viewer")
    for topic, rate in ((scenario.topic_a, RATE_A), (scenario.topic_b, RATE_B)):
        body = viewer.get("/api/v1/dashboards/throughput", {"range": "hour", "by": "topic", "topic": topic}).json()
        [series] = body["series"]
        # whole minutes inside the production, with the interval before each minute's first sample inside it too
        full = [
            p
            for p in series["points"]
            if _parse(p["t"]) >= scenario.produce_from + timedelta(seconds=2 * SAMPLE_S)
            and _parse(p["t"]) + timedelta(seconds=60) <= scenario.produce_until
        ]
        assert full, (scenario, series["points"])
        for point in full:
            assert point["msgs_per_s"] == pytest.approx(rate, rel=0.05), (topic, point)
            assert point["bytes_per_s"] > 64 * rate  # whole records: body and headers
    assert body["state"]["run"]["status"] == "succeeded" and body["state"]["stale_since"] is None


def test_a_stopped_consumer_shows_its_backlog_growing_then_draining_then_drained(
    scenario, analytics_settings, spark, api_client_as
):
    viewer = api_client_as("viewer")

    def backlog_json():
        body = viewer.get(
            "/api/v1/dashboards/backlog",
            {"range": "hour", "by": "group", "group": scenario.group, "topic": scenario.topic_b},
        ).json()
        [trend] = [t for t in body["trends"] if t["topic"] == scenario.topic_b]
        return body, trend

    _refresh(spark, scenario.stopped_at + timedelta(seconds=20))
    body, stopped = backlog_json()
    assert stopped["trend"] == "growing", stopped
    assert stopped["slope_per_s"] == pytest.approx(RATE_B, rel=0.25) and stopped["backlog"] >= 0.6 * RATE_B * 20
    assert stopped["consume_rate"] == 0 and stopped["time_to_drain_s"] is None
    assert [s["key"] for s in body["series"]] == [
        {"group": scenario.group, "topic": scenario.topic_b, "broker": None, "queue_id": None}
    ]

    _refresh(spark, scenario.restarted_at + timedelta(seconds=12))
    body, draining = backlog_json()
    assert draining["trend"] == "draining", draining
    assert draining["consume_rate"] > draining["produce_rate"] and draining["time_to_drain_s"] > 0
    assert 0 < draining["backlog"] < RATE_B * (STOPPED_S + 12)

    _refresh(spark, scenario.produce_until)
    body, drained = backlog_json()
    assert drained["backlog"] <= RATE_B * 2 and drained["trend"] != "growing", drained
    points = {_parse(p["t"]): p["backlog"] for p in body["series"][0]["points"]}
    assert points[max(points)] <= RATE_B * 2
    # the minute that ended inside the stop shows the backlog of its last sample, ~15 s of topic B's rate
    stopped_minute = _next_minute(scenario.stopped_at) - timedelta(minutes=1)
    assert points[stopped_minute] >= 0.6 * RATE_B * (STOP_BEFORE_MINUTE_S - SAMPLE_S), (scenario.stopped_at, points)
