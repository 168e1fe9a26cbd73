"""Tiny inline lake frames for the job tests: samples written as short tuples."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from analytics.jobs import GROUP_SAMPLES_SCHEMA, QUEUE_SAMPLES_SCHEMA

DAY = datetime(2026, 11, 22, tzinfo=timezone.utc)


def at(clock: str) -> datetime:
    """Return ``HH:MM:SS`` (or ``HH:MM``) on DAY, UTC."""
    parts = [int(p) for p in clock.split(":")] + [0]
    return DAY + timedelta(hours=parts[0], minutes=parts[1], seconds=parts[2])


def queue_samples(spark, rows):
    """Rows ``(clock, broker, topic, queue_id, max_offset, put_bytes)`` as a queue_samples frame."""
    full = [
        (at(clock), broker, topic, queue_id, 0, max_offset, put_bytes, at(clock).strftime("%Y-%m-%d"), at(clock).hour)
        for clock, broker, topic, queue_id, max_offset, put_bytes in rows
    ]
    return spark.createDataFrame(full, QUEUE_SAMPLES_SCHEMA)


def group_samples(spark, rows):
    """Rows ``(clock, broker, group, topic, queue_id, committed, max_offset)`` as group_samples."""
    full = [
        (
            at(clock),
            broker,
            group,
            topic,
            queue_id,
            committed,
            max_offset,
            at(clock).strftime("%Y-%m-%d"),
            at(clock).hour,
        )
        for clock, broker, group, topic, queue_id, committed, max_offset in rows
    ]
    return spark.createDataFrame(full, GROUP_SAMPLES_SCHEMA)
