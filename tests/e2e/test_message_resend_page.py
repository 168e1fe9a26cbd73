"""An operator opens a message, sees each group's consume state, and resends the message to a push group's client in
the browser: the link, the confirm step, the browser's confirm dialog, the client's answer; in Chinese the states read
Chinese."""

from __future__ import annotations

import uuid

import pytest

from brokers.engine.client import ConsumeConcurrentlyStatus, PushConsumer
from brokers.engine.client.admin import BlockingMQAdminClient
from tests.brokers.engine.client._cluster import create_topic
from tests.consumers._groups import send
from tests.consumers._rebalance import QUIET
from tests.e2e.conftest import log_in
from tests.fixtures.console import PASSWORD
from tests.fixtures.waiting import wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_an_operator_resends_a_message_to_a_push_client(
    page, live_server, make_user, session_cluster, mq_settings, screenshot
) -> None:
    mq_settings(session_cluster.namesrv_addr)
    topic, group = f"E2eResend_{uuid.uuid4().hex[:6]}", f"E2eResendGroup_{uuid.uuid4().hex[:6]}"
    with BlockingMQAdminClient(session_cluster.namesrv_addr) as admin:
        create_topic(admin, session_cluster, topic, queues=1)
    got: list = []
    consumer = PushConsumer(
        group,
        session_cluster.namesrv_addr,
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        instance_name="e2e-resend",
        client_config=QUIET,
    )
    consumer.subscribe(topic, "*")
    consumer.register_listener(lambda msgs: (got.extend(msgs), ConsumeConcurrentlyStatus.CONSUME_SUCCESS)[1])
    consumer.start()
    try:
        [sent] = send(session_cluster, topic, 1, body=b"resend me")
        wait_until(lambda: got, what="the push consumer to consume the message")
        make_user("operator", username="oscar", password=PASSWORD)
        log_in(page, live_server.url, "oscar", PASSWORD)

        def state() -> str:
            page.goto(f"{live_server.url}/messages/{sent.offset_msg_id}/")
            return (
                page.locator(f"[data-testid=track-groups] tr[data-group='{group}']").get_attribute("data-state") or ""
            )

        wait_until(lambda: state() == "CONSUMED", what="the group's state CONSUMED (its offset persisted)")
        screenshot("message-track")
        page.click(f"tr[data-group='{group}'] [data-testid=resend-link]")
        page.locator("[data-testid=resend-form]").wait_for()
        asked: list[str] = []
        page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
        page.click("[data-testid=resend-button]")
        result = page.locator("[data-testid=resend-result]")
        result.wait_for()
        assert result.get_attribute("data-result") == "CR_SUCCESS" and asked and group in asked[0]
        assert len(got) == 2 and got[1].body == b"resend me"
        screenshot("resent")

        page.goto(f"{live_server.url}/")
        page.click("[data-testid=language-zh-hans]")
        page.locator("html[lang=zh-hans]").wait_for()
        page.goto(f"{live_server.url}/messages/{sent.offset_msg_id}/")
        track = page.locator("[data-testid=message-track]").inner_text()
        assert "消费状态" in track and "已消费" in track and "重新发送" in track
        screenshot("message-track-zh")
    finally:
        consumer.shutdown()
