"""The header's menu by keyboard: Tab reaches "More", Enter opens it, Tab walks its links, Escape closes it
and leaves the focus on "More"; a click elsewhere closes it too. At 1280 px the bar is one row."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import log_in
from tests.fixtures.console import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_more_opens_walks_and_closes_by_keyboard(
    browser, live_server, make_user, console_cluster, artifacts_dir, request
) -> None:
    make_user("admin", username="kay", password=PASSWORD)
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        log_in(page, live_server.url, "kay", PASSWORD)
        more = page.locator("[data-testid=menu-more]")
        tops = page.evaluate(
            "() => [...document.querySelectorAll('header nav > ul > li > a, header nav > ul > li > details > summary')].map(e => e.getBoundingClientRect().top)"
        )
        assert len(tops) == 8 and len(set(tops)) == 1, tops  # seven entries and "More", one row

        page.focus("[data-testid=menu-producers]")
        for _ in range(3):  # Messages, Dashboards, Alerts, then More
            page.keyboard.press("Tab")
        page.keyboard.press("Tab")
        assert page.evaluate("() => document.activeElement.dataset.testid") == "menu-more"
        page.keyboard.press("Enter")
        assert page.locator("details[data-menu]").get_attribute("open") is not None
        page.keyboard.press("Tab")
        assert page.evaluate("() => document.activeElement.dataset.testid") == "menu-allocation"
        page.screenshot(path=str(artifacts_dir / f"{request.node.name}-open.png"))
        page.keyboard.press("Escape")
        assert page.locator("details[data-menu]").get_attribute("open") is None
        assert page.evaluate("() => document.activeElement.dataset.testid") == "menu-more"

        more.click()
        page.click("main h1")
        assert page.locator("details[data-menu]").get_attribute("open") is None  # a click outside closes it
        more.click()
        page.click("[data-testid=menu-rebalance]")
        page.wait_for_url(f"{live_server.url}/rebalance-jobs/")
        assert page.locator("header nav [aria-current=page]").all_text_contents() == ["Rebalance"]  # one, under "More"
    finally:
        context.close()
