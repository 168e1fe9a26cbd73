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


def test_a_test_send_then_the_shown_id_pasted_finds_the_message(
    page, live_server, make_user, session_cluster, mq_settings, screenshot
) -> None:
    """The id shown after a test send is the client's UNIQ_KEY; pasted into the
    message search (with its topic) it finds the message, as does the link beside it; the time-range
    list shows it first (newest first) with a body preview."""
    mq_settings(session_cluster.namesrv_addr)
    topic = f"E2eSend_{uuid.uuid4().hex[:6]}"
    with BlockingMQAdminClient(session_cluster.namesrv_addr) as admin:
        create_topic(admin, session_cluster, topic, queues=2)
    send(session_cluster, topic, 3)
    make_user("operator", username="sender", password=PASSWORD)
    log_in(page, live_server.url, "sender", PASSWORD)

    page.goto(f"{live_server.url}/topics/{topic}/")
    page.fill("[data-testid=send-form] textarea[name=body]", "Lieferung <7> unterwegs")
    page.click("[data-testid=send-form] button[type=submit]")
    uniq = page.locator("[data-testid=sent-uniq-key]").inner_text()
    offset_id = page.locator("[data-testid=sent-offset-id]").inner_text()
    assert len(uniq) == 32 and len(offset_id) == 32 and uniq != offset_id
    screenshot("sent")
    page.click("[data-testid=find-sent]")
    page.locator("[data-testid=message]").wait_for()
    assert page.locator("[data-testid=body]").inner_text() == "Lieferung <7> unterwegs"

    page.click("nav >> text=Messages")
    page.check("input[name=mode][value=id]")
    page.fill("input[name=topic]", topic)
    page.fill("input[name=msg_id]", uniq)
    page.click("[data-testid=find]")
    page.locator("[data-testid=message]").wait_for()
    assert page.locator("[data-testid=body]").inner_text() == "Lieferung <7> unterwegs"
    assert offset_id in page.content() and uniq in page.locator("[data-testid=properties]").inner_text()
    screenshot("found-by-uniq-key")

    page.check("input[name=mode][value=time]")
    page.fill("input[name=begin]", "2000-01-01T00:00:00Z")
    page.fill("input[name=end]", "2099-01-01T00:00:00Z")
    page.select_option("select[name=page_size]", "50")
    page.click("[data-testid=find]")
    page.locator("[data-testid=messages] tbody tr").first.wait_for()
    first = page.locator("[data-testid=messages] tbody tr").first.inner_text()
    assert offset_id in first and uniq in first and "Lieferung <7> unterwegs" in first
    assert "50 per page" in page.locator("[data-testid=message-count]").inner_text()
    screenshot("newest-first")
