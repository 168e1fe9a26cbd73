"""The audit log: record_audit / audited, GET /api/v1/audit-log (filters, pagination) and the page."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from console.actor import Actor
from console.audit import audited, record_audit
from console.errors import InvalidInput
from console.models import AuditEntry
from console.roles import Role

pytestmark = pytest.mark.django_db

ALICE = Actor("alice", Role.OPERATOR, "console", "10.1.2.3")


def test_audited_records_ok_with_before_and_after() -> None:
    with audited(actor=ALICE, action="topic.update", target_type="topic", target="Orders", before={"perm": 6}) as note:
        note.after = {"perm": 4}
    entry = AuditEntry.objects.get()
    assert (entry.actor, entry.actor_role, entry.source, entry.ip) == ("alice", "operator", "console", "10.1.2.3")
    assert (entry.action, entry.target_type, entry.target, entry.result) == ("topic.update", "topic", "Orders", "ok")
    assert entry.before == {"perm": 6} and entry.after == {"perm": 4} and entry.created_at is not None


def test_audited_records_the_failure_reason_and_reraises() -> None:
    with pytest.raises(InvalidInput):
        with audited(actor=ALICE, action="topic.create", target_type="topic", target="Bad"):
            raise InvalidInput("cluster", "unknown cluster 'X'")
    entry = AuditEntry.objects.get()
    assert entry.result == "failed" and entry.reason == "cluster: unknown cluster 'X'"


def test_engine_failures_are_recorded_with_the_http_message() -> None:
    from brokers.engine.remoting.errors import RemotingConnectError

    with pytest.raises(RemotingConnectError):
        with audited(actor=ALICE, action="topic.delete", target_type="topic", target="T"):
            raise RemotingConnectError("no name server answered (127.0.0.1:1: refused)", "127.0.0.1:1")
    assert AuditEntry.objects.get().reason.startswith("name server unreachable: no name server answered")


def _seed() -> None:
    now = timezone.now()
    for i, (actor, action, target, ok, days) in enumerate(
        [
            ("alice", "topic.create", "Orders", True, 0),
            ("alice", "topic.delete", "Orders", False, 0),
            ("bob", "user.update", "carol", True, 1),
            ("bob", "topic.create", "Payments", True, 3),
        ]
    ):
        entry = record_audit(
            actor=Actor(actor, Role.ADMIN, "api"),
            action=action,
            target_type=action.split(".")[0],
            target=target,
            ok=ok,
            reason="" if ok else "boom",
        )
        AuditEntry.objects.filter(pk=entry.pk).update(created_at=now - timedelta(days=days, minutes=i))


def test_api_filters_by_actor_action_target_result_and_date(api_client_as) -> None:
    _seed()
    api = api_client_as("viewer")

    def names(**query) -> list[tuple[str, str, str]]:
        response = api.get("/api/v1/audit-log", query)
        assert response.status_code == 200, response.content
        return [
            (e["actor"], e["action"], e["target"]) for e in response.json()["results"] if e["actor"] != "api-viewer"
        ]

    assert names(actor="bob") == [("bob", "user.update", "carol"), ("bob", "topic.create", "Payments")]
    assert names(action="topic.create") == [("alice", "topic.create", "Orders"), ("bob", "topic.create", "Payments")]
    assert names(action="user") == [("bob", "user.update", "carol")]
    # any case, on SQLite and PostgreSQL alike (SQLite's LIKE ignores ASCII case, PostgreSQL's does not)
    assert names(action="User.") == names(actor="BOB", target="CAR") == [("bob", "user.update", "carol")]
    assert names(target="pay") == [("bob", "topic.create", "Payments")]
    assert names(result="failed") == [("alice", "topic.delete", "Orders")]
    today = timezone.now().date()
    assert [n[2] for n in names(since=str(today - timedelta(days=1)))] == ["Orders", "Orders", "carol"]
    assert [n[2] for n in names(until=str(today - timedelta(days=2)))] == ["Payments"]
    assert names(actor="alice", ordering="created_at")[0] == ("alice", "topic.delete", "Orders")  # oldest first
    page = api.get("/api/v1/audit-log", {"page_size": 2}).json()
    assert page["count"] >= 4 and len(page["results"]) == 2 and page["next"]
    entry = api.get("/api/v1/audit-log", {"result": "failed"}).json()["results"][0]
    assert set(entry) == {
        "id",
        "created_at",
        "actor",
        "actor_role",
        "source",
        "ip",
        "action",
        "target_type",
        "target",
        "before",
        "after",
        "result",
        "reason",
        "request_id",
    }
    for bad in ({"since": "yesterday"}, {"result": "maybe"}, {"ordering": "actor"}):
        assert api.get("/api/v1/audit-log", bad).status_code == 400


def test_audit_log_is_read_only(api_client_as) -> None:
    api = api_client_as("admin")
    assert api.post("/api/v1/audit-log", {"actor": "x"}, format="json").status_code == 405
    assert api.delete("/api/v1/audit-log/1").status_code == 404


def test_audit_page_lists_filters_and_escapes(client, make_user) -> None:
    _seed()
    record_audit(
        actor=ALICE,
        action="topic.create",
        target_type="topic",
        target="<img src=x onerror=alert(1)>",
        ok=False,
        reason="<script>x</script>",
    )
    client.force_login(make_user("viewer"))
    page = client.get("/audit/").content.decode()
    assert "Payments" in page and "carol" in page
    assert "<img src=x" not in page and "&lt;img src=x" in page and "<script>x" not in page
    fragment = client.get("/audit/", {"actor": "bob"}, HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in fragment and "Payments" in fragment and "Orders" not in fragment


def test_audit_page_shows_before_and_after_as_key_value_lines(client, make_user) -> None:
    with audited(
        actor=ALICE,
        action="topic.update",
        target_type="topic",
        target="Orders",
        before={"perm": 6, "read_queue_nums": 4, "brokers": ["broker-a", "broker-b"]},
    ) as note:
        note.after = {"perm": 4, "read_queue_nums": 4, "brokers": ["broker-a", "broker-b"]}
    client.force_login(make_user("viewer"))
    page = client.get("/audit/").content.decode()
    assert "&quot;perm&quot;" not in page and '{"perm"' not in page  # no raw JSON
    assert '<dl class="kv" data-testid="audit-before">' in page and '<dl class="kv" data-testid="audit-after">' in page
    assert '<dt class="changed">perm</dt><dd class="changed">6</dd>' in page  # the change stands out
    assert '<dt class="changed">perm</dt><dd class="changed">4</dd>' in page
    assert '<dt>read_queue_nums</dt><dd class="">4</dd>' in page and '<dd class="">broker-a, broker-b</dd>' in page
