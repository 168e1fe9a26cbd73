"""A viewer opens a message sent and consumed by Gantry clients with tracing on, follows "Message trace",
and reads who sent it, where it was stored, and which consumer group got it with what result."""

from __future__ import annotations

import uuid

import pytest

from tests.brokers.engine.client._cluster import create_topic
from tests.e2e.conftest import log_in
from tests.fixtures.console import PASSWORD
from tests.topics._traces import traced_round_trip

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_message_detail_links_to_its_trace(
    page, live_server, make_user, session_cluster, mq_settings, console_admin, screenshot
) -> None:
    mq_settings(session_cluster.namesrv_addr)
    topic, group = f"E2eTrace_{uuid.uuid4().hex[:6]}", f"E2eTraceGroup_{uuid.uuid4().hex[:6]}"
    create_topic(console_admin, session_cluster, topic, queues=1)
    msg_id = traced_round_trip(session_cluster, topic, group)
    make_user("viewer", username="watcher", password=PASSWORD)
    log_in(page, live_server.url, "watcher", PASSWORD)

    page.goto(f"{live_server.url}/messages/{msg_id}/?topic={topic}")
    page.click("[data-testid=trace-link]")
    page.locator("[data-testid=trace]").wait_for()
    assert page.locator("[data-testid=trace-msg-id]").inner_text() == msg_id
    sent = page.locator("[data-testid=trace-pub] tbody").inner_text()
    assert f"{group}-producer" in sent and topic in sent and "success" in sent
    consumed = page.locator("[data-testid=trace-sub] tbody").inner_text()
    assert group in consumed and page.locator("[data-testid=trace-status]").inner_text() == "success"
    screenshot("message-trace")

    page.fill("input[name=msg_id]", "no-such-message-key")
    page.click("[data-testid=trace-find]")
    page.locator("[data-testid=trace-empty]").wait_for()
