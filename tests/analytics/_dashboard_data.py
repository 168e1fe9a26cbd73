"""Result rows for the dashboard page tests, written through the analytics models as a good
refresh would leave them: throughput per queue and topic, backlog per queue and group, trends,
top lists and the dashboard state (one succeeded run).

Two topics on two brokers (``orders``: 4 queues, ``payments``: 2), two groups (``billing``
consumes orders and is growing, ``audit`` consumes payments and is draining). Minute windows
cover the last hour, hour windows the last day; the figures are smooth curves, so a chart shows
shapes a person can check.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

TOPICS = {
    "orders": (("broker-a", 0), ("broker-a", 1), ("broker-b", 0), ("broker-b", 1)),
    "payments": (("broker-a", 0), ("broker-b", 0)),
}
GROUPS = {"billing": "orders", "audit": "payments"}


def _floor(instant: datetime, seconds: int) -> datetime:
    epoch = int(instant.timestamp())
    return datetime.fromtimestamp(epoch - epoch % seconds, tz=timezone.utc)


def _queue_rate(topic: str, broker: str, queue_id: int, i: int) -> float:
    base = 120.0 if topic == "orders" else 35.0
    return round(base * (1 + 0.1 * queue_id + (0.15 if broker == "broker-b" else 0)) * (1 + 0.35 * math.sin(i / 9)), 3)


def _queue_backlog(group: str, broker: str, queue_id: int, i: int, n: int) -> int:
    if group == "billing":  # growing towards now
        return int(400 + 60 * i + 80 * queue_id + (150 if broker == "broker-b" else 0))
    return max(0, int(3000 - 45 * i + 50 * queue_id))  # draining


def seed_dashboards(*, now: datetime | None = None, minutes: int = 60, hours: int = 24) -> dict:
    """Write the rows; the windows' bounds and the run, for assertions."""
    from analytics.models import BacklogPoint, BacklogTrend, DashboardState, Ranking, RefreshRun, ThroughputPoint

    now = now or datetime.now(timezone.utc)
    last_minute = _floor(now, 60) - timedelta(minutes=1)
    last_hour = _floor(now, 3600)
    throughput, backlog = [], []
    for resolution, step, count, last in (
        ("1m", timedelta(minutes=1), minutes, last_minute),
        ("1h", timedelta(hours=1), hours, last_hour),
    ):
        seconds = step.total_seconds()
        for i in range(count):
            window = last - step * (count - 1 - i)
            for topic, queues in TOPICS.items():
                topic_rate = 0.0
                for broker, queue_id in queues:
                    rate = _queue_rate(topic, broker, queue_id, i)
                    topic_rate += rate
                    throughput.append(
                        ThroughputPoint(
                            resolution=resolution,
                            level="queue",
                            window_start=window,
                            broker=broker,
                            topic=topic,
                            queue_id=queue_id,
                            messages=int(rate * seconds),
                            msgs_per_s=rate,
                            bytes_per_s=rate * 512,
                        )
                    )
                throughput.append(
                    ThroughputPoint(
                        resolution=resolution,
                        level="topic",
                        window_start=window,
                        topic=topic,
                        messages=int(topic_rate * seconds),
                        msgs_per_s=round(topic_rate, 3),
                        bytes_per_s=topic_rate * 512,
                    )
                )
            for broker in ("broker-a", "broker-b"):
                rate = sum(_queue_rate(t, b, q, i) for t, qs in TOPICS.items() for b, q in qs if b == broker)
                throughput.append(
                    ThroughputPoint(
                        resolution=resolution,
                        level="broker",
                        window_start=window,
                        broker=broker,
                        messages=int(rate * seconds),
                        msgs_per_s=round(rate, 3),
                        bytes_per_s=rate * 512,
                    )
                )
            for group, topic in GROUPS.items():
                total = 0
                for broker, queue_id in TOPICS[topic]:
                    value = _queue_backlog(group, broker, queue_id, i, count)
                    total += value
                    backlog.append(
                        BacklogPoint(
                            resolution=resolution,
                            level="queue",
                            window_start=window,
                            group=group,
                            topic=topic,
                            broker=broker,
                            queue_id=queue_id,
                            backlog=value,
                            consume_rate=_queue_rate(topic, broker, queue_id, i) * (0.9 if group == "billing" else 1.2),
                            produce_rate=_queue_rate(topic, broker, queue_id, i),
                        )
                    )
                backlog.append(
                    BacklogPoint(
                        resolution=resolution,
                        level="group",
                        window_start=window,
                        group=group,
                        topic=topic,
                        backlog=total,
                        consume_rate=100.0,
                        produce_rate=110.0 if group == "billing" else 80.0,
                    )
                )
    ThroughputPoint.objects.bulk_create(throughput)
    BacklogPoint.objects.bulk_create(backlog)
    BacklogTrend.objects.bulk_create(
        [
            BacklogTrend(
                group="billing",
                topic="orders",
                backlog=5200,
                slope_per_s=4.2,
                trend="growing",
                consume_rate=450.0,
                produce_rate=480.0,
                time_to_drain_s=None,
                as_of=now,
            ),
            BacklogTrend(
                group="audit",
                topic="payments",
                backlog=960,
                slope_per_s=-2.5,
                trend="draining",
                consume_rate=95.0,
                produce_rate=80.0,
                time_to_drain_s=64.0 * 60,
                as_of=now,
            ),
        ]
    )
    Ranking.objects.bulk_create(
        [
            Ranking(kind="topics", rank=1, name="orders", value=560.5, as_of=now),
            Ranking(kind="topics", rank=2, name="payments", value=81.2, as_of=now),
            Ranking(kind="groups", rank=1, name="billing", value=5200, as_of=now),
            Ranking(kind="groups", rank=2, name="audit", value=960, as_of=now),
        ]
    )
    run = RefreshRun.objects.create(
        trigger="nightly",
        requested_by="beat",
        status="succeeded",
        progress="done",
        created_at=now - timedelta(seconds=40),
        started_at=now - timedelta(seconds=38),
        finished_at=now - timedelta(seconds=5),
        window_to=now,
    )
    state = DashboardState.load()
    state.last_good_run = run
    state.watermark = now
    state.data_until = now - timedelta(seconds=12)
    state.save()
    return {"now": now, "last_minute": last_minute, "last_hour": last_hour, "run": run}
