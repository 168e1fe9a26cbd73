"""An operator who picks 简体中文 works without English page text. These pages need only the
database, so the Django test client renders them with `Accept-Language: zh-CN` and checks their
headings and labels are Chinese, and that the same pages in English keep their English text."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from console.models import AuditEntry

pytestmark = pytest.mark.django_db


def page_text(path: str, language: str) -> str:
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    client.force_login(get_user_model().objects.get(username="ada"))
    response = client.get(path)
    assert response.status_code in (200, 404), (path, response.status_code)
    return response.content.decode()


def headings(html: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", h).strip() for h in re.findall(r"<h[12][^>]*>(.*?)</h[12]>", html, re.S)]


@pytest.mark.parametrize(
    ("path", "chinese", "english"),
    [
        ("/alerts/", ["告警规则", "新建规则", "告警历史"], ["Alert rules", "New rule", "Alert history"]),
        ("/alerts/events/", ["告警历史", "还没有告警。"], ["Alert history", "No alerts yet."]),
        ("/users/", ["用户", "新建用户", "最近登录"], ["Users", "New user", "Last login"]),
        ("/tokens/", ["API 令牌", "新建令牌", "还没有令牌。"], ["API tokens", "New token", "No tokens yet."]),
        ("/audit/", ["审计日志", "操作人", "结果"], ["Audit log", "Who", "Result"]),
        ("/namesrv-sets/", ["集群", "添加集群", "名称"], ["Clusters", "Add a cluster", "Name servers"]),
    ],
)
def test_pages_speak_chinese_to_a_zh_cn_browser_and_english_otherwise(make_user, path, chinese, english) -> None:
    make_user("admin", username="ada")
    AuditEntry.objects.create(
        actor="ada",
        actor_role="admin",
        source="console",
        action="topic.create",
        target_type="topic",
        target="orders",
        result="ok",
    )
    text = page_text(path, "zh-CN,zh;q=0.9")
    for word in chinese:
        assert word in text, (path, word)
    english_text = page_text(path, "en")
    for word in english:
        assert word in english_text and word not in text, (path, word)


def test_no_heading_of_the_chinese_pages_is_left_in_english(make_user) -> None:
    make_user("admin", username="ada")
    for path in ("/alerts/", "/alerts/events/", "/users/", "/tokens/", "/audit/", "/namesrv-sets/", "/no-such-page/"):
        for heading in headings(page_text(path, "zh-CN")):
            assert not re.search(r"\b(?!API\b|TLS\b)[A-Z][a-z]+ ?[a-z]*", heading), (path, heading)


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        ("/alerts/", {"Broker", "NameServer", "Webhook", "URL", "JSON", "text", "Slack", "Mattermost", "webhook"}),
        ("/alerts/events/", set()),
        ("/tokens/", {"API", "ID"}),
        ("/account/password/", {"API", "UTC", "IANA", "Asia", "Shanghai", "REST", "Gantry"}),
    ],
)
def test_a_whole_chinese_page_has_no_english_words_but_names(make_user, path, allowed) -> None:
    make_user("admin", username="ada")
    main = re.search(r"<main.*?</main>", page_text(path, "zh-CN"), re.S).group(0)
    text = re.sub(
        r"<script.*?</script>|<option[^>]*>[^<]*</option>|<code[^>]*>.*?</code>|<[^>]+>", " ", main, flags=re.S
    )
    english = set(re.findall(r"[A-Za-z]{2,}", text)) - allowed - {"ada"}
    assert not english, (path, sorted(english))
