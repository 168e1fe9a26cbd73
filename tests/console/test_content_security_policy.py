"""The Content-Security-Policy header on every response, and pages that need nothing it refuses:
no inline script, event-handler attribute, ``javascript:`` URL, inline style or foreign origin.

Every URL the resolver knows (tests/console/test_access_sweep.all_urls) is fetched as an admin;
each HTML page is checked, whatever its status (error pages too).
"""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders

from tests.console.test_access_sweep import all_urls

pytestmark = pytest.mark.django_db

INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I)
HANDLER_ATTR = re.compile(r"<[^>]*\son[a-z]+\s*=", re.I)
INLINE_STYLE = re.compile(r"<style\b|<[^>]*\sstyle\s*=", re.I)


def test_the_policy_allows_only_our_own_scripts_and_styles() -> None:
    policy = dict(part.strip().split(" ", 1) for part in settings.CONTENT_SECURITY_POLICY.split(";"))
    assert policy["script-src"] == "'self'" and policy["style-src"] == "'self'" and policy["default-src"] == "'self'"
    assert policy["object-src"] == "'none'" and policy["frame-ancestors"] == "'none'"


def test_every_page_has_the_header_and_nothing_inline(client, make_user, console_cluster, topic) -> None:
    client.force_login(make_user("admin", username="csp-admin"))
    checked = []
    for url in all_urls() + ["/login/", "/no-such-page/", "/api/v1/docs", f"/topics/{topic}/"]:
        response = client.get(url)
        assert response["Content-Security-Policy"] == settings.CONTENT_SECURITY_POLICY, url
        if "text/html" not in response.get("Content-Type", "") or response.status_code in (301, 302):
            continue
        html = response.content.decode()
        assert not INLINE_SCRIPT.search(html), (url, INLINE_SCRIPT.search(html).group(0))
        assert not HANDLER_ATTR.search(html), (url, HANDLER_ATTR.search(html).group(0))
        assert not INLINE_STYLE.search(html), (url, INLINE_STYLE.search(html).group(0))
        assert "javascript:" not in html, url
        for src in re.findall(r"""<(?:script|link)[^>]*(?:src|href)=["']([^"']+)["']""", html):
            assert src.startswith("/"), (url, src)  # our own origin only
            if src.startswith("/static/"):
                assert finders.find(src.removeprefix("/static/").split("?")[0]), (url, src)
        checked.append(url)
    assert {
        "/",
        "/topics/",
        "/groups/",
        "/messages/",
        "/dashboards/",
        "/audit/",
        "/tokens/",
        "/login/",
        "/api/v1/docs",
        f"/topics/{topic}/",
    } <= set(checked)


def test_the_api_answers_carry_it_too(api_client_as) -> None:
    response = api_client_as("viewer").get("/api/v1/auth/whoami")
    assert response["Content-Security-Policy"] == settings.CONTENT_SECURITY_POLICY


def test_swagger_ui_loads_its_init_script_from_a_url(client, make_user) -> None:
    client.force_login(make_user("viewer"))
    page = client.get("/api/v1/docs").content.decode()
    init = re.findall(r'<script src="(/api/v1/docs\?[^"]*script[^"]*)"', page)
    assert init, page
    script = client.get(init[0].replace("&amp;", "&"))
    assert script.status_code == 200 and "SwaggerUIBundle" in script.content.decode()
