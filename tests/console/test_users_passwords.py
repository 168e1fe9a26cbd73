"""Passwords: a user changes its own (page /account/password/ and POST /api/v1/auth/password), an
admin sets another's (users page and POST /api/v1/users/{username}/password). Refusals name the
field and change nothing; the change is audited and ends the user's other console sessions."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from console.models import AuditEntry
from tests.fixtures.console import PASSWORD

pytestmark = pytest.mark.django_db

NEW = "a-fresh-long-passphrase-7"


def signed_in(username: str) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.get(username=username))  # a session of its own
    return client


def has_password(username: str, password: str) -> bool:
    return get_user_model().objects.get(username=username).check_password(password)


def still_signed_in(client: Client) -> bool:
    return client.get("/audit/").status_code == 200  # else a redirect to the login page


@pytest.mark.parametrize(
    ("body", "field", "reason"),
    [
        (
            {"current_password": "wrong-password-1", "new_password": NEW, "new_password2": NEW},
            "current_password",
            "not your current password",
        ),
        (
            {"current_password": PASSWORD, "new_password": NEW, "new_password2": NEW + "x"},
            "new_password2",
            "two new passwords differ",
        ),
        (
            {"current_password": PASSWORD, "new_password": "short-1", "new_password2": "short-1"},
            "new_password",
            "too short",
        ),
        (
            {"current_password": PASSWORD, "new_password": "password1234", "new_password2": "password1234"},
            "new_password",
            "too common",
        ),
        (
            {"current_password": PASSWORD, "new_password": PASSWORD, "new_password2": PASSWORD},
            "new_password",
            "is the current one",
        ),
    ],
)
def test_own_password_refusals_name_the_field_and_change_nothing(make_user, body, field, reason) -> None:
    make_user("viewer", username="vera")
    page = signed_in("vera")
    response = page.post("/account/password/", body)
    text = response.content.decode()
    assert response.status_code == 400 and f'data-testid="error-{field}"' in text and reason in text, text
    assert has_password("vera", PASSWORD)  # unchanged
    assert still_signed_in(page)


def test_own_password_change_keeps_this_session_ends_the_others_and_is_audited(make_user) -> None:
    make_user("viewer", username="vera")
    here, elsewhere = signed_in("vera"), signed_in("vera")
    page = here.get("/account/password/").content.decode()
    assert 'name="current_password"' in page and 'name="new_password2"' in page and "at least 12 characters" in page
    response = here.post(
        "/account/password/", {"current_password": PASSWORD, "new_password": NEW, "new_password2": NEW}, follow=True
    )
    assert response.status_code == 200 and "Your password is changed" in response.content.decode()
    assert still_signed_in(here) and not still_signed_in(elsewhere)
    assert has_password("vera", NEW) and not has_password("vera", PASSWORD)
    entry = AuditEntry.objects.filter(action="user.password_change").latest("id")
    assert (entry.actor, entry.target, entry.result) == ("vera", "vera", "ok")
    assert PASSWORD not in str(entry.after) and NEW not in str(entry.after)


def test_admin_sets_another_users_password_on_the_users_page(make_user) -> None:
    make_user("admin", username="ada")
    make_user("operator", username="otto")
    admin, otto = signed_in("ada"), signed_in("otto")
    assert 'action="/users/otto/password"' in admin.get("/users/").content.decode()

    refused = admin.post("/users/otto/password", {"new_password": "short-1"}, follow=True).content.decode()
    assert "Password of otto not set: New password: This password is too short" in refused
    assert has_password("otto", PASSWORD) and still_signed_in(otto)

    done = admin.post("/users/otto/password", {"new_password": NEW}, follow=True).content.decode()
    assert "Password of otto set" in done
    assert has_password("otto", NEW) and not still_signed_in(otto) and still_signed_in(admin)
    results = list(
        AuditEntry.objects.filter(action="user.password_reset", target="otto")
        .order_by("id")
        .values_list("actor", "result")
    )
    assert results == [("ada", "failed"), ("ada", "ok")]


def test_a_viewer_or_operator_cannot_set_another_users_password(make_user) -> None:
    make_user("admin", username="ada")
    for role in ("viewer", "operator"):
        make_user(role, username=f"{role}-x")
        assert signed_in(f"{role}-x").post("/users/ada/password", {"new_password": NEW}).status_code == 403
    assert has_password("ada", PASSWORD)


def test_api_own_password_change(api_client_as) -> None:
    client = api_client_as("viewer")
    response = client.post(
        "/api/v1/auth/password", {"current_password": "not-it-at-all", "new_password": NEW}, format="json"
    )
    assert response.status_code == 400 and list(response.json()["fields"]) == ["current_password"], response.json()
    response = client.post(
        "/api/v1/auth/password", {"current_password": PASSWORD, "new_password": "123456789012"}, format="json"
    )
    assert response.status_code == 400 and "entirely numeric" in response.json()["fields"]["new_password"][0]
    assert has_password("api-viewer", PASSWORD)

    response = client.post("/api/v1/auth/password", {"current_password": PASSWORD, "new_password": NEW}, format="json")
    assert response.status_code == 200 and response.json()["username"] == "api-viewer", response.content
    assert has_password("api-viewer", NEW)
    assert client.get("/api/v1/auth/whoami").status_code == 200  # the token keeps working
    assert AuditEntry.objects.filter(action="user.password_change", target="api-viewer", result="ok").count() == 1


def test_api_own_password_change_in_a_browser_session_keeps_it(make_user) -> None:
    make_user("viewer", username="vera")
    here, elsewhere = signed_in("vera"), signed_in("vera")
    response = here.post(
        "/api/v1/auth/password", {"current_password": PASSWORD, "new_password": NEW}, content_type="application/json"
    )
    assert response.status_code == 200, response.content
    assert here.get("/api/v1/auth/whoami").status_code == 200 and elsewhere.get("/api/v1/auth/whoami").status_code in (
        401,
        403,
    )


def test_api_admin_sets_a_password_a_viewer_may_not(api_client_as, make_user) -> None:
    make_user("operator", username="otto")
    otto = signed_in("otto")
    viewer = api_client_as("viewer")
    assert viewer.post("/api/v1/users/otto/password", {"new_password": NEW}, format="json").status_code == 403
    admin = api_client_as("admin")
    response = admin.post("/api/v1/users/otto/password", {"new_password": "987654321098"}, format="json")
    assert response.status_code == 400 and list(response.json()["fields"]) == ["new_password"], response.json()
    assert admin.post("/api/v1/users/nobody/password", {"new_password": NEW}, format="json").status_code == 404
    assert (
        admin.post("/api/v1/users/otto/password", {"password": NEW}, format="json").status_code == 400
    )  # unknown field
    assert has_password("otto", PASSWORD) and still_signed_in(otto)

    response = admin.post("/api/v1/users/otto/password", {"new_password": NEW}, format="json")
    assert response.status_code == 200 and response.json()["username"] == "otto", response.content
    assert has_password("otto", NEW) and not still_signed_in(otto)
    entry = AuditEntry.objects.filter(action="user.password_reset", target="otto", result="ok").get()
    assert entry.actor == "api-admin" and NEW not in str(entry.after)
