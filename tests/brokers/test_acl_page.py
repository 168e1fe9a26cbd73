"""The Access control page and /api/v1/acl/... against a real ACL-enabled cluster (acl_session_cluster:
broker-a and broker-b sharing one plain_acl.yml), the console signing as its admin account."""

from __future__ import annotations

import json
import uuid

import pytest

from brokers.engine.acl.plain_acl_config import load_plain_acl_file
from console.models import AuditEntry
from tests.brokers.engine.acl._acl_cluster import ADMIN, DEMO

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_api(api_client_as):
    return api_client_as("admin")


def key(prefix: str = "acct") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def test_viewer_reads_accounts_without_secrets(console_acl_cluster, viewer, viewer_client):
    answer = viewer.get("/api/v1/acl/accounts")
    assert answer.status_code == 200, answer.content
    data = answer.json()
    by_key = {a["access_key"]: a for a in data["accounts"]}
    assert by_key[ADMIN[0]]["admin"] is True and by_key[DEMO[0]]["default_topic_perm"] == "PUB|SUB"
    assert {b["broker_name"] for b in data["brokers"]} == {"broker-a", "broker-b"} and data["consistent"]
    page = viewer_client.get("/acl/")
    assert page.status_code == 200
    text = page.content.decode()
    for body in (answer.content.decode(), text):
        assert ADMIN[1] not in body and DEMO[1] not in body and "secret" not in json.dumps(data["accounts"])
    assert DEMO[0] in text and 'data-testid="acl-account-form"' not in text  # read-only for a viewer
    assert 'href="/acl/"' in text  # the nav link


def test_an_unknown_cluster_is_a_400_naming_the_field_not_an_unavailable_acl(console_acl_cluster, viewer, admin_api):
    answer = viewer.get("/api/v1/acl/accounts", {"cluster": "NoSuchCluster"})
    assert answer.status_code == 400, answer.content
    assert "unknown cluster 'NoSuchCluster'" in answer.json()["fields"]["cluster"][0]
    refused = admin_api.post(
        "/api/v1/acl/accounts?cluster=NoSuchCluster",
        {"access_key": key(), "secret_key": "long-enough-1"},
        format="json",
    )
    assert refused.status_code == 400 and "cluster" in refused.json()["fields"]


def test_admin_creates_updates_and_deletes_an_account_on_every_broker_audited(console_acl_cluster, admin_api):
    name = key()
    secret = "created-secret-1"
    created = admin_api.post(
        "/api/v1/acl/accounts",
        {
            "access_key": name,
            "secret_key": secret,
            "default_topic_perm": "PUB",
            "topic_perms": ["Orders=PUB|SUB"],
            "group_perms": ["billing=SUB"],
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    assert created.json()["topic_perms"] == ["Orders=PUB|SUB"] and secret not in created.content.decode()
    assert load_plain_acl_file(str(console_acl_cluster.acl_file)).account(name).secret_key == secret
    entry = AuditEntry.objects.get(action="acl.account.create", target=name)
    assert (
        entry.result == AuditEntry.OK
        and secret not in json.dumps(entry.after)
        and entry.after["secret_changed"] is True
    )
    assert entry.reason == "applied on 2 brokers"

    updated = admin_api.put(
        f"/api/v1/acl/accounts/{name}", {"default_group_perm": "SUB", "admin": False}, format="json"
    )
    assert updated.status_code == 200, updated.content
    account = load_plain_acl_file(str(console_acl_cluster.acl_file)).account(name)
    assert account.secret_key == secret and account.default_group_perm.name == "SUB"
    entry = AuditEntry.objects.get(action="acl.account.update", target=name)
    assert entry.before["default_group_perm"] == "DENY" and entry.after["default_group_perm"] == "SUB"
    assert entry.after["secret_changed"] is False

    deleted = admin_api.delete(f"/api/v1/acl/accounts/{name}")
    assert deleted.status_code == 204, deleted.content
    assert name not in load_plain_acl_file(str(console_acl_cluster.acl_file)).accounts
    assert AuditEntry.objects.get(action="acl.account.delete", target=name).before["access_key"] == name
    assert admin_api.delete(f"/api/v1/acl/accounts/{name}").status_code == 404


@pytest.mark.parametrize(
    "payload, field",
    [
        ({"secret_key": "long-enough-1", "topic_perms": ["Orders=PUBX"]}, "topic_perms"),
        ({"secret_key": "short"}, "secret_key"),
        ({}, "secret_key"),
        ({"secret_key": "long-enough-1", "white_remote_address": "10.0.0.300"}, "white_remote_address"),
        ({"secret_key": "long-enough-1", "default_topic_perm": "READ"}, "default_topic_perm"),
        ({"secret_key": "long-enough-1", "topic_perms": ["a=PUB,b=SUB"]}, "topic_perms"),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_changes_nothing(console_acl_cluster, admin_api, payload, field):
    before = console_acl_cluster.acl_file.read_bytes()
    answer = admin_api.post("/api/v1/acl/accounts", {"access_key": key(), **payload}, format="json")
    assert answer.status_code == 400, answer.content
    assert field in answer.json()["fields"], answer.json()
    assert console_acl_cluster.acl_file.read_bytes() == before


def test_the_last_admin_cannot_be_demoted_and_non_admins_cannot_write(console_acl_cluster, admin_api, operator):
    before = console_acl_cluster.acl_file.read_bytes()
    demote = admin_api.put(f"/api/v1/acl/accounts/{ADMIN[0]}", {"admin": False}, format="json")
    assert demote.status_code == 400 and "no admin account" in json.dumps(demote.json())
    refused = operator.post("/api/v1/acl/accounts", {"access_key": key(), "secret_key": "long-enough-1"}, format="json")
    assert refused.status_code == 403
    assert operator.put("/api/v1/acl/global-white-addresses", {"addresses": []}, format="json").status_code == 403
    assert console_acl_cluster.acl_file.read_bytes() == before


def test_global_white_addresses_are_set_and_a_bad_pattern_named(console_acl_cluster, admin_api):
    answer = admin_api.put("/api/v1/acl/global-white-addresses", {"addresses": ["10.250.0.{1,2}"]}, format="json")
    assert answer.status_code == 200, answer.content
    assert answer.json() == {"addresses": ["10.250.0.{1,2}"]}
    bad = admin_api.put("/api/v1/acl/global-white-addresses", {"addresses": ["10.0.0.1-300"]}, format="json")
    assert bad.status_code == 400 and "addresses" in bad.json()["fields"]
    entry = AuditEntry.objects.filter(action="acl.global_white.update").latest("created_at")
    assert entry.after == ["10.250.0.{1,2}"]
    assert admin_api.put("/api/v1/acl/global-white-addresses", {"addresses": []}, format="json").json() == {
        "addresses": []
    }


def test_the_page_form_creates_an_account_and_names_a_bad_field(console_acl_cluster, as_role):
    client = as_role("admin")
    page = client.get("/acl/")
    assert 'data-testid="acl-account-form"' in page.content.decode()
    name = key("form")
    bad = client.post(
        "/acl/accounts",
        {
            "mode": "create",
            "access_key": name,
            "secret_key": "form-secret-1",
            "default_topic_perm": "DENY",
            "default_group_perm": "SUB",
            "topic_perms": "Orders=PUBX",
        },
    )
    assert bad.status_code == 400 and 'data-field="topic_perms"' in bad.content.decode()
    ok = client.post(
        "/acl/accounts",
        {
            "mode": "create",
            "access_key": name,
            "secret_key": "form-secret-1",
            "default_topic_perm": "DENY",
            "default_group_perm": "SUB",
            "topic_perms": "Orders=PUB\nAudit=SUB",
        },
    )
    assert ok.status_code == 302
    account = load_plain_acl_file(str(console_acl_cluster.acl_file)).account(name)
    assert account.secret_key == "form-secret-1" and list(account.topic_perms) == ["Orders", "Audit"]
    shown = client.get("/acl/").content.decode()
    assert name in shown and "form-secret-1" not in shown
    edit = client.get(f"/acl/?edit={name}").content.decode()
    assert "form-secret-1" not in edit and "Orders=PUB" in edit
    assert client.post(f"/acl/accounts/{name}/delete").status_code == 302
    assert name not in load_plain_acl_file(str(console_acl_cluster.acl_file)).accounts
