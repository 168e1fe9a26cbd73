"""A group's consumer stops while the group has a backlog: with no rule written by anyone, the default rules
(health.defaults) put it on the overview within two minutes. The health scan runs on an injected
clock (``health_scan(now=...)``), 30 s apart as beat runs it, instead of waiting for real minutes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from health.models import AlertRule
from health.scan import health_scan
from tests.consumers._groups import send

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_cache")]

BACKLOG = 318


def test_a_stopped_consumer_with_a_backlog_is_on_the_overview_within_two_minutes_without_any_rule_written(
    viewer_client, console_cluster, topic, group, members
) -> None:
    consumer = members(group, topic, "audit-1")
    for mq in consumer.fetch_subscribe_message_queues(topic):
        consumer.update_offset(mq, 0)  # the group has consumed up to here
    send(console_cluster, topic, BACKLOG)
    consumer.close()  # the consumer goes down; the backlog stays
    assert not AlertRule.objects.exists()  # nobody wrote a rule

    t0 = timezone.now()
    before = viewer_client.get("/").content.decode()
    assert "No alerts." in before or group not in before

    firing = None
    for step in range(5):  # a scan every 30 s, for two minutes
        health_scan(now=t0 + timedelta(seconds=30 * step))
        rule = AlertRule.objects.get(builtin="group-no-consumer")
        if rule.firing:
            firing = step * 30
            break
    assert firing is not None and firing <= 120, "the default rule did not fire within two minutes"

    page = viewer_client.get("/").content.decode()
    alerts = page[page.index('data-testid="alerts"') :]
    assert "Consumer group with a backlog and no consumer online" in alerts
    assert f"{group} (backlog {BACKLOG:,})" in alerts
    health = page[page.index('data-testid="health-groups"') : page.index('data-testid="health-disk"')]
    assert 'data-level="error"' in health and f"{group}: no consumer online, backlog {BACKLOG:,}" in health


def test_the_default_rules_exist_after_the_first_scan_once_and_are_the_operators_to_change(
    operator, console_cluster
) -> None:
    health_scan()
    health_scan()
    rules = {r["builtin"]: r for r in operator.get("/api/v1/alert-rules").json()["results"]}
    assert set(rules) == {"group-lag-growing", "group-no-consumer", "slave-disconnected", "disk-above-warning"}
    growing, disk = rules["group-lag-growing"], rules["disk-above-warning"]
    assert (growing["kind"], growing["target"], growing["for_minutes"]) == ("lag_growing", "", 5)
    assert (disk["kind"], disk["threshold"]) == ("disk_above", 0.85)

    edited = operator.put(
        f"/api/v1/alert-rules/{disk['id']}",
        {"name": disk["name"], "kind": "disk_above", "threshold": 0.7, "emails": ["ops@example.com"]},
        format="json",
    )
    assert edited.status_code == 200 and edited.json()["threshold"] == 0.7
    silenced = operator.post(f"/api/v1/alert-rules/{growing['id']}/silence", {"minutes": 60}, format="json")
    assert silenced.status_code == 200 and silenced.json()["silenced_until"]
    disabled = operator.post(f"/api/v1/alert-rules/{growing['id']}/enable", {"enabled": False}, format="json")
    assert disabled.status_code == 200 and disabled.json()["enabled"] is False
    refused = operator.delete(f"/api/v1/alert-rules/{growing['id']}")
    assert refused.status_code == 400 and "id" in refused.json()["fields"] and "default rule" in str(refused.json())

    health_scan()  # an edited, silenced or disabled default is not made again
    again = {r["builtin"]: r for r in operator.get("/api/v1/alert-rules").json()["results"]}
    assert (
        len(again) == 4
        and again["disk-above-warning"]["threshold"] == 0.7
        and again["group-lag-growing"]["enabled"] is False
    )
