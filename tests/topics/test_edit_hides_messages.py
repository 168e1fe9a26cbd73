"""Lowering a topic's read queues through PUT/PATCH /api/v1/topics/{name} hides the messages of the
queues it takes away: the edit is refused (400 naming ``confirm_unreachable_messages`` and how many
messages per broker), and changes nothing, unless that field equals the count; lowering the write
queues alone hides nothing and passes as before."""

from __future__ import annotations

import pytest

from brokers.engine.common.message_queue import MessageQueue
from console.models import AuditEntry
from tests.brokers.engine.client._cluster import create_topic
from tests.consumers._groups import send

pytestmark = pytest.mark.django_db

URL = "/api/v1/topics"


def counts(admin_mq, cluster, topic: str) -> dict:
    return {
        b: (tc.read_queue_nums, tc.write_queue_nums)
        for b in cluster.broker_names
        for name, tc in admin_mq.get_all_topic_config(cluster.broker_addr(b)).items()
        if name == topic
    }


@pytest.fixture
def four_queues(console_admin, console_cluster, topic_name):
    """4 queues per broker; broker-a's queues 2 and 3 hold 1 and 2 messages, broker-b's queue 3 one."""
    create_topic(console_admin, console_cluster, topic_name, queues=4)
    send(console_cluster, topic_name, 1, mq=MessageQueue(topic_name, "broker-a", 2))
    send(console_cluster, topic_name, 2, mq=MessageQueue(topic_name, "broker-a", 3))
    send(console_cluster, topic_name, 1, mq=MessageQueue(topic_name, "broker-b", 3))
    send(console_cluster, topic_name, 1, mq=MessageQueue(topic_name, "broker-b", 0))
    return topic_name


def test_patch_lowering_read_queues_is_refused_naming_the_count(
    operator, console_admin, console_cluster, four_queues
) -> None:
    topic = four_queues
    response = operator.patch(f"{URL}/{topic}", {"brokers": {"broker-a": {"read_queue_nums": 2}}}, format="json")
    assert response.status_code == 400, response.content
    reason = response.json()["fields"]["confirm_unreachable_messages"][0]
    assert "3 messages" in reason and "broker-a" in reason and "shrink" in reason, reason
    assert "go on writing to hidden queues (write queues above read queues on broker-a)" in reason
    assert counts(console_admin, console_cluster, topic) == {"broker-a": (4, 4), "broker-b": (4, 4)}
    failed = AuditEntry.objects.get(action="topic.update", target=topic)
    assert failed.result == "failed" and "3 messages" in failed.reason

    wrong = operator.patch(
        f"{URL}/{topic}",
        {"brokers": {"broker-a": {"read_queue_nums": 2}}, "confirm_unreachable_messages": 2},
        format="json",
    )
    assert wrong.status_code == 400 and "confirm_unreachable_messages" in wrong.json()["fields"]
    assert counts(console_admin, console_cluster, topic) == {"broker-a": (4, 4), "broker-b": (4, 4)}

    done = operator.patch(
        f"{URL}/{topic}",
        {"brokers": {"broker-a": {"read_queue_nums": 2}}, "confirm_unreachable_messages": 3},
        format="json",
    )
    assert done.status_code == 200, done.content
    assert counts(console_admin, console_cluster, topic) == {"broker-a": (2, 4), "broker-b": (4, 4)}
    ok = AuditEntry.objects.get(action="topic.update", target=topic, result="ok")
    assert ok.after["broker-a"]["read_queue_nums"] == 2 and "3 messages" in ok.reason


def test_put_in_cluster_mode_counts_every_broker(operator, console_admin, console_cluster, four_queues) -> None:
    topic = four_queues
    body = {"cluster": console_cluster.cluster, "read_queue_nums": 3, "write_queue_nums": 3}
    response = operator.put(f"{URL}/{topic}", body, format="json")
    assert response.status_code == 400, response.content
    reason = response.json()["fields"]["confirm_unreachable_messages"][0]
    assert "3 messages" in reason and "broker-a: 2" in reason and "broker-b: 1" in reason, reason
    assert "go on writing" not in reason  # read and write go down together
    assert counts(console_admin, console_cluster, topic) == {"broker-a": (4, 4), "broker-b": (4, 4)}
    response = operator.put(f"{URL}/{topic}", {**body, "confirm_unreachable_messages": 3}, format="json")
    assert response.status_code == 200, response.content
    assert counts(console_admin, console_cluster, topic) == {"broker-a": (3, 3), "broker-b": (3, 3)}


def test_lowering_write_queues_only_or_empty_tail_queues_passes(
    operator, console_admin, console_cluster, four_queues
) -> None:
    topic = four_queues
    response = operator.patch(f"{URL}/{topic}", {"write_queue_nums": 1}, format="json")
    assert response.status_code == 200, response.content
    assert counts(console_admin, console_cluster, topic) == {"broker-a": (4, 1), "broker-b": (4, 1)}
    response = operator.patch(f"{URL}/{topic}", {"brokers": {"broker-b": {"read_queue_nums": 6}}}, format="json")
    assert response.status_code == 200, response.content
    response = operator.patch(f"{URL}/{topic}", {"brokers": {"broker-b": {"read_queue_nums": 4}}}, format="json")
    assert response.status_code == 200, response.content  # queues 4 and 5 of broker-b are empty: nothing hidden
    assert counts(console_admin, console_cluster, topic) == {"broker-a": (4, 1), "broker-b": (4, 1)}
    response = operator.patch(f"{URL}/{topic}", {"brokers": {"broker-b": {"read_queue_nums": 3}}}, format="json")
    assert response.status_code == 400 and "1 message" in response.json()["fields"]["confirm_unreachable_messages"][0]


def test_the_confirmation_field_is_a_count(operator, console_cluster, four_queues) -> None:
    response = operator.patch(
        f"{URL}/{four_queues}", {"read_queue_nums": 4, "confirm_unreachable_messages": "three"}, format="json"
    )
    assert response.status_code == 400 and "confirm_unreachable_messages" in response.json()["fields"]


def test_taking_the_read_permission_away_is_refused_naming_the_count(
    operator, console_admin, console_cluster, four_queues
) -> None:
    """perm 2 (-W-) hides every queue of the broker from consumers, like read queues lowered to 0."""
    topic = four_queues
    perms = lambda: {
        b: tc.perm
        for b in console_cluster.broker_names  # noqa: E731
        for name, tc in console_admin.get_all_topic_config(console_cluster.broker_addr(b)).items()
        if name == topic
    }
    response = operator.patch(f"{URL}/{topic}", {"brokers": {"broker-b": {"perm": 2}}}, format="json")
    assert response.status_code == 400, response.content
    reason = response.json()["fields"]["confirm_unreachable_messages"][0]
    assert "taking the read permission away makes 2 messages unreachable" in reason, reason
    assert "broker-b: 2 (queues 0-3, no read permission)" in reason and "R--" in reason and "shrink" not in reason
    assert perms() == {"broker-a": 6, "broker-b": 6}
    assert (
        operator.patch(f"{URL}/{topic}", {"brokers": {"broker-b": {"perm": 4}}}, format="json").status_code == 200
    )  # R--: hides nothing
    done = operator.patch(
        f"{URL}/{topic}", {"brokers": {"broker-b": {"perm": 2}}, "confirm_unreachable_messages": 2}, format="json"
    )
    assert done.status_code == 200, done.content
    assert perms() == {"broker-a": 6, "broker-b": 2}
    assert (
        "no read permission"
        in AuditEntry.objects.filter(action="topic.update", target=topic, result="ok").latest("id").reason
    )
