"""The topic page's queue offsets are read from the brokers at every request: the page refreshes
them every 5 s with htmx (the fragment alone), so a queue's min offset is seen moving as the
broker's retention deletes old files, and its max offset as messages arrive."""

from __future__ import annotations

import re

import pytest

from brokers.engine.common.message_queue import MessageQueue
from tests.consumers._groups import send

pytestmark = pytest.mark.django_db


def offsets(html: str) -> dict[str, tuple[int, int]]:
    """broker:queue -> (min offset, max offset) from the queue table."""
    rows = re.findall(
        r'<tr data-queue="([^"]+)">.*?data-testid="min-offset">(\d+)</td>.*?data-testid="max-offset">(\d+)</td>',
        html,
        re.S,
    )
    return {q: (int(lo), int(hi)) for q, lo, hi in rows}


def test_the_queue_offsets_refresh_live(viewer_client, console_cluster, topic) -> None:
    page = viewer_client.get(f"/topics/{topic}/").content.decode()
    assert f'id="queue-status" hx-get="/topics/{topic}/" hx-trigger="every 5s, live:visible"' in page
    assert offsets(page) == {f"{b}:{q}": (0, 0) for b in ("broker-a", "broker-b") for q in range(4)}

    send(console_cluster, topic, 3, mq=MessageQueue(topic, "broker-b", 2))
    fragment = viewer_client.get(f"/topics/{topic}/", HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in fragment and 'data-testid="route"' not in fragment  # the queue table alone
    assert offsets(fragment)["broker-b:2"] == (0, 3) and offsets(fragment)["broker-a:2"] == (0, 0)
    assert "(3 messages)" in fragment


def test_the_api_gives_each_queues_min_offset(viewer, console_cluster, topic) -> None:
    send(console_cluster, topic, 2, mq=MessageQueue(topic, "broker-a", 1))
    queues = viewer.get(f"/api/v1/topics/{topic}/status").json()["queues"]
    assert {(q["broker_name"], q["queue_id"]): (q["min_offset"], q["max_offset"]) for q in queues}[("broker-a", 1)] == (
        0,
        2,
    )
