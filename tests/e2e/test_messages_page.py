"""A viewer finds messages by key in the browser and opens one: properties and body."""
from __future__ import annotations

import uuid

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from tests.brokers.engine.client._cluster import create_topic
from tests.fixtures.console import PASSWORD
from tests.consumers._groups import send
from tests.e2e.conftest import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_query_a_message_by_key(page, live_server, make_user, session_cluster, mq_settings, screenshot) -> None:
    mq_settings(session_cluster.namesrv_addr)
    topic = f"E2eMsg_{uuid.uuid4().hex[:6]}"
    with BlockingMQAdminClient(session_cluster.namesrv_addr) as admin:
        create_topic(admin, session_cluster, topic, queues=2)
    send(session_cluster, topic, 3)
    [sent] = send(session_cluster, topic, 1, keys="order-4711", body="Bestellung 4711 \N{EM DASH} bezahlt".encode())
    make_user("viewer", username="reader", password=PASSWORD)
    log_in(page, live_server.url, "reader", PASSWORD)

    page.click("nav >> text=Messages")
    page.check("input[name=mode][value=key]")
    page.fill("input[name=topic]", topic)
    page.fill("input[name=key]", "order-4711")
    page.click("[data-testid=find]")
    page.locator("[data-testid=messages] tbody tr").first.wait_for()
    rows = page.locator("[data-testid=messages] tbody tr").all_inner_texts()
    assert len(rows) == 1 and sent.offset_msg_id in rows[0] and "order-4711" in rows[0]
    assert "mode=key" in page.url  # the search is in the address
    screenshot("results")

    page.click(f"text={sent.offset_msg_id}")
    page.locator("[data-testid=message]").wait_for()
    assert page.locator("[data-testid=body]").inner_text() == "Bestellung 4711 \N{EM DASH} bezahlt"
    properties = page.locator("[data-testid=properties]").inner_text()
    assert "KEYS" in properties and "order-4711" in properties and sent.msg_id in properties
    screenshot("message")
