"""An operator creates a subscription group on a cluster, edits it to consumeEnable=false, sees the group list
show it disabled, and deletes it after the confirmation page. Screenshots go to the test artifacts directory."""

from __future__ import annotations

import uuid

import pytest

from tests.e2e.conftest import log_in
from tests.fixtures.console import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def settings_of(page, group: str, setting: str) -> dict[str, str]:
    """Broker -> the setting's cell on the subscription group list."""
    rows = page.locator(f"[data-testid=subscription-groups] tr[data-group='{group}']")
    return {
        row.get_attribute("data-broker"): row.locator(f"td[data-setting={setting}]").inner_text().strip()
        for row in rows.all()
    }


def test_create_disable_and_delete_a_subscription_group(
    page, live_server, make_user, session_cluster, mq_settings, screenshot
) -> None:
    mq_settings(session_cluster.namesrv_addr)
    make_user("operator", username="ops", password=PASSWORD)
    log_in(page, live_server.url, "ops", PASSWORD)
    group = f"E2eSubGroup_{uuid.uuid4().hex[:6]}"

    page.click("nav >> text=Groups")
    page.click("[data-testid=subscription-groups-link]")
    page.click("[data-testid=new-subscription-group]")
    page.fill("input[name=name]", group)
    page.select_option("select[name=where]", f"cluster:{session_cluster.cluster}")
    page.fill("input[name=retry_max_times]", "99999")  # out of range: refused under the field, nothing created
    page.click("[data-testid=save]")
    assert "10000" in page.locator("[data-field=retry_max_times]").inner_text()
    page.fill("input[name=retry_max_times]", "5")
    page.click("[data-testid=save]")
    page.wait_for_url(f"{live_server.url}/subscription-groups/")
    assert settings_of(page, group, "retry_max_times") == {"broker-a": "5", "broker-b": "5"}
    assert settings_of(page, group, "consume_enable") == {"broker-a": "true", "broker-b": "true"}
    screenshot("created")

    page.locator(f"tr[data-group='{group}'] [data-testid=edit]").click()
    assert page.locator("input[name=retry_max_times]").input_value() == "5"
    assert "Members may pull messages" in page.locator("[data-testid=subscription-group-form]").inner_text()  # the help
    page.uncheck("input[name=consume_enable]")
    page.click("[data-testid=save]")
    page.wait_for_url(f"{live_server.url}/subscription-groups/")
    assert settings_of(page, group, "consume_enable") == {"broker-a": "false", "broker-b": "false"}
    assert settings_of(page, group, "retry_max_times") == {"broker-a": "5", "broker-b": "5"}

    page.goto(f"{live_server.url}/groups/?q={group}")
    row = page.locator(f"[data-testid=groups] tr[data-group='{group}']")
    assert row.locator("[data-testid=consume-disabled]").inner_text() == "consume disabled"
    screenshot("group-list-disabled")

    page.goto(f"{live_server.url}/subscription-groups/")
    page.locator(f"tr[data-group='{group}'] [data-testid=delete]").click()
    assert group in page.locator("[data-testid=confirm-delete]").inner_text()
    screenshot("confirm-delete")
    page.click("[data-testid=confirm]")
    page.wait_for_url(f"{live_server.url}/subscription-groups/")
    assert f"Subscription group {group} deleted from broker-a, broker-b." in page.content()
    assert page.locator(f"tr[data-group='{group}']").count() == 0
