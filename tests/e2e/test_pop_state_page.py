"""The group page's "Message-level consumption (5.x)" section in a browser at 1440 px, light and dark: a POP
group made with Apache's official Python client (SimpleConsumer, nothing acked) shows its queues and its
deliveries in flight, readable in both schemes, within the page's width, and still there after the 5 s
refresh; screenshots in the artifacts directory."""

from __future__ import annotations

import pytest

from tests.consumers._groups import send
from tests.e2e.conftest import log_in
from tests.e2e.test_dark_mode import colours
from tests.fixtures.console import PASSWORD
from tests.interop._python_grpc import PythonClients, receive_until

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def pop_group(console_cluster, topic, group):
    send(console_cluster, topic, 4)
    clients = PythonClients(console_cluster.brokers["broker-a"].grpc_addr)
    consumer = clients.simple(group, topic)
    receive_until(consumer, 4, invisible_s=120)
    yield group
    clients.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_pop_section_in_both_schemes(
    scheme, browser, live_server, make_user, pop_group, request, artifacts_dir
) -> None:
    make_user("viewer", username="vera", password=PASSWORD)
    context = browser.new_context(color_scheme=scheme, viewport={"width": 1440, "height": 900})
    page = context.new_page()
    try:
        log_in(page, live_server.url, "vera", PASSWORD)
        page.goto(f"{live_server.url}/groups/{pop_group}/")
        section = page.locator("[data-testid=pop-state]")
        section.wait_for()
        assert "Message-level consumption (5.x)" in section.locator("h2").inner_text()
        assert page.locator("[data-testid=pop-deliveries] tbody tr").count() == 4
        cell = page.locator("[data-testid=pop-deliveries] tbody tr td").nth(2).inner_text()  # invisible until
        assert cell[:8].count(":") == 2, cell
        table_bg, table_fg = colours(page, "[data-testid=pop-deliveries]")
        if scheme == "dark":
            assert table_bg < 0.2 and table_fg > 0.7, (table_bg, table_fg)
        else:
            assert table_bg > 0.9 and table_fg < 0.3, (table_bg, table_fg)
        overflow = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"the page is {overflow} px wider than the window"
        section.screenshot(path=str(artifacts_dir / f"{request.node.name}-pop-section.png"))
        page.wait_for_timeout(5_500)  # the detail's htmx refresh swaps the section in again
        assert page.locator("[data-testid=pop-deliveries] tbody tr").count() == 4
    finally:
        context.close()
