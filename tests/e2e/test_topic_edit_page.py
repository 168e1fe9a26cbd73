"""An operator lowers broker-a's read queues from 6 to 2 on the edit form of a
topic whose queue 4 holds a message. The form refuses, names the count per broker, links to safe
shrink, and saves only once the operator types that count. Screenshots go to the test artifacts."""

from __future__ import annotations

import uuid

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.common.message_queue import MessageQueue
from tests.brokers.engine.client._cluster import create_topic
from tests.consumers._groups import send
from tests.e2e.conftest import log_in
from tests.fixtures.console import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def read_write(page) -> dict[str, tuple[str, str]]:
    """Broker -> (read queues, write queues) from the detail page's table."""
    out = {}
    for row in page.locator("[data-testid=per-broker] tbody tr").all():
        cells = [c.inner_text().strip() for c in row.locator("td").all()]
        out[cells[0]] = (cells[3], cells[4])
    return out


def test_lowering_read_queues_that_hold_messages_needs_the_count(
    page, live_server, make_user, session_cluster, mq_settings, screenshot
) -> None:
    mq_settings(session_cluster.namesrv_addr)
    topic = f"E2eEdit_{uuid.uuid4().hex[:6]}"
    with BlockingMQAdminClient(session_cluster.namesrv_addr) as admin:
        create_topic(admin, session_cluster, topic, queues=6)
    for broker, queue_id in (("broker-a", 0), ("broker-a", 4), ("broker-b", 1)):
        send(session_cluster, topic, 1, mq=MessageQueue(topic, broker, queue_id))
    make_user("operator", username="ops", password=PASSWORD)
    log_in(page, live_server.url, "ops", PASSWORD)

    page.goto(f"{live_server.url}/topics/{topic}/edit")
    assert "safe shrink" in page.locator("[data-testid=shrink-hint]").inner_text()
    page.fill("input[name='brokers.broker-a.read_queue_nums']", "2")
    page.click("[data-testid=save]")
    warning = page.locator("[data-testid=unreachable-warning]")
    warning.wait_for(timeout=5000)
    assert page.locator("[data-testid=unreachable-count]").inner_text() == "1"
    assert page.locator("[data-testid=unreachable-brokers] li").all_inner_texts() == [
        "broker-a: 1 message in queues 2-5 (read queues 6 → 2); with 6 write queues, producers would go on writing to these hidden queues"
    ]
    assert (
        page.locator("[data-testid=safe-shrink-link]").get_attribute("href")
        == f"/topics/{topic}/shrink?target_queue_nums=2"
    )
    screenshot("refused")

    page.goto(f"{live_server.url}/topics/{topic}/")
    assert read_write(page) == {"broker-a": ("6", "6"), "broker-b": ("6", "6")}  # nothing changed

    page.goto(f"{live_server.url}/topics/{topic}/edit")
    page.fill("input[name='brokers.broker-a.read_queue_nums']", "2")
    page.click("[data-testid=save]")
    page.fill("[data-testid=confirm-count]", "3")  # the wrong count is refused again
    page.click("[data-testid=confirm-save]")
    assert (
        page.locator("[data-testid=confirm-mismatch]").inner_text()
        == "You confirmed 3, but 1 message would become unreachable now."
    )
    page.fill("[data-testid=confirm-count]", "1")
    screenshot("confirming")
    page.click("[data-testid=confirm-save]")
    page.wait_for_url(f"{live_server.url}/topics/{topic}/")
    assert read_write(page) == {"broker-a": ("2", "6"), "broker-b": ("6", "6")}
    screenshot("saved")

    page.goto(f"{live_server.url}/topics/{topic}/edit")
    page.fill("input[name='brokers.broker-b.write_queue_nums']", "2")  # write queues only: nothing hidden, no question
    page.click("[data-testid=save]")
    page.wait_for_url(f"{live_server.url}/topics/{topic}/")
    assert read_write(page) == {"broker-a": ("2", "6"), "broker-b": ("6", "2")}
