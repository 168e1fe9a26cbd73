"""Resetting a group's offsets to now, the earliest or the latest offset, or one queue's offset
(the API and the page once took free text only). Each against a real cluster;
each refusal names its field and changes nothing."""

from __future__ import annotations

import time

import pytest

from brokers.engine.client.admin_bodies import load_object

from console.models import AuditEntry
from tests.consumers._groups import member_recording_resets, send
from tests.consumers.test_groups_api import committed

pytestmark = pytest.mark.django_db


@pytest.fixture
def offline_group(console_cluster, topic, group, members, operator):
    """16 messages, 2 per queue; a member committed offset 1 on every queue, then left."""
    send(console_cluster, topic, 16)
    member = members(group, topic, "gone")
    for mq in member.fetch_subscribe_message_queues(topic):
        member.update_offset(mq, 1)
    member.close()
    deadline = time.monotonic() + 10
    while operator.get(f"/api/v1/groups/{group}").json()["online"] and time.monotonic() < deadline:
        time.sleep(0.1)
    return group


def reset(client, group: str, **body):
    return client.post(f"/api/v1/groups/{group}/reset-offset", body, format="json")


def test_earliest_and_latest_move_every_queue_to_its_min_and_max(
    operator, console_admin, console_cluster, topic, offline_group
) -> None:
    group = offline_group
    latest = reset(operator, group, topic=topic, to="latest")
    assert latest.status_code == 200, latest.content
    body = latest.json()
    assert (
        body["to"] == "latest"
        and body["target"] == "the latest offset"
        and body["timestamp_ms"] is None
        and body["time"] is None
    )
    assert set(committed(console_admin, console_cluster, group, topic).values()) == {2}
    earliest = reset(operator, group, topic=topic, to="earliest")
    assert earliest.status_code == 200, earliest.content
    assert {q["change"] for q in earliest.json()["queues"]} == {2}  # both messages of each queue consumed again
    assert set(committed(console_admin, console_cluster, group, topic).values()) == {0}
    entry = AuditEntry.objects.filter(action="group.reset_offset", target=group, result="ok").latest("id")
    assert entry.before["to"] == "earliest" and entry.before["target"] == "the earliest offset"
    assert entry.after["offsets"]["broker-a:0"] == 0


def test_now_goes_to_the_message_stored_nearest_to_now_as_mqadmin_does(
    operator, console_admin, console_cluster, topic, offline_group
) -> None:
    plan = operator.get(f"/api/v1/groups/{offline_group}/reset-offset", {"topic": topic, "to": "now"}).json()
    assert plan["to"] == "now" and plan["target"].startswith("now (") and plan["timestamp_ms"] <= time.time() * 1000
    assert {q["after"] for q in plan["queues"]} == {1} and plan["applied"] is False  # each queue's last message
    assert set(committed(console_admin, console_cluster, offline_group, topic).values()) == {1}


def test_one_queues_offset_sets_that_queue_only(operator, console_admin, console_cluster, topic, offline_group) -> None:
    response = reset(operator, offline_group, topic=topic, to="offset", broker="broker-b", queue_id=2, offset=0)
    assert response.status_code == 200, response.content
    assert [(q["broker_name"], q["queue_id"], q["before"], q["after"]) for q in response.json()["queues"]] == [
        ("broker-b", 2, 1, 0)
    ]
    offsets = committed(console_admin, console_cluster, offline_group, topic)
    assert offsets[("broker-b", 2)] == 0 and {v for k, v in offsets.items() if k != ("broker-b", 2)} == {1}


def test_one_queues_offset_of_an_online_group_is_pushed_by_that_queues_broker(
    operator, console_admin, console_cluster, topic, group, members
) -> None:
    """RocketMQ 5's queueId/offset of INVOKE_BROKER_TO_RESET_OFFSET: the broker pushes a table of that one queue."""
    member, pushed, arrived = member_recording_resets(console_cluster, members, group, topic, "online")
    before = committed(console_admin, console_cluster, group, topic)
    response = reset(operator, group, topic=topic, to="offset", broker="broker-b", queue_id=1, offset=0)
    assert response.status_code == 200, response.content
    assert response.json()["mode"] == "online"
    assert arrived.wait(5) and pushed[0].ext_fields["group"] == group
    table = load_object(pushed[0].body)["offsetTable"]
    assert len(table) == 1 and list(table.values()) == [0]
    after = committed(console_admin, console_cluster, group, topic)
    assert after[("broker-b", 1)] == 0 and {k: v for k, v in after.items() if k != ("broker-b", 1)} == {
        k: v for k, v in before.items() if k != ("broker-b", 1)
    }


@pytest.mark.parametrize(
    ("body", "field", "says"),
    [
        ({"to": "bogus"}, "to", "bogus"),
        ({"to": "latest", "timestamp": 0}, "timestamp", "takes no timestamp"),
        ({"to": "earliest", "broker": "broker-a"}, "broker", "to=offset"),
        ({"to": "offset", "queue_id": 0, "offset": 0}, "broker", "broker"),
        ({"to": "offset", "broker": "broker-a", "offset": 0}, "queue_id", "whole number"),
        ({"to": "offset", "broker": "broker-a", "queue_id": 0, "offset": -1}, "offset", "whole number"),
        ({"to": "offset", "broker": "broker-a", "queue_id": True, "offset": 0}, "queue_id", "whole number"),
        (
            {"to": "offset", "broker": "broker-z", "queue_id": 0, "offset": 0},
            "broker",
            "its brokers: broker-a, broker-b",
        ),
        ({"to": "offset", "broker": "broker-a", "queue_id": 9, "offset": 0}, "queue_id", "queues 0-3"),
        ({"to": "offset", "broker": "broker-a", "queue_id": 0, "offset": 3}, "offset", "holds offsets 0 to 2"),
    ],
)
def test_bad_targets_are_refused_naming_the_field(
    operator, console_admin, console_cluster, topic, offline_group, body, field, says
) -> None:
    before = committed(console_admin, console_cluster, offline_group, topic)
    response = reset(operator, offline_group, topic=topic, **body)
    assert response.status_code == 400, response.content
    assert says in " ".join(response.json()["fields"][field]), response.json()
    assert committed(console_admin, console_cluster, offline_group, topic) == before
