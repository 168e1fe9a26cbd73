"""/api/v1/groups against a real cluster: the list, one group, its progress, the live check of its
allocation, and resetting its offsets by time (plan, then apply); success and each refusal.

Refused resets change nothing: the tests compare the group's committed offsets before and after.
"""

from __future__ import annotations

import time

import pytest

from brokers.engine.client.admin_bodies import load_object
from brokers.engine.client.plan import Call
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from console.models import AuditEntry
from tests.consumers._groups import consume, member_recording_resets, send

pytestmark = pytest.mark.django_db


def committed(admin_mq, cluster, group: str, topic: str) -> dict:
    """(broker, queue id) -> committed offset, from every broker's offset table (GET_ALL_CONSUMER_OFFSET)."""
    out = {}
    for name in cluster.broker_names:
        reply = admin_mq.driver.invoke(Call(RequestCode.GET_ALL_CONSUMER_OFFSET, addr=cluster.broker_addr(name)))
        for qid, off in (load_object(reply.body).get("offsetTable") or {}).get(f"{topic}@{group}", {}).items():
            out[(name, int(qid))] = int(off)
    return out


@pytest.fixture
def group_of_two(console_cluster, topic, group, members):
    """Two members: m1 pulled broker-a's queues, m2 broker-b's first two; 2 messages per queue sent."""
    send(console_cluster, topic, 16)
    m1, m2 = members(group, topic, "m1"), members(group, topic, "m2")
    queues = m1.fetch_subscribe_message_queues(topic)
    consume(m1, queues[:4])
    consume(m2, queues[4:6])
    return m1, m2, queues


# -- list ------------------------------------------------------------------------------------------------


def test_list_shows_members_lag_and_topics(viewer, group_of_two, group, topic) -> None:
    body = viewer.get("/api/v1/groups", {"search": group}).json()
    assert body["count"] == 1
    [row] = body["results"]
    assert row["name"] == group and row["kind"] == "user" and row["online"] is True and row["members"] == 2
    assert row["consume_type"] == "PULL" and row["message_model"] == "CLUSTERING" and row["version"] == "V4_9_8"
    assert row["topics"] == [topic] and row["brokers"] == ["broker-a", "broker-b"]
    assert row["lag"] == 4  # broker-b queues 2 and 3: two messages each, nothing committed


def test_list_filters_kinds_and_orders(viewer, group_of_two, group) -> None:
    system = viewer.get("/api/v1/groups", {"kind": "system", "page_size": 1000}).json()["results"]
    assert "TOOLS_CONSUMER" in {g["name"] for g in system} and all(g["kind"] == "system" for g in system)
    users = viewer.get("/api/v1/groups", {"kind": "user", "ordering": "-lag", "page_size": 1000}).json()["results"]
    assert group in {g["name"] for g in users}
    assert [g["lag"] for g in users] == sorted((g["lag"] for g in users), reverse=True)


def test_list_refuses_bad_filters(viewer, console_cluster) -> None:
    response = viewer.get("/api/v1/groups", {"kind": "robots"})
    assert response.status_code == 400 and "kind" in response.json()["fields"]
    response = viewer.get("/api/v1/groups", {"ordering": "colour"})
    assert response.status_code == 400 and "ordering" in response.json()["fields"]


# -- one group -------------------------------------------------------------------------------------------


def test_detail_names_members_subscription_and_queue_owners(viewer, group_of_two, group, topic) -> None:
    m1, m2, _ = group_of_two
    body = viewer.get(f"/api/v1/groups/{group}").json()
    assert body["online"] and [m["client_id"] for m in body["members"]] == sorted([m1.client_id, m2.client_id])
    assert all(m["language"] == "PYTHON" and len(m["brokers"]) == 2 for m in body["members"])
    assert body["subscriptions"] == [{"topic": topic, "expression": "*", "expression_type": "TAG"}]
    owners = {(q["broker_name"], q["queue_id"]): q["owner"] for q in body["progress"]["queues"]}
    assert owners == {("broker-a", i): m1.client_id for i in range(4)} | {
        ("broker-b", 0): m2.client_id,
        ("broker-b", 1): m2.client_id,
        ("broker-b", 2): None,
        ("broker-b", 3): None,
    }
    lags = {(q["broker_name"], q["queue_id"]): q["lag"] for q in body["progress"]["queues"]}
    assert lags[("broker-a", 0)] == 0 and lags[("broker-b", 3)] == 2 and body["progress"]["diff_total"] == 4
    assert body["not_answering"] == []


def test_unknown_group_is_404_and_a_bad_name_400(viewer, console_cluster) -> None:
    for url in (
        "/api/v1/groups/NoSuchGroup_x1",
        "/api/v1/groups/NoSuchGroup_x1/progress",
        "/api/v1/groups/NoSuchGroup_x1/allocation",
    ):
        response = viewer.get(url)
        assert response.status_code == 404 and response.json()["code"] == "not_found", url
    response = viewer.get("/api/v1/groups/bad%20name")
    assert response.status_code == 400 and "name" in response.json()["fields"]


def test_progress_per_topic_and_unknown_topic(viewer, group_of_two, group, topic) -> None:
    body = viewer.get(f"/api/v1/groups/{group}/progress", {"topic": topic}).json()
    assert body["topic"] == topic and len(body["queues"]) == 8 and body["diff_total"] == 4
    response = viewer.get(f"/api/v1/groups/{group}/progress", {"topic": "NoSuchTopic_x1"})
    assert response.status_code == 404
    response = viewer.get(f"/api/v1/groups/{group}/progress", {"colour": "red"})
    assert response.status_code == 400 and response.json()["fields"] == {"colour": ["unknown field."]}


def test_no_credentials_is_401(api_client_as, console_cluster) -> None:
    anonymous = api_client_as(None)
    assert anonymous.get("/api/v1/groups").status_code == 401
    assert anonymous.post("/api/v1/groups/G/reset-offset", {}, format="json").status_code == 401


# -- the live check ----------------------------------------------------------------------------------------


def test_allocation_names_queues_owned_twice_and_by_nobody(viewer, group_of_two, group, topic) -> None:
    m1, m2, queues = group_of_two
    consume(m2, queues[:1], commit=False)  # m2 now also holds broker-a queue 0
    [check] = viewer.get(f"/api/v1/groups/{group}/allocation").json()["topics"]
    assert check["topic"] == topic and check["consistent"] is False
    assert [(q["broker_name"], q["queue_id"]) for q in check["unowned"]] == [("broker-b", 2), ("broker-b", 3)]
    assert [((d["queue"]["broker_name"], d["queue"]["queue_id"]), d["cids"]) for d in check["doubly_owned"]] == [
        (("broker-a", 0), sorted([m1.client_id, m2.client_id]))
    ]
    assert {m["client_id"]: len(m["queues"]) for m in check["members"]} == {m1.client_id: 4, m2.client_id: 3}
    assert all(
        m["answered"] and m["strategy"] == "(unknown)" and m["subscription"] == "TAG:*" for m in check["members"]
    )


def test_allocation_names_another_subscription_and_members_that_do_not_answer(
    viewer, console_cluster, topic, group, members
) -> None:
    a = members(group, topic, "sub-a", "*")
    b = members(group, topic, "sub-b", "TagB")
    silent = members(group, topic, "sub-c")

    async def refuse(ctx, request):
        return request.response(ResponseCode.SYSTEM_ERROR, "busy elsewhere")

    silent.driver.remoting.register_processor(RequestCode.GET_CONSUMER_RUNNING_INFO, refuse)
    [check] = viewer.get(f"/api/v1/groups/{group}/allocation", {"topic": topic}).json()["topics"]
    assert check["not_answering"] == [silent.client_id]
    reports = {m["client_id"]: m for m in check["members"]}
    assert reports[silent.client_id]["answered"] is False and "busy elsewhere" in reports[silent.client_id]["error"]
    assert {a.client_id, b.client_id} <= set(reports)
    # one member each way: the tie goes to the smaller text, TAG:*
    assert check["reference_subscription"] == "TAG:*" and check["subscription_outliers"] == [b.client_id]


# -- reset offsets by time -----------------------------------------------------------------------------------


def test_reset_plan_changes_nothing(viewer, console_admin, console_cluster, group_of_two, group, topic) -> None:
    before = committed(console_admin, console_cluster, group, topic)
    body = viewer.get(
        f"/api/v1/groups/{group}/reset-offset", {"topic": topic, "timestamp": "2000-01-01T00:00:00Z"}
    ).json()
    assert body["mode"] == "online" and body["applied"] is False and body["time"] == "2000-01-01T00:00:00Z"
    plan = {(q["broker_name"], q["queue_id"]): (q["before"], q["after"]) for q in body["queues"]}
    assert plan[("broker-a", 0)] == (2, 0) and plan[("broker-b", 3)] == (-1, 0)
    assert "no committed offset" in body["blocked"] and "broker-b:2, broker-b:3" in body["blocked"]
    assert committed(console_admin, console_cluster, group, topic) == before


def test_reset_online_is_refused_without_a_committed_offset_on_every_queue(
    operator, console_admin, console_cluster, group_of_two, group, topic
) -> None:
    before = committed(console_admin, console_cluster, group, topic)
    response = operator.post(f"/api/v1/groups/{group}/reset-offset", {"topic": topic, "timestamp": 0}, format="json")
    assert response.status_code == 409 and "broker-b:2" in response.json()["detail"]
    assert committed(console_admin, console_cluster, group, topic) == before
    entry = AuditEntry.objects.get(action="group.reset_offset", target=group)
    assert entry.result == "failed" and "no committed offset" in entry.reason


def test_reset_online_pushes_the_offsets_to_every_member(
    operator, console_admin, console_cluster, topic, group, members
) -> None:
    member, pushed, arrived = member_recording_resets(console_cluster, members, group, topic, "resetter")
    response = operator.post(
        f"/api/v1/groups/{group}/reset-offset", {"topic": topic, "timestamp": "1970-01-01T00:00:00Z"}, format="json"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["mode"] == "online" and body["applied"] is True
    assert {q["after"] for q in body["queues"]} == {0} and {q["before"] for q in body["queues"]} == {2}
    assert arrived.wait(5) and pushed[0].ext_fields["group"] == group and pushed[0].ext_fields["topic"] == topic
    assert set(committed(console_admin, console_cluster, group, topic).values()) == {0}
    entry = AuditEntry.objects.get(action="group.reset_offset", target=group)
    assert (
        entry.result == "ok"
        and entry.before["offsets"]["broker-a:0"] == 2
        and entry.after["offsets"]["broker-a:0"] == 0
    )


def test_reset_offline_writes_each_queue(operator, console_admin, console_cluster, topic, group, members) -> None:
    send(console_cluster, topic, 8)
    time.sleep(0.3)
    start = int(
        time.time() * 1000
    )  # nearer the second message of each queue than the first (RocketMQ takes the nearer)
    send(console_cluster, topic, 8)
    member = members(group, topic, "gone-soon")
    queues = member.fetch_subscribe_message_queues(topic)
    for mq in queues[:2]:
        member.update_offset(mq, 2)
    member.close()
    deadline = time.monotonic() + 10
    while operator.get(f"/api/v1/groups/{group}").json()["online"] and time.monotonic() < deadline:
        time.sleep(0.1)
    response = operator.post(
        f"/api/v1/groups/{group}/reset-offset", {"topic": topic, "timestamp": start}, format="json"
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["mode"] == "offline" and {q["after"] for q in body["queues"]} == {1}
    assert (
        set(committed(console_admin, console_cluster, group, topic).values()) == {1}
        and len(committed(console_admin, console_cluster, group, topic)) == 8
    )


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"topic": "T", "timestamp": "yesterday"}, "timestamp"),
        ({"topic": "T", "timestamp": True}, "timestamp"),
        ({"topic": "T", "timestamp": "2024-13-01T00:00:00"}, "timestamp"),
        ({"topic": "T"}, "timestamp"),
        ({"timestamp": 0}, "topic"),
        ({"topic": 5, "timestamp": 0}, "topic"),
        ({"topic": "T", "timestamp": 0, "force": True}, "force"),
        ({"topic": "bad topic", "timestamp": 0}, "topic"),
    ],
)
def test_reset_refuses_bad_input(
    operator, console_admin, console_cluster, group_of_two, group, topic, body, field
) -> None:
    before = committed(console_admin, console_cluster, group, topic)
    response = operator.post(f"/api/v1/groups/{group}/reset-offset", body, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()["fields"], response.json()
    assert committed(console_admin, console_cluster, group, topic) == before


def test_reset_unknown_topic_or_group_is_404_and_a_viewer_is_403(operator, viewer, group_of_two, group, topic) -> None:
    assert (
        operator.post(
            f"/api/v1/groups/{group}/reset-offset", {"topic": "NoSuchTopic_y", "timestamp": 0}, format="json"
        ).status_code
        == 404
    )
    assert (
        operator.post(
            "/api/v1/groups/NoSuchGroup_y/reset-offset", {"topic": topic, "timestamp": 0}, format="json"
        ).status_code
        == 404
    )
    response = viewer.post(f"/api/v1/groups/{group}/reset-offset", {"topic": topic, "timestamp": 0}, format="json")
    assert response.status_code == 403
    assert viewer.get(f"/api/v1/groups/{group}/reset-offset", {"topic": topic, "timestamp": "x"}).status_code == 400


def test_list_tps_is_the_brokers_consume_tps_not_the_samplers_offsets(
    viewer, console_cluster, topic, group, members, lake
) -> None:
    """Offsets committed without pulling (as a reset would) move the sampler's figures, not the
    brokers' consumeTps: the list shows the brokers' figure, as the progress API does."""
    from analytics.sampler import metrics_sample

    send(console_cluster, topic, 8)
    member = members(group, topic, "tps")
    queues = member.fetch_subscribe_message_queues(topic)
    for mq in queues:
        member.update_offset(mq, 0)  # the group has offsets on every queue: it is listed, and sampled
    metrics_sample()
    for mq in queues:
        member.update_offset(mq, 1)  # committed, nothing pulled
    metrics_sample()
    tps = viewer.get("/api/v1/groups", {"search": group}).json()["results"][0]["tps"]
    assert tps == viewer.get(f"/api/v1/groups/{group}/progress").json()["consume_tps"] == 0.0
