"""An operator shrinks a topic from 4 to 2 queues per broker in the browser: lowers the write
queues, watches the tail queues drain (the status refreshes by itself), then lowers the read queues."""

from __future__ import annotations

import uuid

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from tests.brokers.engine.client._cluster import create_topic
from tests.consumers._groups import consume, send
from tests.e2e.conftest import log_in
from tests.fixtures.console import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_shrink_a_topic_step_by_step(page, live_server, make_user, console_cluster, members, screenshot) -> None:
    session_cluster = console_cluster
    topic = f"E2eShrink_{uuid.uuid4().hex[:6]}"
    with BlockingMQAdminClient(session_cluster.namesrv_addr) as admin:
        create_topic(admin, session_cluster, topic, queues=4)
        send(session_cluster, topic, 16)
        member = members(f"E2eShrinkGroup_{topic[-6:]}", topic, "shrinker")
        queues = member.fetch_subscribe_message_queues(topic)
        consume(member, [q for q in queues if q.queue_id < 2])
        make_user("operator", username="ops", password=PASSWORD)
        log_in(page, live_server.url, "ops", PASSWORD)

        page.goto(f"{live_server.url}/topics/{topic}/")
        page.click("[data-testid=shrink-topic]")
        page.fill("input[name=target_queue_nums]", "2")
        page.click("[data-testid=plan-form] button")
        assert page.locator("[data-testid=shrink-step]").inner_text() == "step 1: lower the write queues"
        assert page.locator("[data-testid=tail] tbody tr").count() == 4
        screenshot("plan")

        page.click("[data-testid=lower-write]")
        page.locator("[data-testid=blockers]").wait_for()
        assert "step 2: waiting for consumers" in page.locator("[data-testid=shrink-step]").inner_text()
        assert page.locator("[data-testid=lower-read]").is_disabled()
        assert page.locator("[data-testid=messages-left]").inner_text() == "8"
        screenshot("waiting")

        consume(member, [q for q in queues if q.queue_id >= 2])
        page.wait_for_function(
            "() => document.querySelector('[data-testid=shrink-step]').innerText.includes('ready')", timeout=15000
        )
        assert page.locator("[data-testid=messages-left]").inner_text() == "0"
        page.on("dialog", lambda d: d.accept())
        page.click("[data-testid=lower-read]")
        page.wait_for_function("() => document.querySelector('[data-testid=shrink-step]').innerText === 'done'")
        cells = page.locator("[data-testid=shrink-brokers] tbody tr").all_inner_texts()
        assert [c.split()[:3] for c in cells] == [["broker-a", "2", "2"], ["broker-b", "2", "2"]]
        screenshot("done")
        tables = {
            b: admin.get_all_topic_config(session_cluster.broker_addr(b))[topic] for b in session_cluster.broker_names
        }
        assert {(t.read_queue_nums, t.write_queue_nums) for t in tables.values()} == {(2, 2)}


def test_a_shrink_that_takes_no_queue_away_is_explained(
    page, live_server, make_user, console_cluster, screenshot
) -> None:
    """A 4-queue topic once read "Shrink to 8 queues per broker: done"; now the page explains why."""
    topic = f"E2eNoShrink_{uuid.uuid4().hex[:6]}"
    with BlockingMQAdminClient(console_cluster.namesrv_addr) as admin:
        create_topic(admin, console_cluster, topic, queues=4)
    make_user("operator", username="ops", password=PASSWORD)
    log_in(page, live_server.url, "ops", PASSWORD)
    page.goto(f"{live_server.url}/topics/{topic}/shrink")
    page.fill("input[name=target_queue_nums]", "8")
    page.click("[data-testid=plan-form] button")
    error = page.locator("[data-field=target_queue_nums]")
    assert "at most 4 queues per broker" in error.inner_text() and "below 4" in error.inner_text()
    assert (
        page.locator("[data-testid=shrink-step]").inner_text()
        == "Give the number of queues per broker the topic should keep."
    )
    screenshot("refused")
