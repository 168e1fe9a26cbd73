"""Helpers of the analytics tests: sample rounds written into a real lake directory."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from analytics.lake import GROUP_SAMPLES, QUEUE_SAMPLES, write_samples

DAY = datetime(2026, 11, 22, tzinfo=timezone.utc)


def at(clock: str) -> datetime:
    """``HH:MM[:SS]`` on DAY, UTC."""
    parts = [int(p) for p in clock.split(":")] + [0]
    return DAY + timedelta(hours=parts[0], minutes=parts[1], seconds=parts[2])


def ms(instant: datetime) -> int:
    return int(instant.timestamp() * 1000)


def sample_round(root, when: datetime, broker: str, queues=(), offsets=()) -> None:
    """One broker's answer at ``when``: ``queues`` as (topic, queue_id, max_offset, put_bytes),
    ``offsets`` as (group, topic, queue_id, committed_offset, max_offset)."""
    write_samples(
        root,
        QUEUE_SAMPLES,
        ts_ms=ms(when),
        broker=broker,
        columns={
            "broker": [broker] * len(queues),
            "topic": [q[0] for q in queues],
            "queue_id": [q[1] for q in queues],
            "min_offset": [0] * len(queues),
            "max_offset": [q[2] for q in queues],
            "put_bytes": [q[3] for q in queues],
        },
    )
    write_samples(
        root,
        GROUP_SAMPLES,
        ts_ms=ms(when),
        broker=broker,
        columns={
            "broker": [broker] * len(offsets),
            "group": [o[0] for o in offsets],
            "topic": [o[1] for o in offsets],
            "queue_id": [o[2] for o in offsets],
            "committed_offset": [o[3] for o in offsets],
            "max_offset": [o[4] for o in offsets],
        },
    )


def steady_workload(root, start: datetime, end: datetime, *, every_s: int = 30, origin: datetime | None = None) -> int:
    """Samples of broker-a every ``every_s`` from ``start`` to ``end`` (inclusive): topic ``orders``
    with queues 0 and 1 at 3 msgs/s each (100 bytes a message), group ``billing`` consuming each
    at 2 msgs/s (its backlog grows 1 msg/s per queue). Counters count from ``origin`` (default
    ``start``). The number of rounds written."""
    origin = origin or start
    rounds = 0
    when = start
    while when <= end:
        t = (when - origin).total_seconds()
        produced, consumed = int(3 * t), int(2 * t)
        sample_round(
            root,
            when,
            "broker-a",
            queues=[("orders", q, produced, produced * 100) for q in (0, 1)],
            offsets=[("billing", "orders", q, consumed, produced) for q in (0, 1)],
        )
        rounds += 1
        when += timedelta(seconds=every_s)
    return rounds
