"""The queue-count advisor: the findings an operator acts on, from a real cluster through
/api/v1/topics/{name}/advice and /api/v1/groups/{name}/advice, and the pure rules' edges."""

from __future__ import annotations

import pytest

from brokers.engine.client.simple import PullClient
from brokers.engine.common.message_queue import MessageQueue
from consumers.advisor import group_advice
from consumers.types import GroupDetail, GroupProgress, Member, QueueProgress
from topics.advisor import topic_advice
from topics.types import BrokerQueues, QueueStatus, TopicConsumerRow, TopicConsumers, TopicDetail, TopicStatus
from tests.consumers._groups import send

pytestmark = pytest.mark.django_db

URL = "/api/v1/topics"


def kinds(body: dict) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for a in body["advice"]:
        found.setdefault(a["kind"], []).append(a["subject"])
    return found


def test_a_topic_with_unreadable_write_queues_and_more_members_than_queues(
    operator, viewer, console_cluster, topic_name, members
) -> None:
    response = operator.post(
        URL,
        {"name": topic_name, "cluster": console_cluster.cluster, "read_queue_nums": 1, "write_queue_nums": 2},
        format="json",
    )
    assert response.status_code == 201, response.content
    group = "G_" + topic_name[2:]
    for i in range(3):  # 3 members for 2 readable queues (1 per broker)
        members(group, topic_name, f"advisor-{i}")
    body = viewer.get(f"{URL}/{topic_name}/advice").json()
    assert body["name"] == topic_name
    found = kinds(body)
    assert sorted(found["write-not-readable"]) == ["broker-a", "broker-b"]
    assert found["idle-consumers"] == [group]
    unread = next(a for a in body["advice"] if a["kind"] == "write-not-readable")
    assert unread["severity"] == "warning" and unread["action"] == "edit"
    assert (
        "raise broker-a's read queues to 2" in unread["suggestion"]
        or "raise broker-b's read queues to 2" in unread["suggestion"]
    )
    idle = next(a for a in body["advice"] if a["kind"] == "idle-consumers")
    assert "3 online members for 2 readable queues" in idle["finding"]


def test_a_balanced_topic_has_nothing_to_change(viewer, topic) -> None:
    assert viewer.get(f"{URL}/{topic}/advice").json() == {"name": topic, "advice": []}


def test_a_group_whose_lag_sits_on_one_queue(viewer, console_cluster, topic, group) -> None:
    hot = MessageQueue(topic, "broker-a", 0)
    send(console_cluster, topic, 1000, mq=hot)
    send(console_cluster, topic, 10, mq=MessageQueue(topic, "broker-b", 1))
    with PullClient(console_cluster.namesrv_addr, group, heartbeat_interval_s=None) as client:
        for broker in ("broker-a", "broker-b"):
            for q in range(4):
                client.update_offset(MessageQueue(topic, broker, q), 0)
    body = viewer.get(f"/api/v1/groups/{group}/advice").json()
    assert [a["kind"] for a in body["advice"]] == ["lag-on-one-queue"]
    assert f"{topic} broker-a:0" in body["advice"][0]["subject"] and "1,000 of 1,010" in body["advice"][0]["finding"]


def test_unknown_topic_and_group_are_404(viewer, console_cluster) -> None:
    assert viewer.get(f"{URL}/T_no_such_topic_here/advice").status_code == 404
    assert viewer.get("/api/v1/groups/G_no_such_group_here/advice").status_code == 404


# -- the rules on their own ------------------------------------------------------------------------


def detail(*brokers: tuple[str, int, int, int]) -> TopicDetail:
    return TopicDetail("T", "normal", tuple(BrokerQueues(b, "c", "addr", r, w, perm) for b, r, w, perm in brokers))


def status(counts: dict[tuple[str, int], int]) -> TopicStatus:
    return TopicStatus("T", tuple(QueueStatus(b, q, 0, n, 1) for (b, q), n in counts.items()))


NO_GROUPS = TopicConsumers("T", ())


def test_read_queues_nobody_writes_point_to_safe_shrink() -> None:
    advice = topic_advice(detail(("a", 8, 4, 6)), status({}), NO_GROUPS)
    assert [(a.kind, a.action) for a in advice] == [("read-not-written", "shrink")]


def test_hot_broker_and_skewed_queue_need_enough_messages() -> None:
    layout = detail(("a", 2, 2, 6), ("b", 2, 2, 6))
    skewed = {("a", 0): 900, ("a", 1): 30, ("b", 0): 30, ("b", 1): 40}
    assert {a.kind for a in topic_advice(layout, status(skewed), NO_GROUPS)} == {"hot-broker", "skewed-queues"}
    quiet = {k: n // 100 for k, n in skewed.items()}  # the same shape, 10 messages in all: noise
    assert topic_advice(layout, status(quiet), NO_GROUPS) == ()
    even = {("a", 0): 250, ("a", 1): 250, ("b", 0): 250, ("b", 1): 250}
    assert topic_advice(layout, status(even), NO_GROUPS) == ()


def test_write_only_broker_queues_are_not_counted_as_readable() -> None:
    layout = detail(("a", 2, 2, 6), ("b", 2, 2, 2))  # b write-only: its queues cannot be read
    consumers = TopicConsumers("T", ("G",), (), (TopicConsumerRow("G", 3, 0, 0.0),))
    advice = topic_advice(layout, status({}), consumers)
    assert [a.kind for a in advice] == ["idle-consumers"] and "for 2 readable queues" in advice[0].finding


def group(queues, *, members: int = 1, model: str = "CLUSTERING", not_answering=()) -> GroupDetail:
    people = tuple(Member(f"c{i}", "addr", "PYTHON", "V4", ()) for i in range(members))
    return GroupDetail(
        "G",
        members > 0,
        "PUSH",
        model,
        "LAST",
        people,
        (),
        GroupProgress("G", None, tuple(queues), 0.0),
        ("a",),
        not_answering=not_answering,
    )


def test_group_rules() -> None:
    owned = [QueueProgress("T", "a", q, 10, 10, 0, owner="c0") for q in range(2)]
    assert group_advice(group(owned, members=3))[0].kind == "idle-consumers"
    assert group_advice(group(owned, members=3, model="BROADCASTING")) == ()  # every member reads every queue
    unowned = [QueueProgress("T", "a", q, 10, 10, 0) for q in range(2)]
    assert [a.kind for a in group_advice(group(unowned, members=2))] == ["unowned-queues"]
    assert group_advice(group(unowned, members=2, not_answering=("c1",))) == ()  # owners unknown: no claim
