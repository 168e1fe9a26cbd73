"""Chinese and the viewer's time zone in a browser: the header's switcher turns the console
Chinese (the choice follows the user to its next page and back to English); the account page saves
Asia/Shanghai and the audit log then shows a noon-UTC entry at 20:00 with the zone named."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from console.models import AuditEntry
from tests.e2e.conftest import log_in
from tests.fixtures.console import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_switching_to_chinese_and_to_asia_shanghai(page, live_server, make_user, console_cluster, screenshot) -> None:
    make_user("admin", username="ada", password=PASSWORD)
    AuditEntry.objects.create(
        created_at=datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc),
        actor="ada",
        actor_role="admin",
        source="console",
        action="topic.create",
        target_type="topic",
        target="orders",
        result="ok",
    )
    log_in(page, live_server.url, "ada", PASSWORD)
    nav = page.locator("header nav")
    assert "Topics" in nav.inner_text()
    page.click("[data-testid=language-zh-hans]")
    page.locator("header nav a", has_text="主题").wait_for()
    for label in ("概览", "主题", "消费组", "生产者", "消息", "审计日志"):  # the audit log under "More"
        assert label in nav.text_content(), label
    assert page.get_attribute("html", "lang") == "zh-hans"
    screenshot("chinese")

    page.click("[data-testid=password-link]")
    page.fill("input[name=time_zone]", "Asia/Shanghai")
    page.click("[data-testid=preferences-form] button[type=submit]")
    page.locator("[data-testid=messages]", has_text="偏好设置已保存").wait_for()
    page.goto(f"{live_server.url}/audit/")
    assert "2024-05-01 20:00:00 CST (UTC+08:00)" in page.locator("main").inner_text()
    assert "审计日志" in nav.text_content()  # the next page is still Chinese
    screenshot("shanghai")

    page.click("[data-testid=language-en]")
    page.locator("header nav a", has_text="Topics").wait_for()
    assert "2024-05-01 20:00:00 CST (UTC+08:00)" in page.locator("main").inner_text()  # the zone stays
