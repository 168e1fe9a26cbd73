"""Alert rules that reach people: a real HTTP server receives the webhook at the first health
scan after a group's lag passes the threshold, nothing while the rule is silenced, a resolution when the
lag falls; e-mail through Django's mail (locmem in tests); the API's refusals name the field."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from brokers.models import BrokerSighting
from console.models import AuditEntry
from health.models import AlertEvent, AlertRule
from health.rules import Reading, evaluate_rule
from health.tasks import health_scan_task
from tests.consumers._groups import consume, send

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_cache")]


def scan() -> dict:
    """One health scan as beat runs it: the Celery task's body, called here (no broker: the worker's own
    Celery setup stays untouched for tests/consumers/test_health_scan.py's worker); ``default``'s scan."""
    [default, *_] = health_scan_task()["scans"]
    return default


def test_lag_above_reaches_the_webhook_within_one_scan_not_while_silenced_and_resolves(
    operator, console_cluster, topic, group, members, webhook_receiver
) -> None:
    a = members(group, topic, "alert-a")
    for mq in a.fetch_subscribe_message_queues(topic):
        a.update_offset(mq, 0)
    created = operator.post(
        "/api/v1/alert-rules",
        {
            "name": "orders lag",
            "kind": "lag_above",
            "target": group,
            "threshold": 10,
            "webhook_url": webhook_receiver.url,
            "emails": ["ops@example.com"],
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    rule_id = created.json()["id"]
    scan()
    assert webhook_receiver.bodies() == []  # no lag yet: nothing sent

    send(console_cluster, topic, 12)
    scan()
    assert AlertEvent.objects.filter(rule_id=rule_id).count() == 1  # the first scan after the condition
    [body] = webhook_receiver.bodies()
    assert (
        body["state"] == "firing" and body["rule"] == "orders lag" and body["target"] == group and body["value"] == 12
    )
    assert body["text"].startswith(":red_circle: [Gantry] orders lag firing") and "lag 12 messages" in body["text"]
    assert [m.to for m in mail.outbox] == [["ops@example.com"]] and "orders lag firing" in mail.outbox[0].subject
    scan()
    assert webhook_receiver.bodies() == []  # still firing: not sent again

    silenced = operator.post(f"/api/v1/alert-rules/{rule_id}/silence", {"minutes": 60}, format="json")
    assert silenced.status_code == 200 and silenced.json()["silenced_until"]
    consume(a, a.fetch_subscribe_message_queues(topic))  # the backlog is gone: resolved, but silenced
    scan()
    send(console_cluster, topic, 12)  # firing again, still silenced
    scan()
    assert webhook_receiver.bodies() == [] and len(mail.outbox) == 1
    events = operator.get(f"/api/v1/alert-events?rule={rule_id}").json()["results"]
    assert [(e["state"], e["notified"]) for e in events] == [("firing", False), ("resolved", False), ("firing", True)]
    assert "silenced until" in events[0]["delivery"][0]["detail"]

    operator.post(f"/api/v1/alert-rules/{rule_id}/silence", {"minutes": 0}, format="json")
    consume(a, a.fetch_subscribe_message_queues(topic))
    scan()
    [resolved] = webhook_receiver.bodies()
    assert (
        resolved["state"] == "resolved" and resolved["value"] == 0 and resolved["text"].startswith(":white_check_mark:")
    )
    assert AuditEntry.objects.filter(action="alert_rule.silence", target="orders lag").count() == 2


def test_an_expired_broker_fires_its_rule_and_the_event_is_acknowledged(
    operator, viewer, console_cluster, webhook_receiver
) -> None:
    BrokerSighting.objects.create(
        addr="127.0.0.1:1", cluster="Old", broker_name="broker-gone", last_seen_at=timezone.now() - timedelta(minutes=5)
    )
    rule = operator.post(
        "/api/v1/alert-rules",
        {"name": "gone", "kind": "broker_expired", "target": "broker-gone", "webhook_url": webhook_receiver.url},
        format="json",
    ).json()
    operator.post(
        "/api/v1/alert-rules",
        {"name": "disk", "kind": "disk_above", "threshold": 0.99, "emails": ["disk@example.com"]},
        format="json",
    )
    scan()
    [body] = webhook_receiver.bodies()
    assert body["kind"] == "broker_expired" and "broker-gone (127.0.0.1:1)" in body["message"]
    [event] = viewer.get("/api/v1/alert-events?state=firing").json()["results"]
    assert event["rule"] == rule["id"] and event["delivery"][0]["ok"] and event["delivery"][0]["detail"] == "HTTP 200"
    assert viewer.post(f"/api/v1/alert-events/{event['id']}/acknowledge").status_code == 403
    acked = operator.post(f"/api/v1/alert-events/{event['id']}/acknowledge").json()
    assert acked["acked_by"] == "api-operator" and acked["acked_at"]
    assert AlertRule.objects.get(name="disk").last_value is not None  # the disk ratio the overview read


def test_a_rule_fires_only_after_its_condition_held_for_minutes_and_reminds_until_acknowledged(
    settings, webhook_receiver
) -> None:
    settings.GANTRY_ALERT_REPEAT_MINUTES = 30
    rule = AlertRule.objects.create(
        name="slow", kind="lag_above", target="g", threshold=5, for_minutes=10, webhook_url=webhook_receiver.url
    )
    t0 = timezone.now()
    high = Reading(True, 50, "consumer group g: lag 50")

    def step(at, reading=high):
        evaluate_rule(AlertRule.objects.get(pk=rule.pk), reading, at)

    step(t0)
    step(t0 + timedelta(minutes=9))
    assert webhook_receiver.bodies() == [] and not AlertRule.objects.get(pk=rule.pk).firing
    step(t0 + timedelta(minutes=10))
    assert [b["state"] for b in webhook_receiver.bodies()] == ["firing"]
    step(t0 + timedelta(minutes=41))  # unacknowledged for 30 min: a reminder
    assert [b["state"] for b in webhook_receiver.bodies()] == ["firing"]
    AlertEvent.objects.filter(rule=rule).update(acked_by="ops", acked_at=t0)
    step(t0 + timedelta(minutes=80))
    assert webhook_receiver.bodies() == []  # acknowledged: no reminder
    step(t0 + timedelta(minutes=81), Reading(False, 0, "consumer group g: lag 0"))
    assert [b["state"] for b in webhook_receiver.bodies()] == ["resolved"]


def test_a_redirecting_webhook_is_not_followed_and_the_failure_is_recorded(webhook_receiver) -> None:
    webhook_receiver.reply = 302
    rule = AlertRule.objects.create(
        name="r", kind="lag_above", target="g", threshold=5, webhook_url=webhook_receiver.url
    )
    event = evaluate_rule(rule, Reading(True, 9, "lag 9"), timezone.now())
    [delivery] = event.delivery
    assert (
        not delivery["ok"]
        and delivery["attempts"] == 2
        and "HTTP 302 (redirects are not followed)" in delivery["detail"]
    )
    assert [r["path"] for r in list(webhook_receiver.received.queue)] == [
        "/hooks/gantry"
    ] * 2  # tried twice, never /elsewhere


@pytest.mark.parametrize(
    ("body", "field", "reason"),
    [
        (
            {"kind": "lag_above", "target": "g", "webhook_url": "ftp://chat.example.com/x"},
            "webhook_url",
            "http:// or https://",
        ),
        (
            {"kind": "lag_above", "target": "g", "webhook_url": "http://127.0.0.1:9/x"},
            "webhook_url",
            "loopback, private or reserved",
        ),
        (
            {"kind": "lag_above", "target": "g", "webhook_url": "http://169.254.169.254/latest"},
            "webhook_url",
            "loopback, private or reserved",
        ),
        ({"kind": "lag_above", "target": "", "emails": ["a@example.com"]}, "target", "consumer group"),
        ({"kind": "topic_lag_above", "target": "", "emails": ["a@example.com"]}, "target", "a topic is needed"),
        ({"kind": "disk_above", "threshold": 5, "emails": ["a@example.com"]}, "threshold", "between 0 and 1"),
        ({"kind": "lag_above", "target": "g", "emails": ["not-an-address"]}, "emails", "valid email"),
        (
            {"kind": "lag_above", "target": "g", "emails": ["a@example.com"], "for_minutes": -1},
            "for_minutes",
            "greater than or equal",
        ),
        ({"kind": "bogus", "target": "g", "emails": ["a@example.com"]}, "kind", "not a valid choice"),
        ({"kind": "lag_above", "target": "g", "emails": ["a@example.com"], "colour": "red"}, "colour", "unknown field"),
    ],
)
def test_the_api_refuses_bad_rules_naming_the_field_and_changes_nothing(operator, body, field, reason) -> None:
    response = operator.post("/api/v1/alert-rules", {"name": "x", **body}, format="json")
    assert response.status_code == 400, response.json()
    assert reason in str(response.json()), response.json()
    assert field in str(response.json())
    assert not AlertRule.objects.exists()


def test_a_rule_naming_a_group_no_broker_knows_is_refused_and_one_without_a_channel_is_kept(
    operator, console_cluster, online
) -> None:
    refused = operator.post(
        "/api/v1/alert-rules", {"kind": "lag_above", "target": "G_nobody_knows_me", "threshold": 10}, format="json"
    )
    assert refused.status_code == 400 and "does not exist" in refused.json()["fields"]["target"][0]
    assert not AlertRule.objects.exists()
    kept = operator.post("/api/v1/alert-rules", {"kind": "lag_above", "target": online, "threshold": 10}, format="json")
    assert kept.status_code == 201 and kept.json()["webhook_url"] == "" and kept.json()["emails"] == []


def test_the_rule_form_proposes_a_threshold_and_minutes_and_reports_every_bad_field_at_once(as_role) -> None:
    client = as_role("operator")
    form = client.get("/alerts/").content.decode()
    assert 'name="threshold" value="1000.0"' in form and 'name="for_minutes" value="5"' in form
    refused = client.post(
        "/alerts/",
        {
            "name": "x",
            "kind": "disk_above",
            "threshold": "7",
            "for_minutes": "0",
            "emails": "not-an-address",
            "webhook_url": "ftp://chat.example.com/x",
        },
    )
    page = refused.content.decode()
    assert refused.status_code == 400
    for field in ("threshold", "emails", "webhook_url"):
        assert f'data-testid="error-{field}"' in page, field
    assert not AlertRule.objects.exists()


def test_viewers_read_rules_and_operators_change_them(viewer, operator, console_cluster, online) -> None:
    assert (
        viewer.post(
            "/api/v1/alert-rules", {"kind": "lag_above", "target": "g", "emails": ["a@example.com"]}, format="json"
        ).status_code
        == 403
    )
    rule = operator.post(
        "/api/v1/alert-rules",
        {"kind": "no_consumer_online", "target": online, "emails": ["a@example.com"]},
        format="json",
    ).json()
    assert rule["name"] == f"no_consumer_online {online}"
    assert [r["id"] for r in viewer.get("/api/v1/alert-rules").json()["results"]] == [rule["id"]]
    changed = operator.put(
        f"/api/v1/alert-rules/{rule['id']}",
        {"name": "renamed", "kind": "no_consumer_online", "target": online, "emails": ["b@example.com"]},
        format="json",
    ).json()
    assert changed["name"] == "renamed" and changed["emails"] == ["b@example.com"]
    assert operator.get("/api/v1/alert-rules/abc").status_code == 400
    assert operator.get("/api/v1/alert-rules/999999").status_code == 404
    assert operator.delete(f"/api/v1/alert-rules/{rule['id']}").status_code == 200
    assert [e.action for e in AuditEntry.objects.filter(target_type="alert_rule").order_by("id")] == [
        "alert_rule.create",
        "alert_rule.update",
        "alert_rule.delete",
    ]


def test_no_consumer_online_and_a_growing_dlq_fire_and_resolve(
    operator, console_cluster, console_admin, topic, group, members, webhook_receiver
) -> None:
    from tests.brokers.engine.client._cluster import create_topic

    dlq = f"%DLQ%{group}"
    create_topic(console_admin, console_cluster, dlq, queues=1)
    members(group, topic, "was-here").close()  # the group exists (its brokers keep its settings), nobody is online
    for body in (
        {"name": "nobody", "kind": "no_consumer_online", "target": group},
        {"name": "dlq", "kind": "dlq_growing", "target": group},
    ):
        assert (
            operator.post(
                "/api/v1/alert-rules", {**body, "webhook_url": webhook_receiver.url}, format="json"
            ).status_code
            == 201
        )
    scan()  # nobody online; the DLQ's first count (nothing to compare yet)
    assert [(b["rule"], b["state"]) for b in webhook_receiver.bodies()] == [("nobody", "firing")]
    members(group, topic, "back-online")
    send(console_cluster, dlq, 3)
    scan()
    got = sorted((b["rule"], b["state"], b["value"]) for b in webhook_receiver.bodies())
    assert got == [("dlq", "firing", 3), ("nobody", "resolved", 1)]
    scan()  # the DLQ stopped growing
    assert [(b["rule"], b["state"]) for b in webhook_receiver.bodies()] == [("dlq", "resolved")]


def test_topic_rules_fire_on_the_lag_of_every_group_reading_the_topic_and_when_nobody_subscribes(
    operator, console_cluster, topic, group, members, webhook_receiver
) -> None:
    for body in (
        {"name": "topic lag", "kind": "topic_lag_above", "target": topic, "threshold": 5},
        {"name": "topic unread", "kind": "topic_no_consumer_online", "target": topic},
    ):
        assert (
            operator.post(
                "/api/v1/alert-rules", {**body, "webhook_url": webhook_receiver.url}, format="json"
            ).status_code
            == 201
        )
    scan()  # no group reads the topic: nobody online for it, and no lag to sum
    assert [(b["rule"], b["state"]) for b in webhook_receiver.bodies()] == [("topic unread", "firing")]
    a = members(group, topic, "topic-a")
    for mq in a.fetch_subscribe_message_queues(topic):
        a.update_offset(mq, 0)
    send(console_cluster, topic, 7)
    scan()
    got = {b["rule"]: b for b in webhook_receiver.bodies()}
    assert (got["topic lag"]["state"], got["topic lag"]["value"]) == ("firing", 7)
    assert f"topic {topic}: consumers are 7 messages behind ({group} 7)" in got["topic lag"]["text"]
    assert (got["topic unread"]["state"], got["topic unread"]["value"]) == ("resolved", 1)
    consume(a, a.fetch_subscribe_message_queues(topic))
    scan()
    assert [(b["rule"], b["state"], b["value"]) for b in webhook_receiver.bodies()] == [("topic lag", "resolved", 0)]


def test_console_pages_answer_bad_input_with_the_field_and_roles(as_role) -> None:
    viewer_client = as_role("viewer")
    assert (
        viewer_client.get("/alerts/").status_code == 200
        and viewer_client.get("/alerts/events/?state=bogus").status_code == 400
    )
    assert viewer_client.post("/alerts/", {"name": "x"}).status_code == 403
    operator_client = as_role("operator")
    refused = operator_client.post(
        "/alerts/",
        {"name": "x", "kind": "disk_above", "threshold": "7", "for_minutes": "0", "emails": "ops@example.com"},
    )
    assert refused.status_code == 400 and "the disk ratio must be between 0 and 1" in refused.content.decode()
    assert operator_client.get("/alerts/rules/999999/").status_code == 404
    assert operator_client.post("/alerts/events/", {"event": "abc"}).status_code == 302
    assert not AlertRule.objects.exists()
