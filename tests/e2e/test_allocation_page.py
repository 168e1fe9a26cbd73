"""The allocation page in a browser: a live group's grid, a client added in the what-if (the diff
shows without a reload), and a made-up 64 queues x 20 clients grid with every strategy side by side."""

from __future__ import annotations

import uuid

import pytest
from playwright.sync_api import expect

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
    clients = [
        PullClient(session_cluster.namesrv_addr, group, instance_name=f"worker-{i}", heartbeat_interval_s=None)
        for i in range(3)
    ]
    for c in clients:
        c.subscribe(topic)
    yield topic, group, clients
    for c in clients:
        c.close()


def rows(page) -> list[str]:
    return page.locator("[data-testid=alloc-grid] tbody tr").evaluate_all("rows => rows.map(r => r.dataset.cid)")


def test_live_group_grid_then_add_a_client_and_see_the_diff(
    viewer_page, live_server, subscribed_three, screenshot
) -> None:
    page = viewer_page
    topic, group, clients = subscribed_three
    page.click("nav >> text=Groups")
    page.fill("input[name=q]", group)
    page.wait_for_function("() => document.querySelectorAll('[data-testid=groups] tbody tr').length === 1")
    assert page.locator(f"tr[data-group='{group}'] td").nth(1).inner_text() == "3"  # members online
    screenshot("groups")
    page.click(f"text={group}")  # a navigation: expect waits for the group page's rows
    expect(page.locator("[data-testid=members] tbody tr")).to_have_count(3)
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
    assert (
        moved > 0 and page.locator("[data-testid=alloc-grid] td.gain").count() == moved
    )  # a cell per queue that changes hands
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
    page.wait_for_function(
        "() => document.querySelector('[data-testid=alloc-figures]').innerText.includes('CONSISTENT_HASH')"
    )
    page.check("input[name=view][value=compare]")
    page.locator("[data-testid=comparison]").wait_for()
    names = page.locator("[data-testid=comparison] tbody tr").evaluate_all("rows => rows.map(r => r.dataset.strategy)")
    assert names == ["AVG", "AVG_BY_CIRCLE", "CONFIG", "MACHINE_ROOM", "MACHINE_ROOM_NEARBY", "CONSISTENT_HASH"]
    assert (
        page.locator("[data-testid=mini-grid]").count() == 3
    )  # AVG, AVG_BY_CIRCLE, CONSISTENT_HASH; the others need parameters
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


def test_hints_rooms_refusal_readable_brokers_and_what_if_figures_at_1280(viewer_page, live_server, screenshot) -> None:
    page = viewer_page
    page.set_viewport_size({"width": 1280, "height": 900})
    brokers = ["broker-a", "broker-b", "hz@broker-long-name-c"]
    page.goto(f"{live_server.url}/allocation/?layout=broker-a:2,broker-b:8,hz@broker-long-name-c:1&clients=3")
    page.locator("[data-testid=alloc-grid]").wait_for()
    assert "broker-a:8 broker-b:8" in page.locator("[data-testid=hint-layout]").inner_text()
    for name in ("topic", "group", "clients", "add_clients", "remove_clients", "brokers_down", "queue_counts"):
        assert page.locator(f"[data-testid=hint-{name}]").is_visible(), name
    headers = page.locator("[data-testid=alloc-grid] th.broker")
    assert headers.evaluate_all("hs => hs.map(h => h.title)") == brokers
    assert [t.replace("\n", "") for t in headers.all_inner_texts()] == brokers  # whole names, wrapped at most
    inside = headers.evaluate_all("""hs => hs.map(h => { const o = h.getBoundingClientRect(), i = h.firstElementChild.getBoundingClientRect();
        return [i.left >= o.left - 1 && i.right <= o.right + 1 && i.top >= o.top - 1 && i.bottom <= o.bottom + 1, o.width, o.height, i.width, i.height]; })""")
    assert all(row[0] for row in inside), inside  # each name drawn within its own columns
    screenshot("brokers")

    page.select_option("select[name=strategy]", "MACHINE_ROOM_NEARBY")
    assert page.locator("[data-testid=hint-rooms]").is_visible()
    page.locator("[data-testid=alloc-errors]").wait_for()
    error = page.locator("[data-testid=alloc-errors] li[data-field=rooms]").inner_text()
    assert (
        "does not know the machine room of brokers broker-a, broker-b and clients" in error and "broker-a=hz" in error
    )
    assert "MessageQueue" not in error
    screenshot("rooms-refused")
    page.fill("input[name=rooms]", "broker-a=hz broker-b=hz client-1=hz client-2=hz client-3=sh")
    page.wait_for_function(
        "() => document.querySelector('[data-testid=alloc-figures]')?.innerText.includes('MACHINE_ROOM_NEARBY-AVG')"
    )

    page.select_option("select[name=strategy]", "AVG")
    page.fill("input[name=brokers_down]", "broker-b")
    page.locator("[data-testid=released]").wait_for()
    diff = page.locator("[data-testid=diff]").inner_text()
    assert "8 no longer consumed" in diff and "held before, by nobody after" in diff and "change hands" not in diff
    figures = [
        int(page.locator(f"[data-testid={k}]").inner_text()) for k in ("changed", "moved", "released", "picked-up")
    ]
    assert figures[0] == sum(figures[1:])
    screenshot("what-if")
