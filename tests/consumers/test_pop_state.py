"""A POP group (Apache's official 5.x Python client, SimpleConsumer over the gRPC endpoint) on the group page
and in GET /api/v1/groups/{name}/pop-state: per queue its deliveries in flight and next cursor, the deliveries
with invisible-until and attempt, acks taking them away; zh_Hans labels; a 4.x group has no such section;
404 for a group nobody knows; and the group list's consume TPS moving for a POP group."""

from __future__ import annotations

import re

import pytest

from tests.consumers._groups import send
from tests.fixtures.waiting import wait_until
from tests.interop._python_grpc import PythonClients, receive_until

pytestmark = pytest.mark.django_db

INVISIBLE_S = 30


@pytest.fixture
def pop_group(console_cluster, topic, group):
    send(console_cluster, topic, 6)
    clients = PythonClients(console_cluster.brokers["broker-a"].grpc_addr)
    consumer = clients.simple(group, topic)
    got = receive_until(consumer, 6, invisible_s=INVISIBLE_S)  # from both brokers, none acked
    yield consumer, got
    clients.close()


def test_pop_state_in_the_api_and_on_the_page(viewer, viewer_client, pop_group, group, topic) -> None:
    consumer, got = pop_group
    body = viewer.get(f"/api/v1/groups/{group}/pop-state").json()
    assert body["group"] == group and body["in_flight"] == 6 and body["truncated"] is False and body["errors"] == []
    assert {q["broker_name"] for q in body["queues"]} <= {"broker-a", "broker-b"}
    assert all(q["topic"] == topic for q in body["queues"])
    assert sum(q["cursor"] for q in body["queues"]) == 6  # every message popped once: the cursors passed them all
    deliveries = [d for q in body["queues"] for d in q["deliveries"]]
    assert len(deliveries) == 6
    assert all(d["attempt"] == 1 and d["invisible_until"] - d["pop_time"] == INVISIBLE_S * 1000 for d in deliveries)
    assert all(re.fullmatch(r"[0-9A-F]{32}", d["msg_id"]) for d in deliveries)

    page = viewer_client.get(f"/groups/{group}/").content.decode()
    section = re.search(r'<section data-testid="pop-state">.*?</section>', page, re.S).group(0)
    assert "Message-level consumption (5.x)" in section and "(6 in flight)" in section
    rows = re.findall(r'<tr data-offset="\d+">.*?</tr>', section, re.S)
    assert len(rows) == 6
    assert re.search(r"<td>\d\d:\d\d:\d\d \S+", rows[0])  # invisible until, HH:MM:SS and the zone
    fragment = viewer_client.get(
        f"/groups/{group}/", HTTP_HX_REQUEST="true"
    ).content.decode()  # the 5 s refresh keeps it
    assert 'data-testid="pop-state"' in fragment
    chinese = viewer_client.get(f"/groups/{group}/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "消息级消费（5.x）" in chinese and "投递次数" in chinese and "不可见至" in chinese

    for message in got[:2]:
        consumer.ack(message)
    wait_until(
        lambda: viewer.get(f"/api/v1/groups/{group}/pop-state").json()["in_flight"] == 4, 15, "4 in flight after 2 acks"
    )


def test_a_4x_group_has_no_pop_section(viewer, viewer_client, online) -> None:
    group = online
    assert viewer.get(f"/api/v1/groups/{group}/pop-state").json()["queues"] == []
    assert 'data-testid="pop-state"' not in viewer_client.get(f"/groups/{group}/").content.decode()


def test_unknown_and_bad_group_names(viewer, console_cluster) -> None:
    missing = viewer.get("/api/v1/groups/no_such_group_at_all/pop-state")
    assert missing.status_code == 404
    bad = viewer.get("/api/v1/groups/bad%20name!/pop-state")
    assert bad.status_code == 400 and "name" in bad.content.decode()


def test_the_group_lists_tps_moves_for_a_pop_group(viewer, pop_group, group) -> None:
    def tps():
        rows = [r for r in viewer.get("/api/v1/groups", {"search": group}).json()["results"] if r["name"] == group]
        return rows and (rows[0]["tps"] or 0) > 0

    wait_until(tps, 30, "the POP group's consume TPS above 0 in the group list")  # the brokers' figure moves every 10 s
