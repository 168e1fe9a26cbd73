"""The queue-count advisor in a browser: a topic with more write than read queues on each broker shows
the finding and its suggestion on its page, with a link that opens the edit form; raising the read queues there
makes the finding go away. A balanced topic says there is nothing to change; a group whose lag sits on one queue
says so on its page."""

from __future__ import annotations

import uuid

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.client.simple import PullClient
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.topic_config import TopicConfig
from tests.brokers.engine.client._cluster import create_topic, wait_for_route
from tests.consumers._groups import send
from tests.e2e.conftest import log_in
from tests.fixtures.console import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_advisor_points_to_the_edit_that_fixes_a_topic(
    page, live_server, make_user, session_cluster, mq_settings, screenshot
) -> None:
    mq_settings(session_cluster.namesrv_addr)
    topic, balanced = f"E2eAdvice_{uuid.uuid4().hex[:6]}", f"E2eBalanced_{uuid.uuid4().hex[:6]}"
    with BlockingMQAdminClient(session_cluster.namesrv_addr) as admin:
        admin.create_or_update_topic_in_cluster(session_cluster.cluster, TopicConfig(topic, 2, 4))
        wait_for_route(admin, topic, len(session_cluster.broker_names))
        create_topic(admin, session_cluster, balanced, queues=2)
    make_user("operator", username="ops", password=PASSWORD)
    log_in(page, live_server.url, "ops", PASSWORD)

    page.goto(f"{live_server.url}/topics/{topic}/")
    findings = page.locator("[data-testid=advice-write-not-readable]")
    findings.first.wait_for()
    texts = findings.all_inner_texts()
    assert len(texts) == 2 and any("broker-a has 4 write queues but 2 read queues" in t for t in texts)
    assert all("Suggested: raise" in t and "read queues to 4" in t for t in texts)
    screenshot("finding")
    findings.first.locator("a", has_text="Edit the topic").click()
    page.wait_for_url(f"**/topics/{topic}/edit")
    for broker in session_cluster.broker_names:
        page.fill(f"input[name='brokers.{broker}.read_queue_nums']", "4")
    page.click("[data-testid=save]")
    page.wait_for_url(f"**/topics/{topic}/")
    page.locator("[data-testid=advice-none]").wait_for()
    assert page.locator("[data-testid=advisor] li").count() == 0
    assert "{#" not in page.content() and "queue-count advisor" not in page.locator("body").inner_text()
    screenshot("fixed")

    page.goto(f"{live_server.url}/topics/{balanced}/")
    assert "Nothing to change" in page.locator("[data-testid=advice-none]").inner_text()
    with BlockingMQAdminClient(session_cluster.namesrv_addr) as admin:  # changed elsewhere while the page is open
        admin.create_or_update_topic_in_cluster(session_cluster.cluster, TopicConfig(balanced, 2, 3))
    page.evaluate(
        "document.querySelectorAll('#topic-advice').forEach((e) => htmx.trigger(e, 'live:visible'))"
    )  # as when the tab shows again
    page.locator("[data-testid=advice-write-not-readable]").first.wait_for()  # in place, no reload
    with BlockingMQAdminClient(session_cluster.namesrv_addr) as admin:
        admin.create_or_update_topic_in_cluster(session_cluster.cluster, TopicConfig(balanced, 2, 2))

    group = f"GE2eAdvice_{uuid.uuid4().hex[:6]}"
    send(session_cluster, balanced, 1000, mq=MessageQueue(balanced, "broker-a", 0))
    with PullClient(session_cluster.namesrv_addr, group, heartbeat_interval_s=None) as client:
        for broker in session_cluster.broker_names:
            for q in range(2):
                client.update_offset(MessageQueue(balanced, broker, q), 0)
    page.goto(f"{live_server.url}/groups/{group}/")
    lag = page.locator("[data-testid=advice-lag-on-one-queue]")
    lag.wait_for()
    assert "100% of the group's lag (1,000 of 1,000)" in lag.inner_text()
    screenshot("group")
