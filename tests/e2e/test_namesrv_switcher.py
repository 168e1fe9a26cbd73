"""Several clusters in a browser: an admin adds a second tier on the Clusters page, picks it in the
header's switcher on the topics page (the page stays), sees that tier's topics — and the page's own
links and a reload stay on it — then switches back to default."""

from __future__ import annotations

import uuid

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from brokers.engine.client.admin import BlockingMQAdminClient
from tests.brokers.engine.client._cluster import create_topic
from tests.e2e.conftest import log_in
from tests.fixtures.console import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _load_until(page, url: str, text: str, tries: int = 3) -> None:
    """Open ``url`` until ``text`` shows: on a loaded suite the console's 2 s admin timeout can make a
    page say a cluster did not answer, which is right, and a reload is what an operator does then."""
    for attempt in range(1, tries + 1):
        page.goto(url)
        try:
            page.wait_for_selector(f"text={text}", timeout=10_000)
            return
        except PlaywrightTimeout:
            if attempt == tries:
                raise AssertionError(
                    f"{text!r} not on {url} after {tries} loads:\n{page.inner_text('body')[:2000]}"
                ) from None


def test_the_header_switcher_scopes_the_console_to_one_tier(
    page, live_server, make_user, session_cluster, second_session_cluster, mq_settings, screenshot
) -> None:
    mq_settings(session_cluster.namesrv_addr)
    tag = uuid.uuid4().hex[:6]
    on_default, on_second = f"E2eTierA_{tag}", f"E2eTierB_{tag}"
    with BlockingMQAdminClient(session_cluster.namesrv_addr) as admin:
        create_topic(admin, session_cluster, on_default, queues=1)
    with BlockingMQAdminClient(second_session_cluster.namesrv_addr) as admin:
        create_topic(admin, second_session_cluster, on_second, queues=1)
    make_user("admin", username="tier-boss", password=PASSWORD)
    log_in(page, live_server.url, "tier-boss", PASSWORD)
    assert page.locator("[data-testid=namesrv-switcher]").count() == 0  # one tier: no switcher

    page.click("[data-testid=menu-more]")  # the Clusters page is under "More"
    page.click("[data-testid=menu-clusters]")
    page.wait_for_url(f"{live_server.url}/namesrv-sets/")
    form = page.locator("[data-testid=namesrv-set-form]")
    form.locator("input[name=name]").fill("second")
    form.locator("input[name=namesrv_addr]").fill(second_session_cluster.namesrv_addr)
    form.locator("[data-testid=namesrv-set-submit]").click()
    page.wait_for_selector("[data-testid=namesrv-sets] tr[data-namesrv-set=second]")

    _load_until(page, f"{live_server.url}/topics/?search=_{tag}", on_default)
    assert page.locator(f"text={on_second}").count() == 0
    page.select_option("[data-testid=namesrv-select]", "second")
    page.click("[data-testid=namesrv-switch]")
    page.wait_for_selector(f"text={on_second}")
    assert "/topics/" in page.url and f"search=_{tag}" in page.url and page.locator(f"text={on_default}").count() == 0
    assert page.locator("[data-testid=namesrv-select]").input_value() == "second"
    screenshot("second-tier")
    page.goto(
        f"{live_server.url}/topics/{on_second}/"
    )  # a link of the page, without the parameter: the session's choice
    page.wait_for_selector("h1")
    assert on_second in page.locator("h1").inner_text() and page.locator("[data-testid=error]").count() == 0
    _load_until(page, f"{live_server.url}/topics/?search=_{tag}", on_second)

    page.select_option("[data-testid=namesrv-select]", "default")
    page.click("[data-testid=namesrv-switch]")
    page.wait_for_selector(f"text={on_default}")
    assert page.locator(f"text={on_second}").count() == 0
