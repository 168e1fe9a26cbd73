"""Controls of the group pages that said something untrue: the Allocation button of a group opens the topic the
group reads (not its %RETRY% topic); the progress API names the owner the group page shows; a reset to a time in
the future is refused naming the field (form and API) instead of moving nothing; the allocation form keeps an
unknown topic and says so under the field, lists the strategies when one is wrong, and reports every wrong field
of a submit at once."""

from __future__ import annotations

import re

import pytest

from tests.consumers._groups import consume, send

pytestmark = pytest.mark.django_db

FUTURE = "2999-01-01T00:00:00Z"


@pytest.fixture
def two_members(console_cluster, topic, group, members):
    """m1 pulled broker-a's queues, m2 broker-b's first two; 2 messages per queue sent."""
    send(console_cluster, topic, 16)
    m1, m2 = members(group, topic, "m1"), members(group, topic, "m2")
    queues = m1.fetch_subscribe_message_queues(topic)
    consume(m1, queues[:4])
    consume(m2, queues[4:6])
    return m1, m2


def test_the_allocation_button_opens_the_topic_the_group_subscribes_not_its_retry_topic(
    viewer_client, two_members, group, topic
) -> None:
    page = viewer_client.get(f"/groups/{group}/").content.decode()
    links = re.findall(r'data-testid="allocation-link" data-topic="([^"]+)"', page)
    assert links == [topic]
    assert "%25RETRY%25" not in page.split('data-testid="reset-link"')[0]


def test_the_progress_api_names_the_owner_the_group_page_shows(viewer, two_members, group) -> None:
    m1, m2 = two_members
    detail = {
        (q["broker_name"], q["queue_id"]): q["owner"]
        for q in viewer.get(f"/api/v1/groups/{group}").json()["progress"]["queues"]
    }
    progress = {
        (q["broker_name"], q["queue_id"]): q["owner"]
        for q in viewer.get(f"/api/v1/groups/{group}/progress").json()["queues"]
    }
    assert progress == detail
    assert (
        progress[("broker-a", 0)] == m1.client_id
        and progress[("broker-b", 1)] == m2.client_id
        and progress[("broker-b", 3)] is None
    )


def test_a_reset_to_a_time_in_the_future_is_refused_naming_the_field(
    operator, operator_client, two_members, group, topic
) -> None:
    api = operator.post(
        f"/api/v1/groups/{group}/reset-offset", {"topic": topic, "to": "time", "timestamp": FUTURE}, format="json"
    )
    assert api.status_code == 400 and "in the future" in api.json()["fields"]["timestamp"][0]
    form = operator_client.post(f"/groups/{group}/reset-offset", {"topic": topic, "to": "time", "timestamp": FUTURE})
    assert form.status_code == 400 and "2999-01-01 00:00:00 UTC is in the future" in form.content.decode()
    plan = operator_client.get(f"/groups/{group}/reset-offset", {"topic": topic, "to": "time", "timestamp": FUTURE})
    assert plan.status_code == 400 and FUTURE in plan.content.decode()  # the operator's input stays in the form


def test_a_wrong_strategy_lists_the_strategies(viewer_client, console_cluster) -> None:
    body = viewer_client.get("/allocation/", {"strategy": "ROUND_ROBIN"}, HTTP_HX_REQUEST="true").content.decode()
    [error] = re.findall(r'<li data-field="strategy">(.*?)</li>', body)
    assert "ROUND_ROBIN is not a strategy" in error
    for name in ("AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH", "CONFIG", "MACHINE_ROOM", "MACHINE_ROOM_NEARBY"):
        assert name in error


def test_an_unknown_topic_keeps_the_form_and_says_so_under_the_field(viewer_client, console_cluster) -> None:
    response = viewer_client.get("/allocation/", {"topic": "NoSuchTopic_keep", "clients": "3"})
    page = response.content.decode()
    assert response.status_code == 400
    assert re.search(r'<li data-field="topic">.*NoSuchTopic_keep.*does not exist', page)
    assert 'value="NoSuchTopic_keep"' in page and 'data-testid="alloc-errors"' in page


def test_one_submit_reports_every_wrong_field(viewer_client, console_cluster) -> None:
    body = viewer_client.get(
        "/allocation/",
        {"layout": "broker-a:x", "clients": "0", "strategy": "ROUND_ROBIN", "queue_counts": "broker-a"},
        HTTP_HX_REQUEST="true",
    ).content.decode()
    fields = set(re.findall(r'<li data-field="([^"]+)">', body))
    assert fields == {"layout", "clients", "strategy", "queue_counts"}, body


def test_the_group_list_sorts_by_lag_and_tps_on_the_server_page_and_api(
    viewer, viewer_client, console_cluster, topic, group, members
) -> None:
    behind, ahead = f"{group}_behind", f"{group}_ahead"
    for name, consumed in ((behind, 0), (ahead, 2)):
        m = members(name, topic, name)
        for mq in m.fetch_subscribe_message_queues(topic):
            m.update_offset(mq, consumed)
    send(console_cluster, topic, 32)  # 4 per queue: behind lags 32, ahead 16
    needle = group[2:]
    for ordering, expected in (("-lag", [behind, ahead]), ("lag", [ahead, behind])):
        page = viewer_client.get("/groups/", {"q": needle, "ordering": ordering}).content.decode()
        assert [g for g in re.findall(r'<tr data-group="([^"]+)"', page) if g in (behind, ahead)] == expected, ordering
        api = viewer.get("/api/v1/groups", {"search": needle, "ordering": ordering}).json()["results"]
        assert [r["name"] for r in api if r["name"] in (behind, ahead)] == expected, ordering
    assert 'data-testid="sort-tps"' in page and "ordering=-tps" in page
    refused = viewer_client.get("/groups/", {"ordering": "members"})
    assert refused.status_code == 400 and "ordering" in refused.content.decode()
