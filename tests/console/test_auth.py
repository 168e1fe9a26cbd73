"""Logging in: API tokens (POST/DELETE /api/v1/auth/token), the console login, and the lockout of
repeated failures at both doors."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from axes.models import AccessAttempt

from console.models import ApiToken, AuditEntry
from tests.fixtures.console import PASSWORD

pytestmark = pytest.mark.django_db

TOKEN_URL = "/api/v1/auth/token"


@pytest.fixture(autouse=True)
def lockout_after_three(settings):
    settings.GANTRY_LOGIN = {"MAX_FAILURES": 3, "LOCKOUT_MINUTES": 15}


def test_token_for_username_and_password_then_use_it(make_user) -> None:
    make_user("operator", username="scripts")
    api = APIClient()
    response = api.post(TOKEN_URL, {"username": "scripts", "password": PASSWORD, "name": "ci"}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    token = body["token"]
    assert token.startswith("gty_") and body["username"] == "scripts" and body["name"] == "ci"
    stored = ApiToken.objects.get(pk=body["id"])
    assert token not in (stored.digest, stored.prefix) and token.startswith(stored.prefix)  # only a digest is kept
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert api.get("/api/v1/auth/whoami").json() == {"username": "scripts", "role": "operator", "auth": "token"}
    assert AuditEntry.objects.filter(action="token.create", actor="scripts", result="ok").exists()


def test_wrong_password_is_401_and_locks_after_repeated_failures(make_user) -> None:
    make_user("viewer", username="alice")
    api = APIClient()
    for _ in range(2):
        response = api.post(TOKEN_URL, {"username": "alice", "password": "wrong"}, format="json")
        assert response.status_code == 401 and response.json()["detail"] == "username or password is wrong"
    response = api.post(TOKEN_URL, {"username": "alice", "password": "wrong"}, format="json")
    assert response.status_code == 429
    assert "Login is locked; try again in 15 minutes" in response.json()["detail"]
    assert int(response["Retry-After"]) == 900
    response = api.post(TOKEN_URL, {"username": "alice", "password": PASSWORD}, format="json")
    assert response.status_code == 429  # the right password too, while locked
    assert not ApiToken.objects.exists()

    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=15, seconds=1))  # the lock ran out
    assert api.post(TOKEN_URL, {"username": "alice", "password": PASSWORD}, format="json").status_code == 201
    assert not AccessAttempt.objects.exists()  # success clears the count


def test_lockout_is_per_username_and_address(make_user) -> None:
    make_user("viewer", username="bob")
    api = APIClient()
    for _ in range(3):
        api.post(TOKEN_URL, {"username": "bob", "password": "wrong"}, format="json", REMOTE_ADDR="10.0.0.1")
    assert (
        api.post(
            TOKEN_URL, {"username": "bob", "password": PASSWORD}, format="json", REMOTE_ADDR="10.0.0.1"
        ).status_code
        == 429
    )
    assert (
        api.post(
            TOKEN_URL, {"username": "bob", "password": PASSWORD}, format="json", REMOTE_ADDR="10.0.0.2"
        ).status_code
        == 201
    )


def test_deactivated_users_get_no_token_and_their_tokens_stop(make_user) -> None:
    user = make_user("operator", username="carol")
    api = APIClient()
    token = api.post(TOKEN_URL, {"username": "carol", "password": PASSWORD}, format="json").json()["token"]
    user.is_active = False
    user.save()
    assert api.post(TOKEN_URL, {"username": "carol", "password": PASSWORD}, format="json").status_code == 401
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert api.get("/api/v1/topics").status_code == 401


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"username": "x"}, "password"),
        ({"password": "x"}, "username"),
        ({"username": 1, "password": "x"}, "username"),
        ({"username": "x", "password": "y", "remember": True}, "remember"),
    ],
)
def test_token_request_validation(body, field) -> None:
    response = APIClient().post(TOKEN_URL, body, format="json")
    assert response.status_code == 400 and field in response.json()["fields"]


def test_delete_revokes_the_calling_token(make_user) -> None:
    make_user("viewer", username="dave")
    api = APIClient()
    token = api.post(TOKEN_URL, {"username": "dave", "password": PASSWORD}, format="json").json()["token"]
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    response = api.delete(TOKEN_URL)
    assert response.status_code == 200 and response.json()["active"] is False
    assert api.get("/api/v1/auth/whoami").status_code == 401
    assert APIClient().delete(TOKEN_URL).status_code == 401


def test_a_stale_authorization_header_does_not_block_getting_a_token(make_user) -> None:
    make_user("viewer", username="erin")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION="Token gty_revoked")
    assert api.post(TOKEN_URL, {"username": "erin", "password": PASSWORD}, format="json").status_code == 201


# -- the console login ------------------------------------------------------------------------------


def test_console_login_locks_after_repeated_failures(client, make_user) -> None:
    make_user("viewer", username="frank")
    for _ in range(2):
        page = client.post("/login/", {"username": "frank", "password": "wrong"})
        assert page.status_code == 200
        assert "Your username and password did not match" in page.content.decode()
    page = client.post("/login/", {"username": "frank", "password": "wrong"})
    assert page.status_code == 429 and "Login is locked; try again in 15 minutes." in page.content.decode()
    page = client.post("/login/", {"username": "frank", "password": PASSWORD})
    assert page.status_code == 429 and "_auth_user_id" not in client.session
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=15, seconds=1))  # the lock ran out
    response = client.post("/login/", {"username": "frank", "password": PASSWORD})
    assert response.status_code == 302 and response["Location"] == "/"


def test_the_token_endpoint_and_the_console_share_the_count(client, make_user) -> None:
    make_user("viewer", username="gina")
    api = APIClient()
    for _ in range(2):
        api.post(TOKEN_URL, {"username": "gina", "password": "wrong"}, format="json")
    page = client.post("/login/", {"username": "gina", "password": "wrong"})
    assert page.status_code == 429


def test_console_login_needs_csrf() -> None:
    from django.test import Client

    response = Client(enforce_csrf_checks=True).post("/login/", {"username": "x", "password": "y"})
    assert response.status_code == 403


def test_session_api_writes_need_the_csrf_token(make_user, session_cluster, mq_settings) -> None:
    from django.test import Client

    mq_settings(session_cluster.namesrv_addr)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(make_user("operator"))
    response = browser.post(
        "/api/v1/topics", {"name": "CsrfT", "cluster": session_cluster.cluster}, content_type="application/json"
    )
    assert response.status_code == 403 and "CSRF" in response.json()["detail"]


def test_old_failures_do_not_count_towards_a_lock(make_user) -> None:
    make_user("viewer", username="hank")
    api = APIClient()
    for _ in range(2):
        api.post(TOKEN_URL, {"username": "hank", "password": "wrong"}, format="json")
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    assert api.post(TOKEN_URL, {"username": "hank", "password": "wrong"}, format="json").status_code == 401
    assert AccessAttempt.objects.get().failures_since_start == 1
