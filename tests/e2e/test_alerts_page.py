"""Alert rules in a browser (alerts that reach people): an operator creates a lag rule on the
alerts page (a webhook to a private address is refused on its field first), the next health scan fires it
(the webhook server receives it), the history shows the event, and "Silence rule" silences it."""

from __future__ import annotations

import pytest

from health.scan import health_scan
from tests.consumers._groups import send
from tests.e2e.conftest import log_in
from tests.fixtures.console import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def open_rule_form(page, live_server, members, group, topic, username, *, name, kind, target, threshold, webhook_url):
    """Start a member of ``group`` on ``topic`` at offset 0, log in as operator ``username`` and fill the
    alerts page's rule form (not submitted); the form."""
    a = members(group, topic, f"alert-{username}")
    for mq in a.fetch_subscribe_message_queues(topic):
        a.update_offset(mq, 0)
    log_in(page, live_server.url, username, PASSWORD)
    page.click("nav >> text=Alerts")
    form = page.locator("[data-testid=alert-rule-form]")
    form.locator("input[name=name]").fill(name)
    form.locator("select[name=kind]").select_option(kind)
    form.locator("input[name=target]").fill(target)
    form.locator("input[name=threshold]").fill(threshold)
    form.locator("input[name=for_minutes]").fill("0")  # the form proposes 5 minutes: at once here
    form.locator("input[name=webhook_url]").fill(webhook_url)
    return form


def test_create_a_rule_see_it_fire_and_silence_it(
    page, live_server, make_user, console_cluster, topic, group, members, webhook_receiver, settings, screenshot
) -> None:
    make_user("operator", username="olga", password=PASSWORD)
    form = open_rule_form(
        page,
        live_server,
        members,
        group,
        topic,
        "olga",
        name="orders lag",
        kind="lag_above",
        target=group,
        threshold="10",
        webhook_url="http://10.0.0.7/hooks",
    )
    settings.GANTRY_ALERT_WEBHOOK_ALLOW_PRIVATE = False
    form.locator("button[type=submit]").click()
    page.locator("[data-testid=error-webhook_url]", has_text="loopback, private or reserved").wait_for()
    screenshot("refused")

    settings.GANTRY_ALERT_WEBHOOK_ALLOW_PRIVATE = True
    page.locator("[data-testid=alert-rule-form] input[name=webhook_url]").fill(webhook_receiver.url)
    page.locator("[data-testid=alert-rule-form] button[type=submit]").click()
    page.locator("[data-testid=messages]", has_text="Alert rule orders lag created").wait_for()

    send(console_cluster, topic, 12)
    health_scan()
    [body] = webhook_receiver.bodies()
    assert body["state"] == "firing" and body["target"] == group

    page.click("[data-testid=history-link]")
    row = page.locator("[data-testid=alert-events] tr[data-state=firing]", has_text="orders lag")
    assert "lag 12 messages" in row.inner_text() and "HTTP 200" in row.inner_text()
    screenshot("fired")
    row.locator("select[name=minutes]").select_option("60")
    row.locator("button", has_text="Silence rule").click()
    page.locator("[data-testid=messages]", has_text="Alert rule orders lag silenced until").wait_for()
    page.click("nav >> text=Alerts")
    assert "olga" in page.locator("[data-testid='silenced-orders lag']").inner_text()
    screenshot("silenced")


def test_a_topic_rule_made_on_the_page_fires_on_the_topic_s_lag(
    page, live_server, make_user, console_cluster, topic, group, members, webhook_receiver, settings, screenshot
) -> None:
    settings.GANTRY_ALERT_WEBHOOK_ALLOW_PRIVATE = True
    make_user("operator", username="otto", password=PASSWORD)
    form = open_rule_form(
        page,
        live_server,
        members,
        group,
        topic,
        "otto",
        name="orders topic lag",
        kind="topic_lag_above",
        target=topic,
        threshold="5",
        webhook_url=webhook_receiver.url,
    )
    form.locator("button[type=submit]").click()
    page.locator("[data-testid=messages]", has_text="Alert rule orders topic lag created").wait_for()

    send(console_cluster, topic, 6)
    health_scan()
    [body] = webhook_receiver.bodies()
    assert body["state"] == "firing" and body["target"] == topic and body["value"] == 6
    page.click("[data-testid=history-link]")
    row = page.locator("[data-testid=alert-events] tr[data-state=firing]", has_text="orders topic lag")
    assert f"topic {topic}: consumers are 6 messages behind ({group} 6)" in row.inner_text()
    screenshot("topic-rule-fired")
