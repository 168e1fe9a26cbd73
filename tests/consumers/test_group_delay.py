"""The consume delay of a group (now less the store time behind its backlog, from GET_BROKER_CONSUME_STATS'
and GET_CONSUME_STATS' per-queue lastTimestamp): shown in the group list, sortable like lag and TPS, on the
group page and in the REST API (list and one group)."""

from __future__ import annotations

import re
import time

import pytest

from consumers import selectors
from tests.consumers._groups import send

pytestmark = pytest.mark.django_db


@pytest.fixture
def three_groups(console_cluster, topic, group, members):
    """Three messages on one queue, stored at three times; ``behind`` consumed the first, ``ahead`` two, ``done`` all."""
    names = {consumed: f"{group}_{label}" for consumed, label in ((1, "behind"), (2, "ahead"), (3, "done"))}
    clients = {consumed: members(name, topic, name) for consumed, name in names.items()}
    mq = clients[1].fetch_subscribe_message_queues(topic)[0]
    sent = []
    for _ in range(3):
        sent += send(console_cluster, topic, 1, mq=mq)
        time.sleep(0.05)  # three distinct store times (ms)
    for consumed, client in clients.items():
        client.update_offset(mq, consumed)
    return names[1], names[2], names[3]


def test_the_group_list_shows_and_sorts_by_delay_on_the_page_and_api(
    viewer, viewer_client, group, three_groups
) -> None:
    behind, ahead, done = three_groups
    rows = {r.name: r for r in selectors.group_list(search=group[2:]).rows}
    assert rows[done].delay == 0.0
    assert rows[behind].delay > rows[ahead].delay > 0.0
    needle = group[2:]
    for ordering, expected in (("-delay", [behind, ahead, done]), ("delay", [done, ahead, behind])):
        page = viewer_client.get("/groups/", {"q": needle, "ordering": ordering}).content.decode()
        assert [g for g in re.findall(r'<tr data-group="([^"]+)"', page) if g in expected] == expected, ordering
        api = viewer.get("/api/v1/groups", {"search": needle, "ordering": ordering}).json()["results"]
        assert [r["name"] for r in api if r["name"] in expected] == expected, ordering
        assert all(isinstance(r["delay"], float) for r in api if r["name"] in expected)
    assert 'data-testid="sort-delay"' in page and 'aria-sort="ascending"' in page
    chinese = viewer_client.get("/groups/", {"q": needle}, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "延迟" in chinese


def test_the_group_page_and_api_show_its_delay(viewer, viewer_client, three_groups) -> None:
    behind, _, done = three_groups
    assert viewer.get(f"/api/v1/groups/{done}").json()["delay"] == 0.0
    detail = viewer.get(f"/api/v1/groups/{behind}").json()
    assert detail["delay"] > 0 and detail["progress"]["delay"] == detail["delay"]
    page = viewer_client.get(f"/groups/{behind}/").content.decode()
    assert re.search(r'data-testid="delay">\d+(\.\d)? s<', page), page[page.find('data-testid="delay"') - 50 :][:200]
