"""Every URL the resolver knows, called anonymously and as a viewer: only the allowed list is open.

Anonymous: API URLs answer 401, pages redirect to the login page. Viewer: every method that
changes something answers 403, and so does reading the admin-only URLs; the previews that only
compute (VIEWER_POSTS) answer a viewer's POST. A new URL is covered without touching this file;
opening one up means adding it to OPEN below.
"""

from __future__ import annotations

import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

pytestmark = pytest.mark.django_db

METHODS = ("get", "post", "put", "patch", "delete")
# (path regex, methods) open to anyone
OPEN = [
    (r"^/(health|healthz|readyz)$", set(METHODS)),  # probes: GET only; other methods 405
    (r"^/login/$", set(METHODS)),
    (r"^/logout/$", set(METHODS)),
    (r"^/api/v1/auth/token$", {"post"}),  # username and password in, token out
    (
        r"^/i18n/language/$",
        set(METHODS),
    ),  # the language switch, before login too (POST only; tests/console/test_preferences.py)
]
TOKEN_ONLY = [r"^/api/v1/auth/token$"]  # the rest of it wants the token itself: a session gets 401
ADMIN_ONLY = [
    r"^/users/",
    r"^/tokens/",
    r"^/api/v1/users",
    r"^/api/v1/tokens",
    r"^/namesrv-sets/",
]  # /namesrv-sets/: the Clusters page
OPERATOR_PAGES = [
    r"^/topics/new$",
    r"^/topics/[^/]+/edit$",
    r"^/subscription-groups/new$",
    r"^/subscription-groups/[^/]+/(edit|delete)$",
    r"^/messages/[^/]+/resend$",
]  # forms that only lead to changes (a message's resend: its confirm step)
VIEWER_POSTS = [
    r"^/api/v1/allocation/(preview|compare)$",  # POSTs that change nothing (previews): viewers may
    r"^/api/v1/metadata/dry-run$",  # an import's dry run writes nothing
    r"^/api/v1/auth/password$",
    r"^/account/password/$",  # and a user's own password (console.passwords)
    r"^/account/preferences/$",
]  # and own time zone and language (console.preferences)
SELF_SERVICE = [
    r"^/api/v1/auth/password$",
    r"^/account/password/$",
    r"^/account/preferences/$",
]  # every role may write here: other methods are 405
SAMPLE = {
    "name": "SweepTopic",
    "username": "someone",
    "pk": "1",
    "token_id": "1",
    "format": "json",
    "msg_id": "SweepMsg",
}


def _walk(patterns, prefix: str = ""):
    for p in patterns:
        regex = prefix + p.pattern.regex.pattern.lstrip("^")
        if isinstance(p, URLResolver):
            yield from _walk(p.url_patterns, regex)
        elif isinstance(p, URLPattern):
            yield regex.rstrip("$").replace("\\Z", "")


def _concrete(regex: str) -> str:
    """A URL matching the route regex, with sample values for its parameters."""
    path = re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda m: SAMPLE.get(m.group(1), "x"), regex)
    path = re.sub(r"<(?:\w+:)?(\w+)>", lambda m: SAMPLE.get(m.group(1), "x"), path)
    path = path.replace("/?", "").replace("\\.", ".").replace("\\", "")
    return "/" + path


def all_urls() -> list[str]:
    urls = sorted({_concrete(r) for r in _walk(get_resolver().url_patterns)})
    return [u for u in urls if "(" not in u and "." not in u.rsplit("/", 1)[-1]]


def _open(url: str, method: str, table) -> bool:
    return any(re.match(rx, url) and method in methods for rx, methods in table)


def test_the_sweep_sees_every_part_of_the_site() -> None:
    urls = all_urls()
    for expected in (
        "/",
        "/topics/",
        "/topics/new",
        "/topics/SweepTopic/",
        "/audit/",
        "/users/",
        "/tokens/",
        "/api/v1/topics",
        "/api/v1/topics/SweepTopic",
        "/api/v1/topics/SweepTopic/status",
        "/api/v1/clusters",
        "/api/v1/brokers",
        "/api/v1/audit-log",
        "/api/v1/users",
        "/api/v1/schema",
        "/api/v1/docs",
        "/api/v1/auth/token",
        "/groups/",
        "/groups/SweepTopic/",
        "/groups/SweepTopic/reset-offset",
        "/allocation/",
        "/messages/",
        "/messages/SweepMsg/",
        "/topics/SweepTopic/shrink",
        "/api/v1/groups",
        "/api/v1/groups/SweepTopic",
        "/api/v1/groups/SweepTopic/progress",
        "/api/v1/groups/SweepTopic/reset-offset",
        "/api/v1/groups/SweepTopic/allocation",
        "/api/v1/allocation/preview",
        "/api/v1/allocation/compare",
        "/api/v1/topics/SweepTopic/shrink",
        "/api/v1/messages",
        "/api/v1/messages/SweepMsg",
    ):
        assert expected in urls, (expected, urls)


@pytest.mark.parametrize("url", all_urls())
def test_anonymous_gets_401_or_the_login_page(client, url, mq_settings, unused_addr) -> None:
    mq_settings(unused_addr)  # nothing may reach the cluster anyway
    for method in METHODS:
        if _open(url, method, OPEN):
            continue
        response = getattr(client, method)(url)
        if url.startswith("/api/") or url == "/metrics":  # machine endpoints (a scraper) get 401, not the login page
            assert response.status_code == 401, (method, url, response.status_code)
        else:
            assert response.status_code == 302, (method, url, response.status_code)
            assert response["Location"].startswith("/login/?next="), (method, url)


@pytest.mark.parametrize("url", all_urls())
def test_viewer_may_read_but_not_change(client, make_user, url, mq_settings, unused_addr) -> None:
    mq_settings(unused_addr)
    client.force_login(make_user("viewer"))
    not_for_viewers = any(re.match(rx, url) for rx in ADMIN_ONLY + OPERATOR_PAGES)
    for method in METHODS:
        if _open(url, method, OPEN):
            continue
        response = getattr(client, method)(url, content_type="application/json")
        if any(re.match(rx, url) for rx in TOKEN_ONLY):
            assert response.status_code == 401, (method, url, response.status_code)
        elif (method == "get" and not not_for_viewers) or (
            method == "post" and any(re.match(rx, url) for rx in VIEWER_POSTS)
        ):
            assert response.status_code not in (401, 403), (method, url, response.status_code)
        elif any(re.match(rx, url) for rx in SELF_SERVICE):
            assert response.status_code == 405, (method, url, response.status_code)
        else:
            assert response.status_code == 403, (method, url, response.status_code)
