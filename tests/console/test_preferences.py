"""Per-user time zone and language: the account page saves a zoneinfo name (a bad one is
refused on its field and nothing is saved); pages then show times in that zone with the zone named;
the REST API stays UTC and English; Chinese is picked by the switcher, the saved preference or the
browser's Accept-Language."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from console.models import AuditEntry, UserPreference

pytestmark = pytest.mark.django_db

NOON_UTC = datetime(2024, 5, 1, 12, 0, 0, tzinfo=timezone.utc)


def signed_in(username: str, **headers) -> Client:
    client = Client(**headers)
    client.force_login(get_user_model().objects.get(username=username))
    return client


def saved(username: str) -> tuple[str, str] | None:
    row = UserPreference.objects.filter(user__username=username).first()
    return (row.time_zone, row.language) if row else None


def an_audit_entry_at_noon_utc() -> None:
    AuditEntry.objects.create(
        created_at=NOON_UTC,
        actor="ada",
        actor_role="admin",
        source="console",
        action="topic.create",
        target_type="topic",
        target="orders",
        result="ok",
    )


def test_the_account_page_saves_a_time_zone_and_language(make_user) -> None:
    make_user("viewer", username="vera")
    page = signed_in("vera")
    form = page.get("/account/password/").content.decode()
    assert 'data-testid="preferences-form"' in form and '<option value="Asia/Shanghai">' in form
    response = page.post("/account/preferences/", {"time_zone": "Asia/Shanghai", "language": "zh-hans"}, follow=True)
    assert response.status_code == 200 and "偏好设置已保存" in response.content.decode()
    assert saved("vera") == ("Asia/Shanghai", "zh-hans")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"time_zone": "Mars/Olympus_Mons", "language": ""}, "time_zone"),
        ({"time_zone": "../../etc/passwd", "language": ""}, "time_zone"),
        ({"time_zone": "Asia/Shanghai", "language": "klingon"}, "language"),
    ],
)
def test_a_bad_preference_is_refused_on_its_field_and_nothing_is_saved(make_user, body, field) -> None:
    make_user("viewer", username="vera")
    page = signed_in("vera")
    response = page.post("/account/preferences/", body)
    text = response.content.decode()
    assert response.status_code == 400 and f'data-testid="error-{field}"' in text, text
    assert saved("vera") is None


def test_a_page_in_asia_shanghai_shows_times_eight_hours_ahead_and_names_the_zone(make_user) -> None:
    make_user("admin", username="ada")
    an_audit_entry_at_noon_utc()
    page = signed_in("ada")
    assert "2024-05-01 12:00:00 UTC" in page.get("/audit/").content.decode()  # nothing chosen: UTC, said so
    page.post("/account/preferences/", {"time_zone": "Asia/Shanghai", "language": ""})
    text = page.get("/audit/").content.decode()
    assert "2024-05-01 20:00:00 CST (UTC+08:00)" in text and "12:00:00" not in text
    other = signed_in("ada")  # the preference is the user's, not the session's
    assert "2024-05-01 20:00:00 CST (UTC+08:00)" in other.get("/audit/").content.decode()


def test_the_rest_api_stays_utc_and_english_whatever_the_user_chose(make_user) -> None:
    make_user("admin", username="ada")
    an_audit_entry_at_noon_utc()
    page = signed_in("ada", HTTP_ACCEPT_LANGUAGE="zh-CN")
    page.post("/account/preferences/", {"time_zone": "Asia/Shanghai", "language": "zh-hans"})
    body = page.get("/api/v1/audit-log/").json()
    assert [e["created_at"] for e in body["results"] if e["target"] == "orders"] == ["2024-05-01T12:00:00Z"]
    refused = page.get("/api/v1/audit-log/?since=yesterday")
    assert (
        refused.status_code == 400 and "Datetime has wrong format" in refused.content.decode()
    )  # DRF has Chinese; the API stays English
    assert "20:00:00" in page.get("/audit/").content.decode()  # while pages follow the choice


def test_accept_language_zh_cn_gives_a_new_visitor_chinese() -> None:
    text = Client(HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9,en;q=0.5").get("/login/").content.decode()
    assert '<html lang="zh-hans">' in text and "<h1>登录</h1>" in text and "用户名" in text
    assert "<h1>Log in</h1>" in Client(HTTP_ACCEPT_LANGUAGE="en-US").get("/login/").content.decode()


def test_the_switcher_remembers_the_choice_per_session_and_per_user(make_user) -> None:
    make_user("operator", username="otto")
    page = signed_in("otto")
    response = page.post("/i18n/language/", {"language": "zh-hans", "next": "/audit/"})
    assert response.status_code == 302 and response["Location"] == "/audit/"
    assert "审计日志" in page.get("/audit/").content.decode()
    assert saved("otto") == ("", "zh-hans")
    fresh = Client(HTTP_ACCEPT_LANGUAGE="en")  # another browser, no cookie: the saved choice follows the user
    fresh.force_login(get_user_model().objects.get(username="otto"))
    assert "审计日志" in fresh.get("/audit/").content.decode()
    assert page.post("/i18n/language/", {"language": "xx", "next": "/"}).status_code == 400
    page.post("/i18n/language/", {"language": "en", "next": "/audit/"})
    assert "Audit log" in page.get("/audit/").content.decode() and saved("otto") == ("", "en")


def test_clearing_the_language_on_the_account_page_goes_back_to_the_browsers(make_user) -> None:
    make_user("viewer", username="vera")
    page = signed_in("vera", HTTP_ACCEPT_LANGUAGE="en-US")
    page.post("/i18n/language/", {"language": "zh-hans", "next": "/audit/"})
    assert "审计日志" in page.get("/audit/").content.decode()
    page.post("/account/preferences/", {"time_zone": "", "language": ""})
    assert "Audit log" in page.get("/audit/").content.decode() and saved("vera") == ("", "")


def test_the_switcher_works_before_login_for_the_session() -> None:
    visitor = Client(HTTP_ACCEPT_LANGUAGE="en")
    visitor.get("/login/")
    visitor.post("/i18n/language/", {"language": "zh-hans", "next": "/login/"})
    assert "<h1>登录</h1>" in visitor.get("/login/").content.decode()
