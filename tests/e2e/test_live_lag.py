"""Lag refreshes in place: the topic page's consumer groups table updates itself
when messages arrive, without a reload; a hidden tab asks for nothing until it is shown again."""

from __future__ import annotations

import uuid

import pytest

from brokers.engine.client.simple import PullClient
from brokers.engine.common.message_queue import MessageQueue
from tests.brokers.engine.client._cluster import create_topic
from tests.consumers._groups import send
from tests.e2e.conftest import log_in
from tests.fixtures.console import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_topic_pages_lag_updates_in_place_and_pauses_while_hidden(
    page, live_server, make_user, session_cluster, mq_settings, console_admin, screenshot
) -> None:
    mq_settings(session_cluster.namesrv_addr)
    make_user("viewer", username="watcher", password=PASSWORD)
    topic, group = f"E2eLive_{uuid.uuid4().hex[:6]}", f"E2eLiveGroup_{uuid.uuid4().hex[:6]}"
    create_topic(console_admin, session_cluster, topic, queues=1)
    send(session_cluster, topic, 2, mq=MessageQueue(topic, "broker-a", 0))
    with PullClient(session_cluster.namesrv_addr, group, heartbeat_interval_s=None) as consumer:
        consumer.update_offset(MessageQueue(topic, "broker-a", 0), 1)
    log_in(page, live_server.url, "watcher", PASSWORD)
    page.goto(f"{live_server.url}/topics/{topic}/")
    lag = page.locator(f"tr[data-group={group}] [data-testid=lag]")
    assert lag.inner_text() == "1"
    polls = []
    page.on("request", lambda r: polls.append(r.url) if "part=consumers" in r.url else None)
    page.evaluate("() => { Object.defineProperty(document, 'hidden', {configurable: true, get: () => true}); }")
    page.wait_for_timeout(11_000)  # one 10 s tick while "hidden": cancelled before it is sent
    assert polls == []
    send(session_cluster, topic, 3, mq=MessageQueue(topic, "broker-a", 0))
    page.evaluate(
        "() => { Object.defineProperty(document, 'hidden', {configurable: true, get: () => false});"
        " document.dispatchEvent(new Event('visibilitychange')); }"
    )
    page.wait_for_function(
        f"() => document.querySelector('tr[data-group={group}] [data-testid=lag]').innerText === '4'", timeout=5_000
    )
    assert len(polls) == 1  # caught up at once when shown, without waiting for the next tick
    screenshot("lag-updated")
