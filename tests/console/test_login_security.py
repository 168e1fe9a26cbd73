"""Lockout behind a proxy (django-axes per username and client address, GANTRY_TRUSTED_PROXY_COUNT),
and who got in or was turned away in the audit log: logins, failed logins, 403s of the role checks."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from rest_framework.test import APIClient

from console.models import AuditEntry
from tests.fixtures.console import PASSWORD

pytestmark = pytest.mark.django_db

TOKEN_URL = "/api/v1/auth/token"
PROXY = "10.1.1.1"  # the reverse proxy: every request arrives from it


@pytest.fixture
def behind_one_proxy(settings):
    settings.GANTRY_TRUSTED_PROXY_COUNT = 1
    settings.GANTRY_LOGIN = {"MAX_FAILURES": 5, "LOCKOUT_MINUTES": 15}


def _via_proxy(client_addr: str, spoofed: str = "") -> dict:
    forwarded = f"{spoofed}, {client_addr}" if spoofed else client_addr
    return {"REMOTE_ADDR": PROXY, "HTTP_X_FORWARDED_FOR": forwarded}


def test_five_failures_behind_a_proxy_lock_that_username_from_that_address_only(behind_one_proxy, make_user) -> None:
    for name in ("ivan", "judy"):
        make_user("viewer", username=name)
    api = APIClient()
    for attempt in range(5):
        response = api.post(
            TOKEN_URL, {"username": "ivan", "password": "wrong"}, format="json", **_via_proxy("203.0.113.7")
        )
        assert response.status_code == (429 if attempt == 4 else 401), (attempt, response.json())
    locked = api.post(TOKEN_URL, {"username": "ivan", "password": PASSWORD}, format="json", **_via_proxy("203.0.113.7"))
    assert locked.status_code == 429 and "Login is locked; try again in 15 minutes" in locked.json()["detail"]
    # a client-written X-Forwarded-For entry left of the proxy's does not make another address
    spoofed = api.post(
        TOKEN_URL,
        {"username": "ivan", "password": PASSWORD},
        format="json",
        **_via_proxy("203.0.113.7", spoofed="198.51.100.1"),
    )
    assert spoofed.status_code == 429
    # other users from the same address still log in, at both doors
    assert (
        api.post(
            TOKEN_URL, {"username": "judy", "password": PASSWORD}, format="json", **_via_proxy("203.0.113.7")
        ).status_code
        == 201
    )
    page = Client().post("/login/", {"username": "judy", "password": PASSWORD}, **_via_proxy("203.0.113.7"))
    assert page.status_code == 302
    # the same user from another client of the same proxy too
    assert (
        api.post(
            TOKEN_URL, {"username": "ivan", "password": PASSWORD}, format="json", **_via_proxy("203.0.113.8")
        ).status_code
        == 201
    )
    # the console login refuses ivan from the locked address
    page = Client().post("/login/", {"username": "ivan", "password": PASSWORD}, **_via_proxy("203.0.113.7"))
    assert page.status_code == 429 and "Login is locked" in page.content.decode()


def test_without_trusted_proxies_the_forwarded_header_is_ignored(settings, make_user) -> None:
    settings.GANTRY_LOGIN = {"MAX_FAILURES": 5, "LOCKOUT_MINUTES": 15}
    make_user("viewer", username="kim")
    api = APIClient()
    for i in range(5):  # a client cannot dodge the count by writing a new X-Forwarded-For each time
        api.post(
            TOKEN_URL,
            {"username": "kim", "password": "wrong"},
            format="json",
            REMOTE_ADDR="192.0.2.9",
            HTTP_X_FORWARDED_FOR=f"10.0.0.{i}",
        )
    response = api.post(
        TOKEN_URL,
        {"username": "kim", "password": PASSWORD},
        format="json",
        REMOTE_ADDR="192.0.2.9",
        HTTP_X_FORWARDED_FOR="10.0.0.99",
    )
    assert response.status_code == 429


def test_logins_and_failures_are_audited_with_the_client_address_and_no_password(behind_one_proxy, make_user) -> None:
    make_user("operator", username="lena")
    api = APIClient()
    api.post(
        TOKEN_URL, {"username": "lena", "password": "s3cret-wrong-pass"}, format="json", **_via_proxy("203.0.113.20")
    )
    api.post(TOKEN_URL, {"username": "lena", "password": PASSWORD}, format="json", **_via_proxy("203.0.113.20"))
    Client().post("/login/", {"username": "lena", "password": PASSWORD}, **_via_proxy("203.0.113.21"))
    Client().post("/login/", {"username": "nobody", "password": "s3cret-wrong-pass"}, **_via_proxy("203.0.113.22"))
    entries = list(AuditEntry.objects.filter(action__startswith="auth.").order_by("id"))
    got = [(e.action, e.actor, e.source, e.ip, e.result) for e in entries]
    assert got == [
        ("auth.login_failed", "lena", "api", "203.0.113.20", "failed"),
        ("auth.login", "lena", "api", "203.0.113.20", "ok"),
        ("auth.login", "lena", "console", "203.0.113.21", "ok"),
        ("auth.login_failed", "nobody", "console", "203.0.113.22", "failed"),
    ]
    assert entries[0].reason == "wrong username or password" and entries[1].actor_role == "operator"
    every_field = json.dumps([[getattr(e, f.name) for f in AuditEntry._meta.fields] for e in entries], default=str)
    assert "s3cret-wrong-pass" not in every_field and PASSWORD not in every_field


def test_a_lock_is_audited_as_the_reason_of_the_failure(settings, make_user) -> None:
    settings.GANTRY_LOGIN = {"MAX_FAILURES": 2, "LOCKOUT_MINUTES": 15}
    make_user("viewer", username="mia")
    for _ in range(3):
        APIClient().post(TOKEN_URL, {"username": "mia", "password": "wrong"}, format="json")
    reasons = list(
        AuditEntry.objects.filter(action="auth.login_failed").order_by("id").values_list("reason", flat=True)
    )
    assert reasons[0] == "wrong username or password" and all("Login is locked" in r for r in reasons[1:])


def test_403s_of_the_role_checks_are_audited(api_client_as, client, make_user) -> None:
    assert (
        api_client_as("viewer").post("/api/v1/users", {"username": "x", "role": "viewer"}, format="json").status_code
        == 403
    )
    client.force_login(make_user("operator", username="ops"))
    assert client.get("/users/").status_code == 403
    denied = list(AuditEntry.objects.filter(action="access.denied").order_by("id"))
    assert [(e.source, e.target, e.actor_role, e.result) for e in denied] == [
        ("api", "POST /api/v1/users", "viewer", "failed"),
        ("console", "GET /users/", "operator", "failed"),
    ]
    assert denied[1].actor == "ops" and "needs the admin role" in denied[1].reason and denied[1].ip == "127.0.0.1"
    assert api_client_as(None).get("/api/v1/users").status_code == 401  # no credentials: not a refusal of a role
    assert AuditEntry.objects.filter(action="access.denied").count() == 2
