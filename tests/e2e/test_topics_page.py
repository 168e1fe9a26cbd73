"""An operator logs in, creates a topic in cluster mode and one in broker mode, and sees the
per-broker queue counts on the topic pages. Screenshots go to the test artifacts directory."""

from __future__ import annotations

import uuid

import pytest

from tests.fixtures.console import PASSWORD
from tests.e2e.conftest import log_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def operator_page(page, live_server, make_user, session_cluster, mq_settings):
    mq_settings(session_cluster.namesrv_addr)
    make_user("operator", username="ops", password=PASSWORD)
    log_in(page, live_server.url, "ops", PASSWORD)
    return page


def per_broker(page) -> dict[str, tuple[str, str, str]]:
    """Broker -> (read queues, write queues, perm) from the detail page's table."""
    out = {}
    for row in page.locator("[data-testid=per-broker] tbody tr").all():
        cells = [c.inner_text().strip() for c in row.locator("td").all()]
        out[cells[0]] = (cells[3], cells[4], cells[5])
    return out


def test_create_a_topic_in_cluster_mode(operator_page, live_server, session_cluster, screenshot) -> None:
    page = operator_page
    name = f"E2eCluster_{uuid.uuid4().hex[:6]}"
    page.click("nav >> text=Topics")
    page.click("[data-testid=new-topic]")
    page.fill("input[name=name]", name)
    page.check("input[name=mode][value=cluster]")
    page.select_option("select[name=cluster]", session_cluster.cluster)
    page.fill("input[name=read_queue_nums]", "6")
    page.fill("input[name=write_queue_nums]", "4")
    page.select_option("select[name=message_type]", "FIFO")
    screenshot("form")
    page.click("[data-testid=save]")
    page.wait_for_url(f"{live_server.url}/topics/{name}/")
    assert page.locator("[role=status]").first.inner_text() == f"Topic {name} created."
    assert per_broker(page) == {"broker-a": ("6", "4", "RW- (6)"), "broker-b": ("6", "4", "RW- (6)")}
    assert page.locator("[data-testid=message-type]").inner_text().startswith("Message type: FIFO")
    screenshot("detail")

    page.click("nav >> text=Topics")
    page.fill("input[name=q]", name)
    page.locator("[data-testid=topics] tbody tr").first.wait_for()
    page.wait_for_function("() => document.querySelectorAll('[data-testid=topics] tbody tr').length === 1")
    assert page.locator("[data-testid=topics] tbody tr").inner_text().split() == [
        name,
        "normal",
        "FIFO",
        "6",
        "4",
        "RW-",
        "6",
        "4",
        "RW-",
    ]
    screenshot("list")


def test_create_a_topic_in_broker_mode(operator_page, live_server, screenshot) -> None:
    page = operator_page
    name = f"E2eBroker_{uuid.uuid4().hex[:6]}"
    page.goto(f"{live_server.url}/topics/new")
    page.fill("input[name=name]", name)
    page.check("input[name=mode][value=broker]")
    assert not page.locator("select[name=cluster]").is_visible()  # the cluster fields hide in broker mode
    page.fill("input[name='brokers.broker-a.read_queue_nums']", "2")
    page.fill("input[name='brokers.broker-a.write_queue_nums']", "2")
    page.fill("input[name='brokers.broker-b.read_queue_nums']", "8")
    page.fill("input[name='brokers.broker-b.write_queue_nums']", "3")
    page.select_option("select[name='brokers.broker-b.perm']", "4")
    screenshot("form")
    page.click("[data-testid=save]")
    page.wait_for_url(f"{live_server.url}/topics/{name}/")
    assert per_broker(page) == {"broker-a": ("2", "2", "RW- (6)"), "broker-b": ("8", "3", "R-- (4)")}
    screenshot("detail")


def test_a_bad_name_is_explained_on_the_form(operator_page, live_server, screenshot) -> None:
    page = operator_page
    page.goto(f"{live_server.url}/topics/new")
    page.fill("input[name=name]", "orders v2")
    page.click("[data-testid=save]")
    error = page.locator("[data-field=name]").inner_text()
    assert "a space at position 7" in error
    screenshot("error")
