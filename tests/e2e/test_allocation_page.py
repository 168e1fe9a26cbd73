"""The allocation page in a browser: a live group's grid, a client added in the what-if (the diff
shows without a reload), and a made-up 64 queues x 20 clients grid with every strategy side by side."""
from __future__ import annotations

import uuid

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.client.simple import PullClient
from tests.brokers.engine.client._cluster import create_topic
from tests.e2e.conftest import log_in
from tests.fixtures.console import PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def viewer_page(page, live_server, make_user, session_cluster, mq_settings):
    mq_settings(session_cluster.namesrv_addr)
    make_user("viewer", username="watcher", password=PASSWORD)
    log_in(page, live_server.url, "watcher", PASSWORD)
    return page


@pytest.fixture
def subscribed_three(session_cluster):
    """Topic with 32 queues on each broker and a group of three subscribed members."""
    suffix = uuid.uuid4().hex[:6]
    topic, group = f"E2eAlloc_{suffix}", f"E2eAllocGroup_{suffix}"
    with BlockingMQAdminClient(session_cluster.namesrv_addr) as admin:
        create_topic(admin, session_cluster, topic, queues=32)
    clients = [PullClient(session_cluster.namesrv_addr, group, instance_name=f"worker-{i}", heartbeat_interval_s=None) for i in range(3)]
    for c in clients:
        c.subscribe(topic)
    yield topic, group, clients
    for c in clients:
        c.close()


def rows(page) -> list[str]:
    return page.locator("[data-testid=alloc-grid] tbody tr").evaluate_all("rows => rows.map(r => r.dataset.cid)")


def test_live_group_grid_then_add_a_client_and_see_the_diff(viewer_page, live_server, subscribed_three, screenshot) -> None:
    page = viewer_page
    topic, group, clients = subscribed_three
    page.click("nav >> text=Groups")
    page.fill("input[name=q]", group)
    page.wait_for_function("() => document.querySelectorAll('[data-testid=groups] tbody tr').length === 1")
    assert page.locator(f"tr[data-group='{group}'] td").nth(1).inner_text() == "3"  # members online
    screenshot("groups")
    page.click(f"text={group}")
    assert page.locator("[data-testid=members] tbody tr").count() == 3
    screenshot("group")
    page.click("[data-testid=allocation-link]")
    page.wait_for_function("() => document.querySelectorAll('[data-testid=alloc-grid] tbody tr').length === 3")
    assert rows(page) == sorted(c.client_id for c in clients)
    assert page.locator("[data-testid=alloc-source]").inner_text().startswith("64 queues of topic")
    assert page.locator("[data-testid=live-check]").is_visible()
    assert page.locator("[data-testid=alloc-grid] th.broker").all_inner_texts() == ["broker-a", "broker-b"]
    screenshot("live")

    page.fill("input[name=add_clients]", "newcomer@host")
    page.locator("[data-testid=diff]").wait_for()
    assert "newcomer@host" in rows(page)
    assert page.locator("tr[data-cid='newcomer@host']").get_attribute("class") == "added"
    moved = int(page.locator("[data-testid=moved]").inner_text())
    assert moved > 0 and page.locator("[data-testid=alloc-grid] td.gain").count() == moved  # a cell per queue that changes hands
    assert "topic=" in page.url and "add_clients=newcomer" in page.url  # the inputs are in the address: a link to share
    screenshot("what-if")


def test_a_made_up_64_by_20_grid_and_every_strategy(viewer_page, live_server, screenshot) -> None:
    page = viewer_page
    page.goto(f"{live_server.url}/allocation/?layout=broker-a:32,broker-b:32&clients=20")
    page.wait_for_function("() => document.querySelectorAll('[data-testid=alloc-grid] tbody tr').length === 20")
    assert page.locator("[data-testid=alloc-grid] td.own").count() == 64
    grid = page.locator("[data-testid=alloc-grid]").bounding_box()
    assert grid["width"] <= 1400, grid  # 64 columns fit a laptop screen beside the client ids
    page.set_viewport_size({"width": 1440, "height": 1000})
    screenshot("64x20")

    page.select_option("select[name=strategy]", "CONSISTENT_HASH")
    page.locator("input[name=virtual_node_cnt]").wait_for(state="visible")
    page.wait_for_function("() => document.querySelector('[data-testid=alloc-figures]').innerText.includes('CONSISTENT_HASH')")
    page.check("input[name=view][value=compare]")
    page.locator("[data-testid=comparison]").wait_for()
    names = page.locator("[data-testid=comparison] tbody tr").evaluate_all("rows => rows.map(r => r.dataset.strategy)")
    assert names == ["AVG", "AVG_BY_CIRCLE", "CONFIG", "MACHINE_ROOM", "MACHINE_ROOM_NEARBY", "CONSISTENT_HASH"]
    assert page.locator("[data-testid=mini-grid]").count() == 3  # AVG, AVG_BY_CIRCLE, CONSISTENT_HASH; the others need parameters
    screenshot("compare")


def test_a_refused_input_is_explained_without_a_reload(viewer_page, live_server, screenshot) -> None:
    page = viewer_page
    page.goto(f"{live_server.url}/allocation/")
    page.locator("[data-testid=alloc-grid]").wait_for()
    page.select_option("select[name=strategy]", "CONFIG")
    page.locator("[data-testid=alloc-errors]").wait_for()
    assert "CONFIG needs message_queue_list" in page.locator("[data-testid=alloc-errors]").inner_text()
    page.fill("input[name=message_queue_list]", "broker-a:0 broker-b:1")
    page.locator("[data-testid=alloc-grid]").wait_for()
    assert page.locator("[data-testid=alloc-grid] td.shared").count() == 8  # 4 clients x 2 configured queues
    screenshot("config")
