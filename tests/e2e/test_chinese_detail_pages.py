"""An operator who picks 简体中文 in the header reads the detail pages in Chinese: topic detail,
consumer-group detail, its dead letters and the alert rules show Chinese headings, and no heading is
left in English (names in <code>, "Broker" and "TPS" aside, as rocketmq-dashboard keeps them)."""

from __future__ import annotations

import re

import pytest

from tests.e2e.conftest import log_in
from tests.fixtures.console import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

HEADINGS_WITHOUT_NAMES = """() => [...document.querySelectorAll('main h1, main h2')].map(h => {
    const c = h.cloneNode(true); c.querySelectorAll('code, .tag').forEach(e => e.remove()); return c.innerText.trim(); })"""
ENGLISH_WORD = re.compile(r"\b(?!Broker\b|TPS\b|API\b)[A-Za-z]{3,}\b")


def chinese_headings(page) -> list[str]:
    headings = page.evaluate(HEADINGS_WITHOUT_NAMES)
    assert headings, page.url
    for heading in headings:
        assert re.search(r"[\u4e00-\u9fff]", heading) and not ENGLISH_WORD.search(heading), (page.url, heading)
    return headings


def test_detail_pages_in_chinese(page, live_server, make_user, topic, group, members, screenshot) -> None:
    members(group, topic, "m1")  # the group exists: one member online
    make_user("operator", username="lin", password=PASSWORD)
    log_in(page, live_server.url, "lin", PASSWORD)
    page.click("[data-testid=language-zh-hans]")
    page.locator("header nav a", has_text="主题").wait_for()

    page.goto(f"{live_server.url}/topics/{topic}/")
    headings = chinese_headings(page)
    assert "主题" in headings[0] and "各 Broker 的队列" in headings and "路由" in headings
    assert page.locator("[data-testid=topic-name]").inner_text() == topic
    assert "发送测试消息" in headings and "删除" in headings
    screenshot("topic")

    page.goto(f"{live_server.url}/groups/{group}/")
    headings = chinese_headings(page)
    assert headings[0] == "消费组" and "成员" in headings and "订阅关系" in headings and "重平衡" in headings
    screenshot("group")

    page.goto(f"{live_server.url}/groups/{group}/dlq/")
    headings = chinese_headings(page)
    assert headings[0].endswith("死信") and "导出" in headings
    assert "该消费组还没有" in page.locator("[data-testid=dead-letters]").inner_text()
    assert "Gantry 的消费者" in page.locator("[data-testid=dlq-explained]").inner_text()
    screenshot("dead-letters")

    page.goto(f"{live_server.url}/alerts/")
    headings = chinese_headings(page)
    assert "告警规则" in headings[0] and "新建规则" in headings
    screenshot("alerts")

    page.click("[data-testid=language-en]")
    page.locator("header nav a", has_text="Topics").wait_for()
    assert page.locator("main h1").first.inner_text() == "Alert rules"
