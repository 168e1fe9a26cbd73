"""An operator opens a group's dead letters from its page, ticks two, resends them after the
confirmation, and reads what became of each."""

from __future__ import annotations

import uuid

import pytest

from brokers.engine.common.message import Message
from tests.brokers.engine.client._cluster import create_topic
from tests.e2e.conftest import log_in
from tests.fixtures.console import PASSWORD
from tests.topics._dead_letters import make_dead_letters, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_browse_select_and_resend_dead_letters(
    page, live_server, make_user, session_cluster, mq_settings, console_admin, screenshot
) -> None:
    from topics.dead_letters.selectors import dead_letter_page

    mq_settings(session_cluster.namesrv_addr)
    topic, group = f"E2eDlq_{uuid.uuid4().hex[:6]}", f"E2eDlqGroup_{uuid.uuid4().hex[:6]}"
    create_topic(console_admin, session_cluster, topic, queues=1)
    make_dead_letters(
        session_cluster,
        group,
        topic,
        [Message(topic, f"payment {i} declined".encode(), keys=f"pay-{i}") for i in range(3)],
        raise_for="declined",
    )
    wait_until(lambda: dead_letter_page(group=group).total >= 3, what="three dead letters")
    make_user("operator", username="oncall", password=PASSWORD)
    log_in(page, live_server.url, "oncall", PASSWORD)

    page.goto(f"{live_server.url}/groups/{group}/")
    page.click("[data-testid=dlq-link]")
    rows = page.locator("[data-testid=dead-letters] tbody tr")
    rows.first.wait_for()
    assert rows.count() == 3
    texts = rows.all_inner_texts()
    assert all(topic in t for t in texts) and "payment 2 declined" in "".join(texts)
    errors = page.locator("[data-testid=last-error]").all_inner_texts()  # the listener's exception, kept by the broker
    assert sorted(errors) == [f"RuntimeError: payment {i} declined (card issuer said no)" for i in range(3)]
    assert "GANTRY_LAST_ERROR" in page.locator("[data-testid=dlq-explained]").inner_text()
    screenshot("dead-letters")

    picked = [rows.nth(i).locator("input[name=msg_ids]").get_attribute("value") for i in (0, 2)]
    rows.nth(0).locator("input[name=msg_ids]").check()
    rows.nth(2).locator("input[name=msg_ids]").check()
    asked = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    page.click("[data-testid=resend]")
    result = page.locator("[data-testid=resend-result]")
    result.wait_for()
    assert asked and f"%RETRY%{group}" in asked[0]
    assert "Resent 2 of 2" in result.inner_text() and all(i in result.inner_text() for i in picked)
    screenshot("resent")
