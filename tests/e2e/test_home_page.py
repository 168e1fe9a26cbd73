"""An operator logs in and sees the live brokers on the overview page."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_login_then_overview_lists_brokers(
    page, live_server, django_user_model, session_cluster, mq_settings, screenshot
) -> None:
    mq_settings(session_cluster.namesrv_addr)
    django_user_model.objects.create_user(username="operator", password="s3cret-pass-word")

    page.goto(f"{live_server.url}/")
    assert "/login/" in page.url
    page.fill("input[name=username]", "operator")
    page.fill("input[name=password]", "wrong")
    page.click("button[type=submit]")
    assert page.locator("[role=alert]").inner_text().startswith("Your username and password did not match")

    page.fill("input[name=username]", "operator")
    page.fill("input[name=password]", "s3cret-pass-word")
    page.click("button[type=submit]")
    table = page.locator("[data-testid=brokers]")
    table.wait_for()
    text = table.inner_text()
    assert "broker-a" in text and "broker-b" in text
    assert session_cluster.broker_addr("broker-a") in text
    assert page.locator("[data-testid=namesrvs]").inner_text().count("live") == 1
    screenshot("overview")
