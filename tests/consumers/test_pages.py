"""The consumer pages: group list (page and htmx fragment), detail, reset offsets (plan, apply,
refusals shown on the form), the allocation page (grid, every strategy, what-if, live check,
refusals), and the cluster down as a 503 page."""

from __future__ import annotations

import re

import pytest

from console.models import AuditEntry
from tests.consumers._groups import consume, send

pytestmark = pytest.mark.django_db


@pytest.fixture
def consumed_member(console_cluster, topic, group, members):
    send(console_cluster, topic, 8)
    member = members(group, topic, "page-member")
    consume(member, member.fetch_subscribe_message_queues(topic))
    return member


def test_group_list_page_and_fragment(viewer_client, consumed_member, group) -> None:
    page = viewer_client.get("/groups/", {"q": group}).content.decode()
    assert f'data-group="{group}"' in page and ">1</span>" in page and "PULL" in page and "<html" in page
    fragment = viewer_client.get("/groups/", {"q": group, "kind": "user"}, HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in fragment and f'data-group="{group}"' in fragment and "1 of " in fragment
    # the table refreshes itself (lag, TPS) with the filter and page it shows, paused while the tab is hidden
    assert f'hx-get="/groups/?q={group}&amp;kind=user&amp;page=1" hx-trigger="every 10s, live:visible"' in fragment
    assert 'data-live data-testid="group-table-live"' in fragment


def test_group_detail_page(viewer_client, consumed_member, group, topic) -> None:
    page = viewer_client.get(f"/groups/{group}/").content.decode()
    assert consumed_member.client_id in page and 'data-testid="progress"' in page and topic in page
    assert f"/allocation/?group={group}&amp;topic={topic}" in page
    assert viewer_client.get("/groups/NoSuchGroup_p/").status_code == 404


def test_reset_offsets_page_plan_then_apply(operator_client, consumed_member, group, topic) -> None:
    page = operator_client.get(f"/groups/{group}/reset-offset").content.decode()
    assert f'<option value="{topic}"' in page
    plan = operator_client.get(
        f"/groups/{group}/reset-offset", {"topic": topic, "timestamp": "1970-01-01T00:00:00Z"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "<html" not in plan and 'data-testid="plan-queues"' in plan and 'data-testid="apply-form"' in plan
    response = operator_client.post(f"/groups/{group}/reset-offset", {"topic": topic, "timestamp": "0"})
    assert response.status_code == 302 and response["Location"] == f"/groups/{group}/"
    assert AuditEntry.objects.filter(action="group.reset_offset", target=group, result="ok", source="console").exists()
    refused = operator_client.post(f"/groups/{group}/reset-offset", {"topic": topic, "timestamp": "soon"})
    assert refused.status_code == 400 and "is not a time" in refused.content.decode()


def test_reset_offsets_page_offers_each_target_and_applies_latest(
    operator_client, consumed_member, group, topic
) -> None:
    page = operator_client.get(f"/groups/{group}/reset-offset").content.decode()
    for choice in ("time", "now", "earliest", "latest", "offset"):
        assert f'value="{choice}"' in page
    assert '<option value="broker-a">' in page  # one queue's offset: the broker to pick
    plan = operator_client.get(
        f"/groups/{group}/reset-offset", {"topic": topic, "to": "latest"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "the latest offset" in plan and '<input type="hidden" name="to" value="latest">' in plan
    assert '<input type="hidden" name="timestamp"' not in plan
    response = operator_client.post(f"/groups/{group}/reset-offset", {"topic": topic, "to": "latest"})
    assert response.status_code == 302, response.content.decode()[-2000:]
    entry = AuditEntry.objects.filter(action="group.reset_offset", target=group, result="ok").latest("id")
    assert entry.before["to"] == "latest"
    refused = operator_client.post(
        f"/groups/{group}/reset-offset", {"topic": topic, "to": "offset", "broker": "broker-a", "queue_id": "x"}
    )
    assert refused.status_code == 400 and "whole number" in refused.content.decode()


def test_a_viewer_sees_the_plan_but_may_not_apply(viewer_client, consumed_member, group, topic) -> None:
    plan = viewer_client.get(f"/groups/{group}/reset-offset", {"topic": topic, "timestamp": "0"}).content.decode()
    assert 'data-testid="plan-queues"' in plan and "apply-form" not in plan
    assert viewer_client.post(f"/groups/{group}/reset-offset", {"topic": topic, "timestamp": "0"}).status_code == 403


def test_allocation_page_of_a_made_up_group(viewer_client, console_cluster) -> None:
    page = viewer_client.get("/allocation/").content.decode()
    assert (
        page.count('<tr class="" data-cid="client-') == 4 and page.count('<td class="own') == 16
    )  # 2 x 8 queues, 4 clients
    grid = viewer_client.get(
        "/allocation/", {"layout": "broker-a:32 broker-b:32", "clients": "20"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "<html" not in grid and grid.count('data-cid="client-') == 20 and grid.count('<th class="qid') == 64


def test_allocation_page_compares_and_shows_a_what_if(viewer_client, console_cluster) -> None:
    page = viewer_client.get(
        "/allocation/", {"view": "compare", "clients": "a b c", "remove_clients": "c"}
    ).content.decode()
    assert page.count('data-strategy="') == 6 and "skipped: needs message_queue_list" in page
    assert page.count('data-testid="mini-grid"') == 3
    page = viewer_client.get(
        "/allocation/", {"clients": "a b", "add_clients": "c", "brokers_down": "broker-b"}
    ).content.decode()
    moved = re.search(r'data-testid="moved">(\d+)<', page)
    assert moved and int(moved.group(1)) > 0 and "new: c" in page and '<td class="lose' in page


@pytest.mark.parametrize(
    ("query", "field", "reason"),
    [
        ({"strategy": "MACHINE_ROOM"}, "consumeridcs", "MACHINE_ROOM needs consumeridcs"),
        ({"layout": "broker-a"}, "layout", "is not broker:count"),
        ({"clients": "0"}, "clients", "made-up clients"),
        ({"remove_clients": "nobody"}, "remove_clients", "cannot remove clients"),
        ({"strategy": "CONSISTENT_HASH", "virtual_node_cnt": "0"}, "virtual_node_cnt", "greater than or equal to 1"),
        ({"topic": "bad topic"}, "topic", "allowed characters are"),
    ],
)
def test_allocation_page_explains_refusals(viewer_client, console_cluster, query, field, reason) -> None:
    response = viewer_client.get("/allocation/", query, HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert response.status_code == 400 and f'data-field="{field}"' in body and reason in body, body


def test_allocation_page_live_check(viewer_client, consumed_member, group, topic) -> None:
    page = viewer_client.get("/allocation/", {"topic": topic, "group": group}).content.decode()
    assert 'data-testid="live-check"' in page and consumed_member.client_id in page
    assert "every queue is held exactly once" in page  # the one member pulled every queue
    unknown = viewer_client.get(
        "/allocation/", {"topic": "NoSuchTopic_q"}
    )  # the form stays, the reason under the field
    assert unknown.status_code == 400 and '<li data-field="topic">' in unknown.content.decode()


def test_pages_answer_503_when_the_cluster_is_down(viewer_client, mq_settings, unused_addr) -> None:
    mq_settings(unused_addr)
    for url in ("/groups/", "/groups/G/", "/allocation/?topic=T"):
        response = viewer_client.get(url)
        assert response.status_code == 503 and "name server unreachable" in response.content.decode(), url


def test_allocation_page_shows_each_fields_format_hint(viewer_client, console_cluster) -> None:
    page = viewer_client.get("/allocation/").content.decode()
    for name, example in (
        ("layout", "broker-a:8 broker-b:8"),
        ("clients", "a number N"),
        ("consumeridcs", "hz@broker-a"),
        ("message_queue_list", "broker-a:0 broker-b:3"),
        ("rooms", "broker-a=hz"),
        ("add_clients", "client-9"),
        ("remove_clients", "client-1"),
        ("brokers_down", "broker-b"),
        ("queue_counts", "broker-a:4"),
        ("virtual_node_cnt", "1 to 1000"),
    ):
        hint = re.search(rf'<small class="hint" id="hint-{name}"[^>]*>([^<]*)</small>', page)
        assert hint and example in hint.group(1), name
        assert f'aria-describedby="hint-{name}"' in page, name


def test_a_nearby_refusal_names_the_rooms_field_in_an_operators_words(viewer_client, console_cluster) -> None:
    response = viewer_client.get(
        "/allocation/", {"strategy": "MACHINE_ROOM_NEARBY", "clients": "hz@c1 c2"}, HTTP_HX_REQUEST="true"
    )
    body = response.content.decode()
    assert response.status_code == 400 and 'data-field="rooms"' in body, body
    assert "does not know the machine room of brokers broker-a, broker-b and client c2" in body
    assert "broker-a=hz" in body and "MessageQueue" not in body and "is null" not in body
    ok = viewer_client.get(
        "/allocation/",
        {"strategy": "MACHINE_ROOM_NEARBY", "clients": "hz@c1 c2", "rooms": "broker-a=hz broker-b=sh c2=sh"},
        HTTP_HX_REQUEST="true",
    )
    assert ok.status_code == 200 and "MACHINE_ROOM_NEARBY-AVG" in ok.content.decode()


def _diff(page: str) -> dict[str, int]:
    return {k: int(v) for k, v in re.findall(r'data-testid="(changed|moved|released|picked-up)">(\d+)<', page)}


@pytest.mark.parametrize(
    ("what_if", "expected"),
    [
        ({"add_clients": "c"}, {"moved": 7, "released": 0, "picked-up": 0}),  # AVG keeps ranges: 8+8 -> 6+5+5 moves 7
        ({"brokers_down": "broker-b"}, {"released": 8, "picked-up": 0}),  # broker-b's 8 queues: nobody consumes them
        ({"queue_counts": "broker-a:10"}, {"picked-up": 2, "released": 0}),  # 2 new queues of broker-a
    ],
)
def test_the_what_if_figures_add_up_and_say_which_kind_of_change(
    viewer_client, console_cluster, what_if, expected
) -> None:
    page = viewer_client.get("/allocation/", {"clients": "a b", **what_if}).content.decode()
    figures = _diff(page)
    assert {k: figures[k] for k in expected} == expected, figures
    assert figures["changed"] == figures["moved"] + figures["released"] + figures["picked-up"]
    assert "move to another client" in page and "no longer consumed" in page and "newly consumed" in page
    assert "change hands" not in page
