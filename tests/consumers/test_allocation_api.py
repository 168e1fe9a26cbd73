"""POST /api/v1/allocation/preview and /compare: hypothetical and live inputs, what-if, and every refusal.

The previews change nothing, so viewers may post them; the answers are the pure core's
(``allocate_all``), in the shape scripts rely on.
"""

from __future__ import annotations

import pytest

from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.client.allocation import allocate_all, get_strategy

pytestmark = pytest.mark.django_db

PREVIEW, COMPARE = "/api/v1/allocation/preview", "/api/v1/allocation/compare"


def q(broker: str, qid: int, topic: str = "T") -> dict:
    return {"topic": topic, "broker_name": broker, "queue_id": qid}


QUEUES = [q(b, i) for b in ("broker-a", "broker-b", "broker-c") for i in range(3)]
CIDS = ["c3", "c1", "c0", "c2"]


def keys(queues: list[dict]) -> list[str]:
    return [f"{x['broker_name'][-1]}{x['queue_id']}" for x in queues]


def test_preview_of_a_made_up_group_is_the_cores_allocation(viewer, console_cluster) -> None:
    response = viewer.post(PREVIEW, {"strategy": "AVG", "queues": QUEUES, "cids": CIDS}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert {cid: keys(qs) for cid, qs in body["assignments"].items()} == {
        "c0": ["a0", "a1", "a2"],
        "c1": ["b0", "b1"],
        "c2": ["b2", "c0"],
        "c3": ["c1", "c2"],
    }
    expected = allocate_all(get_strategy("AVG"), [MessageQueue(**x) for x in QUEUES], CIDS)
    assert body["assignments"] == {cid: [q(m.broker_name, m.queue_id) for m in qs] for cid, qs in expected.items()}
    assert body["owners"]["T/broker-a/0"] == ["c0"] and len(body["owners"]) == 9
    assert body["balance"] == 1 and body["idle"] == [] and body["unassigned"] == [] and "moved" not in body


def test_preview_with_more_clients_than_queues_names_the_idle(viewer, console_cluster) -> None:
    body = viewer.post(
        PREVIEW, {"strategy": "AVG_BY_CIRCLE", "queues": QUEUES[:2], "cids": ["a", "b", "c"]}, format="json"
    ).json()
    assert body["idle"] == ["c"] and body["balance"] == 1


def test_config_shares_queues_and_leaves_others_unowned(viewer, console_cluster) -> None:
    body = viewer.post(
        PREVIEW,
        {"strategy": "CONFIG", "params": {"message_queue_list": [QUEUES[0]]}, "queues": QUEUES[:3], "cids": ["a", "b"]},
        format="json",
    ).json()
    assert body["shared"] == [{"queue": QUEUES[0], "cids": ["a", "b"]}]
    assert body["unassigned"] == QUEUES[1:3]


def test_consistent_hash_and_nearby_take_their_parameters(viewer, console_cluster) -> None:
    body = viewer.post(
        PREVIEW,
        {"strategy": "CONSISTENT_HASH", "params": {"virtual_node_cnt": 3}, "queues": QUEUES, "cids": CIDS},
        format="json",
    ).json()
    expected = allocate_all(
        get_strategy("CONSISTENT_HASH", virtual_node_cnt=3), [MessageQueue(**x) for x in QUEUES], CIDS
    )
    assert {c: keys(v) for c, v in body["assignments"].items()} == {
        c: [f"{m.broker_name[-1]}{m.queue_id}" for m in v] for c, v in expected.items()
    }
    rooms = [q(f"hz@b{i}", 0) for i in range(2)] + [q(f"sh@b{i}", 0) for i in range(2)]
    body = viewer.post(
        PREVIEW,
        {"strategy": "MACHINE_ROOM_NEARBY", "params": {"inner": "AVG"}, "queues": rooms, "cids": ["hz@c1", "sh@c2"]},
        format="json",
    ).json()
    assert body["strategy"] == "MACHINE_ROOM_NEARBY-AVG"
    assert {c: [x["broker_name"] for x in v] for c, v in body["assignments"].items()} == {
        "hz@c1": ["hz@b0", "hz@b1"],
        "sh@c2": ["sh@b0", "sh@b1"],
    }


def test_what_if_with_current_answers_what_moves(viewer, console_cluster) -> None:
    current = {"c0": QUEUES[:5], "c1": QUEUES[5:]}
    body = viewer.post(
        PREVIEW, {"strategy": "AVG", "queues": QUEUES, "cids": ["c0", "c1", "c2"], "current": current}, format="json"
    ).json()
    moved = body["moved"]
    assert (
        moved["queues_moved"] == 5 and moved["queues_released"] == 0
    )  # b0 b1 to c1, c0-c2 to c2 and moved["queues_picked_up"] == 0
    assert keys(moved["gains"]["c2"]) == ["c0", "c1", "c2"] and keys(moved["losses"]["c1"]) == ["c0", "c1", "c2"]


def test_what_if_scenario_adds_a_client_and_takes_a_broker_down(viewer, console_cluster) -> None:
    body = viewer.post(
        PREVIEW,
        {
            "strategy": "AVG",
            "queues": QUEUES,
            "cids": ["c0", "c1", "c2"],
            "scenario": {"add_consumers": ["c3"], "brokers_down": ["broker-c"], "queue_counts": {"broker-b": 4}},
        },
        format="json",
    ).json()
    assert set(body["assignments"]) == {"c0", "c1", "c2", "c3"} and len(body["owners"]) == 7  # a0-a2, b0-b3
    assert body["before"]["assignments"]["c2"] == QUEUES[6:9]
    assert body["moved"]["queues_released"] == 3 and body["moved"]["queues_picked_up"] == 1  # broker-c gone, b3 new


def test_live_topic_and_group(viewer, console_cluster, topic, group, members) -> None:
    a, b = members(group, topic, "live-a"), members(group, topic, "live-b")
    body = viewer.post(PREVIEW, {"strategy": "AVG", "topic": topic, "group": group}, format="json").json()
    assert sorted(body["assignments"]) == sorted([a.client_id, b.client_id])
    assert len(body["owners"]) == 8 and body["balance"] == 0
    assert (
        viewer.post(PREVIEW, {"strategy": "AVG", "topic": "NoSuchTopic_z", "cids": ["a"]}, format="json").status_code
        == 404
    )
    assert (
        viewer.post(PREVIEW, {"strategy": "AVG", "topic": topic, "group": "NoSuchGroup_z"}, format="json").status_code
        == 404
    )


def test_compare_every_strategy_side_by_side(viewer, console_cluster) -> None:
    body = viewer.post(
        COMPARE, {"queues": QUEUES, "cids": CIDS, "params": {"CONSISTENT_HASH": {"virtual_node_cnt": 5}}}, format="json"
    ).json()
    rows = {r["strategy"]: r for r in body["strategies"]}
    assert list(rows) == ["AVG", "AVG_BY_CIRCLE", "CONFIG", "MACHINE_ROOM", "MACHINE_ROOM_NEARBY", "CONSISTENT_HASH"]
    assert rows["AVG"]["skipped"] is None and rows["AVG"]["balance"] == 1
    assert (
        rows["CONFIG"]["skipped"] == "needs message_queue_list"
        and rows["MACHINE_ROOM"]["skipped"] == "needs consumeridcs"
    )
    assert rows["MACHINE_ROOM_NEARBY"]["skipped"] == "needs inner"
    assert body["queues"] == 9 and body["cids"] == ["c0", "c1", "c2", "c3"]
    body = viewer.post(
        COMPARE,
        {
            "queues": QUEUES,
            "cids": CIDS,
            "scenario": {"remove_consumers": ["c3"]},
            "params": {"MACHINE_ROOM_NEARBY": {"inner": "AVG"}},
        },
        format="json",
    ).json()
    rows = {r["strategy"]: r for r in body["strategies"]}
    assert rows["AVG"]["moved"]["queues_moved"] >= 2
    assert "room" in rows["MACHINE_ROOM_NEARBY"]["skipped"]  # the brokers and clients are not named room@...


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"strategy": "FASTEST", "queues": QUEUES, "cids": CIDS}, "strategy"),
        ({"strategy": 7, "queues": QUEUES, "cids": CIDS}, "strategy"),
        ({"strategy": "CONFIG", "queues": QUEUES, "cids": CIDS}, "params.message_queue_list"),
        ({"strategy": "MACHINE_ROOM", "params": {}, "queues": QUEUES, "cids": CIDS}, "params.consumeridcs"),
        (
            {"strategy": "MACHINE_ROOM_NEARBY", "params": {"inner": "CONFIG"}, "queues": QUEUES, "cids": CIDS},
            "params.inner",
        ),
        (
            {"strategy": "AVG", "params": {"virtual_node_cnt": 3}, "queues": QUEUES, "cids": CIDS},
            "params.virtual_node_cnt",
        ),
        (
            {"strategy": "CONSISTENT_HASH", "params": {"virtual_node_cnt": "3"}, "queues": QUEUES, "cids": CIDS},
            "params.virtual_node_cnt",
        ),
        (
            {"strategy": "CONSISTENT_HASH", "params": {"virtual_node_cnt": 0}, "queues": QUEUES, "cids": CIDS},
            "params.virtual_node_cnt",
        ),
        ({"strategy": "AVG", "params": [], "queues": QUEUES, "cids": CIDS}, "params"),
        (
            {"strategy": "AVG", "queues": [{"topic": "T", "broker_name": "b", "queue_id": "1"}], "cids": CIDS},
            "queues.0.queue_id",
        ),
        ({"strategy": "AVG", "queues": [{"topic": "T", "queue_id": 1}], "cids": CIDS}, "queues.0.broker_name"),
        (
            {"strategy": "AVG", "queues": [{"topic": "T", "broker_name": "b", "queue_id": 1, "x": 1}], "cids": CIDS},
            "queues.0.x",
        ),
        (
            {"strategy": "AVG", "queues": [{"topic": "a b", "broker_name": "b", "queue_id": 1}], "cids": CIDS},
            "queues.0.topic",
        ),
        ({"strategy": "AVG", "queues": ["broker-a:0"], "cids": CIDS}, "queues.0"),
        ({"strategy": "AVG", "queues": [], "cids": CIDS}, "queues"),
        ({"strategy": "AVG", "queues": QUEUES, "cids": "c1"}, "cids"),
        ({"strategy": "AVG", "queues": QUEUES, "cids": ["c1", 2]}, "cids.1"),
        ({"strategy": "AVG", "queues": QUEUES}, "group"),
        ({"strategy": "AVG", "topic": "T", "queues": QUEUES, "cids": CIDS}, "topic"),
        ({"strategy": "AVG", "queues": QUEUES, "cids": CIDS, "colour": "red"}, "colour"),
        ({"queues": QUEUES, "cids": CIDS}, "strategy"),
        (
            {"strategy": "AVG", "queues": QUEUES, "cids": CIDS, "current": {"c1": [{"topic": "T"}]}},
            "current.c1.0.broker_name",
        ),
        (
            {"strategy": "AVG", "queues": QUEUES, "cids": CIDS, "scenario": {"remove_consumers": ["nobody"]}},
            "scenario.remove_consumers",
        ),
        (
            {"strategy": "AVG", "queues": QUEUES, "cids": CIDS, "scenario": {"brokers_down": ["broker-z"]}},
            "scenario.brokers_down",
        ),
        (
            {"strategy": "AVG", "queues": QUEUES, "cids": CIDS, "scenario": {"queue_counts": {"broker-a": -1}}},
            "scenario.queue_counts.broker-a",
        ),
        ({"strategy": "AVG", "queues": QUEUES, "cids": CIDS, "scenario": {"explode": True}}, "scenario.explode"),
        (
            {"strategy": "MACHINE_ROOM_NEARBY", "params": {"inner": "AVG"}, "queues": QUEUES, "cids": CIDS},
            "params.broker_rooms",
        ),
        (
            {
                "strategy": "MACHINE_ROOM_NEARBY",
                "params": {"inner": "AVG", "broker_rooms": {"broker-a": "hz", "broker-b": "hz", "broker-c": "sh"}},
                "queues": QUEUES,
                "cids": CIDS,
            },
            "params.consumer_rooms",
        ),
    ],
)
def test_preview_refuses_bad_input_naming_the_field(viewer, console_cluster, body, field) -> None:
    response = viewer.post(PREVIEW, body, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()["fields"], response.json()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"queues": QUEUES, "cids": CIDS, "params": {"FASTEST": {}}}, "params.FASTEST"),
        (
            {"queues": QUEUES, "cids": CIDS, "params": {"CONFIG": {"message_queue_list": "a0"}}},
            "params.CONFIG.message_queue_list",
        ),
        ({"queues": QUEUES, "cids": CIDS, "strategy": "AVG"}, "strategy"),
    ],
)
def test_compare_refuses_bad_input(viewer, console_cluster, body, field) -> None:
    response = viewer.post(COMPARE, body, format="json")
    assert response.status_code == 400 and field in response.json()["fields"], response.json()


def test_previews_need_credentials(api_client_as, console_cluster) -> None:
    assert (
        api_client_as(None)
        .post(PREVIEW, {"strategy": "AVG", "queues": QUEUES, "cids": CIDS}, format="json")
        .status_code
        == 401
    )


def test_a_nearby_refusal_says_which_brokers_have_no_room_not_a_java_exception(viewer, console_cluster) -> None:
    body = viewer.post(
        PREVIEW,
        {
            "strategy": "MACHINE_ROOM_NEARBY",
            "params": {"inner": "AVG", "broker_rooms": {"broker-a": "hz"}},
            "queues": QUEUES,
            "cids": ["hz@c1"],
        },
        format="json",
    ).json()
    reason = body["fields"]["params.broker_rooms"][0]
    assert reason.startswith("MACHINE_ROOM_NEARBY does not know the machine room of brokers broker-b, broker-c"), reason
    assert '{"broker-b": "hz"}' in reason and "MessageQueue" not in reason and "null" not in reason
