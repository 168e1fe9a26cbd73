"""Users and API tokens, for admins: /api/v1/users, /api/v1/tokens and the /users/, /tokens/ pages."""

from __future__ import annotations

import pytest

from console.models import AuditEntry
from console.roles import Role, role_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_api(api_client_as):
    return api_client_as("admin")


def test_admin_creates_lists_and_changes_users(admin_api) -> None:
    response = admin_api.post("/api/v1/users", {"username": "olga", "role": "operator"}, format="json")
    assert response.status_code == 201, response.content
    created = response.json()
    assert created["role"] == "operator" and len(created["password"]) >= 20  # generated, shown once
    assert "password" not in admin_api.get("/api/v1/users/olga").json()

    users = admin_api.get("/api/v1/users").json()
    assert {"olga", "api-admin"} <= {u["username"] for u in users["results"]}

    response = admin_api.patch("/api/v1/users/olga", {"role": "viewer"}, format="json")
    assert response.status_code == 200 and response.json()["role"] == "viewer"
    response = admin_api.patch("/api/v1/users/olga", {"is_active": False}, format="json")
    assert response.json()["is_active"] is False

    actions = list(AuditEntry.objects.filter(target="olga").order_by("id").values_list("action", "result"))
    assert actions == [("user.create", "ok"), ("user.update", "ok"), ("user.update", "ok")]
    last = AuditEntry.objects.filter(target="olga").latest("id")
    assert last.before == {"role": "viewer", "is_active": True} and last.after == {"role": "viewer", "is_active": False}


def test_user_input_is_checked(admin_api) -> None:
    cases = [
        ({"username": "bad name!", "role": "viewer"}, "username"),
        ({"username": "pat", "role": "root"}, "role"),
        ({"username": "pat", "password": "short"}, "password"),
        ({"username": "pat", "extra": 1}, "extra"),
    ]
    for body, field in cases:
        response = admin_api.post("/api/v1/users", body, format="json")
        assert response.status_code == 400, body
        assert field in response.json()["fields"], response.json()
    admin_api.post("/api/v1/users", {"username": "pat"}, format="json")
    assert admin_api.post("/api/v1/users", {"username": "PAT"}, format="json").status_code == 409
    assert admin_api.patch("/api/v1/users/pat", {}, format="json").status_code == 400
    assert admin_api.patch("/api/v1/users/nobody", {"role": "admin"}, format="json").status_code == 404


def test_a_username_is_created_as_django_stores_it(admin_api) -> None:
    """Django stores usernames NFKC-normalized ("\ufb01" is "fi"): the answer names the stored user, not a 404."""
    response = admin_api.post("/api/v1/users", {"username": "\ufb01ona"}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["username"] == "fiona"
    assert admin_api.get("/api/v1/users/fiona").status_code == 200


def test_the_last_admin_cannot_be_demoted_or_deactivated(admin_api) -> None:
    for body in ({"role": "operator"}, {"is_active": False}):
        response = admin_api.patch("/api/v1/users/api-admin", body, format="json")
        assert response.status_code == 409 and "no active admin" in response.json()["detail"]
    assert AuditEntry.objects.filter(action="user.update", result="failed").count() == 2


@pytest.mark.parametrize("role", ["viewer", "operator"])
def test_only_admins_manage_users_and_tokens(api_client_as, role) -> None:
    api = api_client_as(role)
    for method, url, body in [
        ("get", "/api/v1/users", None),
        ("post", "/api/v1/users", {"username": "z"}),
        ("get", "/api/v1/tokens", None),
        ("post", "/api/v1/tokens", {"username": "z"}),
        ("delete", "/api/v1/tokens/1", None),
        ("patch", "/api/v1/users/z", {"role": "admin"}),
    ]:
        response = getattr(api, method)(url, body, format="json")
        assert response.status_code == 403, (method, url)
        assert "admin" in response.json()["detail"]


def test_admin_creates_and_revokes_tokens_for_others(admin_api, make_user) -> None:
    make_user("viewer", username="robot")
    response = admin_api.post("/api/v1/tokens", {"username": "robot", "name": "nightly"}, format="json")
    assert response.status_code == 201
    token, token_id = response.json()["token"], response.json()["id"]
    listed = admin_api.get("/api/v1/tokens", {"username": "robot"}).json()["results"]
    assert (
        [t["id"] for t in listed] == [token_id] and "token" not in listed[0] and listed[0]["created_by"] == "api-admin"
    )

    from rest_framework.test import APIClient

    robot = APIClient()
    robot.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert robot.get("/api/v1/auth/whoami").json()["username"] == "robot"
    assert admin_api.delete(f"/api/v1/tokens/{token_id}").json()["active"] is False
    assert robot.get("/api/v1/auth/whoami").status_code == 401
    assert admin_api.get("/api/v1/tokens", {"active": "true", "username": "robot"}).json()["count"] == 0
    assert admin_api.delete("/api/v1/tokens/999999").status_code == 404
    assert admin_api.delete("/api/v1/tokens/abc").json()["fields"] == {"id": ["must be an integer."]}
    assert admin_api.post("/api/v1/tokens", {"username": "nobody"}, format="json").status_code == 404
    assert AuditEntry.objects.filter(action="token.revoke", target="robot", result="ok").exists()


# -- the pages --------------------------------------------------------------------------------------


@pytest.fixture
def admin_page(client, make_user):
    client.force_login(make_user("admin", username="boss"))
    return client


def test_users_page_creates_sets_role_and_deactivates(admin_page) -> None:
    page = admin_page.post("/users/", {"username": "nina", "role": "operator", "password": ""})
    assert page.status_code == 200
    text = page.content.decode()
    assert 'data-testid="created-user"' in text and "shown this once" in text
    from django.contrib.auth import get_user_model

    nina = get_user_model().objects.get(username="nina")
    assert role_of(nina) == Role.OPERATOR
    admin_page.post("/users/nina/change", {"role": "admin"})
    admin_page.post("/users/nina/change", {"is_active": "false", "confirm": "yes"})
    nina.refresh_from_db()
    assert not nina.is_active and nina.gantry_role.role == "admin"
    page = admin_page.post("/users/", {"username": "nina", "role": "viewer"})
    assert page.status_code == 400 and "user nina exists already" in page.content.decode()


def test_deactivate_asks_first_and_changes_nothing_until_confirmed(admin_page, make_user) -> None:
    from console.models import AuditEntry

    nina = make_user("operator", username="nina")
    asked = admin_page.post("/users/nina/change", {"is_active": "false"})
    text = asked.content.decode()
    assert asked.status_code == 200 and 'data-testid="confirm-deactivate"' in text and "Deactivate nina?" in text
    assert 'name="confirm" value="yes"' in text and 'href="/users/"' in text  # confirm, or cancel back to the list
    nina.refresh_from_db()
    assert nina.is_active and not AuditEntry.objects.filter(action="user.update", target="nina").exists()
    done = admin_page.post("/users/nina/change", {"is_active": "false", "confirm": "yes"})
    assert done.status_code == 302
    nina.refresh_from_db()
    assert not nina.is_active
    entry = AuditEntry.objects.get(action="user.update", target="nina")
    assert entry.result == "ok" and entry.actor == "boss"
    again = admin_page.post("/users/nina/change", {"is_active": "true"})  # activating needs no confirmation
    nina.refresh_from_db()
    assert again.status_code == 302 and nina.is_active


def test_tokens_page_shows_a_new_token_once_and_revokes(admin_page) -> None:
    page = admin_page.post("/tokens/", {"username": "boss", "name": "laptop"})
    text = page.content.decode()
    assert 'data-testid="created-token"' in text and "gty_" in text
    import re

    token = re.search(r'<code class="secret">(gty_[^<]+)</code>', text).group(1)
    again = admin_page.get("/tokens/").content.decode()
    assert token not in again and token[:12] in again
    from console.models import ApiToken

    row = ApiToken.objects.get(name="laptop")
    response = admin_page.post(f"/tokens/{row.pk}/revoke", follow=True)
    assert "revoked" in response.content.decode()
    row.refresh_from_db()
    assert row.revoked_at is not None


@pytest.mark.parametrize("role", ["viewer", "operator"])
def test_users_and_tokens_pages_are_for_admins(client, make_user, role) -> None:
    client.force_login(make_user(role))
    for url in ("/users/", "/tokens/"):
        assert client.get(url).status_code == 403
    assert client.post("/users/", {"username": "x", "role": "admin"}).status_code == 403
    nav = client.get("/audit/").content.decode()
    assert 'href="/users/"' not in nav and 'href="/tokens/"' not in nav


# -- token expiry (GANTRY_TOKEN_TTL_DAYS) ------------------------------------------------------------


def test_tokens_expire_after_the_ttl_shown_in_the_answer_and_the_page(
    admin_api, admin_page, make_user, settings
) -> None:
    from datetime import datetime, timedelta

    from django.utils import timezone
    from rest_framework.test import APIClient

    from console.models import ApiToken

    make_user("viewer", username="cron")
    created = admin_api.post("/api/v1/tokens", {"username": "cron", "name": "default"}, format="json").json()
    lives = datetime.fromisoformat(created["expires_at"]) - datetime.fromisoformat(created["created_at"])
    assert lives == timedelta(days=90) and created["active"] is True
    settings.GANTRY_TOKEN_TTL_DAYS = 7
    short = admin_api.post("/api/v1/tokens", {"username": "cron", "name": "short"}, format="json").json()
    assert datetime.fromisoformat(short["expires_at"]) - datetime.fromisoformat(short["created_at"]) == timedelta(
        days=7
    )
    page = admin_page.get("/tokens/").content.decode()
    expires = ApiToken.objects.get(pk=short["id"]).expires_at
    assert (
        f'<td data-testid="expires">{timezone.localtime(expires):%Y-%m-%d %H:%M:%S} UTC</td>' in page
    )  # no zone chosen: UTC, named

    cron = APIClient()
    cron.credentials(HTTP_AUTHORIZATION=f"Token {short['token']}")
    assert cron.get("/api/v1/auth/whoami").status_code == 200
    ApiToken.objects.filter(pk=short["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = cron.get("/api/v1/auth/whoami")
    assert response.status_code == 401 and response.json()["detail"].startswith("This token expired at ")
    assert "create a new one" in response.json()["detail"]
    listed = {t["id"]: t for t in admin_api.get("/api/v1/tokens", {"username": "cron"}).json()["results"]}
    assert listed[short["id"]]["active"] is False and listed[created["id"]]["active"] is True
    assert [
        t["id"] for t in admin_api.get("/api/v1/tokens", {"username": "cron", "active": "true"}).json()["results"]
    ] == [created["id"]]
    assert admin_api.get("/api/v1/users/cron").json()["active_tokens"] == 1
    assert "expired" in admin_page.get("/tokens/").content.decode()
