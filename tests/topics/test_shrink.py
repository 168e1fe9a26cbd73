"""Safe shrink through /api/v1/topics/{name}/shrink and the /topics/{name}/shrink page: lower the
write queues, wait until every group consumed the tail queues, then lower the read queues; a step
taken too early is refused and changes nothing."""

from __future__ import annotations

import pytest

from console.models import AuditEntry
from tests.brokers.engine.client._cluster import create_topic
from tests.consumers._groups import consume, send

pytestmark = pytest.mark.django_db


@pytest.fixture
def shrinking(console_cluster, console_admin, topic_name, members):
    """4 queues per broker, 2 messages in each; a member consumed queues 0 and 1 of each broker."""
    create_topic(console_admin, console_cluster, topic_name, queues=4)
    send(console_cluster, topic_name, 16)
    member = members(f"G_{topic_name[2:]}", topic_name, "shrink-member")
    queues = member.fetch_subscribe_message_queues(topic_name)
    consume(member, [q for q in queues if q.queue_id < 2])
    return topic_name, member, queues


def counts(admin_mq, cluster, topic: str) -> dict:
    return {
        b: (tc.read_queue_nums, tc.write_queue_nums)
        for b in cluster.broker_names
        for name, tc in admin_mq.get_all_topic_config(cluster.broker_addr(b)).items()
        if name == topic
    }


def url(topic: str) -> str:
    return f"/api/v1/topics/{topic}/shrink"


def test_a_whole_shrink_without_losing_a_message(operator, viewer, console_admin, console_cluster, shrinking) -> None:
    topic, member, queues = shrinking
    group = member.group
    plan = viewer.get(url(topic), {"target_queue_nums": 2}).json()
    assert plan["step"] == "write" and plan["groups"] == [group] and plan["messages_left"] == 8
    assert [(q["broker_name"], q["queue_id"], q["max_offset"]) for q in plan["tail"]] == [
        ("broker-a", 2, 2),
        ("broker-a", 3, 2),
        ("broker-b", 2, 2),
        ("broker-b", 3, 2),
    ]
    assert plan["tail"][0]["groups"] == [{"group": group, "consumer_offset": -1, "lag": 2}]

    response = operator.post(url(topic), {"target_queue_nums": 2, "step": "read"}, format="json")
    assert response.status_code == 409 and "lower the write queues" in response.json()["detail"]
    assert counts(console_admin, console_cluster, topic) == {"broker-a": (4, 4), "broker-b": (4, 4)}

    response = operator.post(url(topic), {"target_queue_nums": 2, "step": "write"}, format="json")
    assert response.status_code == 200, response.content
    status = response.json()
    assert status["step"] == "read" and status["ready"] is False and status["drained"] is False
    assert counts(console_admin, console_cluster, topic) == {"broker-a": (4, 2), "broker-b": (4, 2)}
    assert any(f"group {group} has 2 messages left in broker-a queue 2" == b for b in status["blockers"])

    send(console_cluster, topic, 8)  # producers now write to queues 0 and 1 only
    assert [q["max_offset"] for q in viewer.get(url(topic)).json()["tail"]] == [
        2,
        2,
        2,
        2,
    ]  # the shrink under way, found without a target

    response = operator.post(url(topic), {"target_queue_nums": 2, "step": "read"}, format="json")
    assert response.status_code == 409 and "not drained" in response.json()["detail"]
    assert counts(console_admin, console_cluster, topic) == {"broker-a": (4, 2), "broker-b": (4, 2)}

    consume(member, [q for q in queues if q.queue_id >= 2])
    status = viewer.get(url(topic), {"target_queue_nums": 2}).json()
    assert status["drained"] and status["ready"] and status["messages_left"] == 0 and status["blockers"] == []
    response = operator.post(url(topic), {"target_queue_nums": 2, "step": "read"}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["step"] == "done" and response.json()["tail"] == []
    assert counts(console_admin, console_cluster, topic) == {"broker-a": (2, 2), "broker-b": (2, 2)}
    steps = [
        e.after["step"]
        for e in AuditEntry.objects.filter(action="topic.shrink", target=topic, result="ok").order_by("id")
    ]
    assert steps == ["write", "read"]
    assert AuditEntry.objects.filter(action="topic.shrink", target=topic, result="failed").count() == 2


def test_the_read_step_waits_for_producers_to_see_the_route(
    operator, console_admin, console_cluster, topic_name, settings
) -> None:
    settings.GANTRY_SHRINK_SETTLE_S = 30
    create_topic(console_admin, console_cluster, topic_name, queues=2)
    assert operator.post(url(topic_name), {"target_queue_nums": 1, "step": "write"}, format="json").status_code == 200
    response = operator.post(url(topic_name), {"target_queue_nums": 1, "step": "read"}, format="json")
    assert response.status_code == 409 and "producers may still write" in response.json()["detail"]
    assert counts(console_admin, console_cluster, topic_name) == {"broker-a": (2, 1), "broker-b": (2, 1)}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"target_queue_nums": 4, "step": "write"}, "target_queue_nums"),
        ({"target_queue_nums": -1, "step": "write"}, "target_queue_nums"),
        ({"target_queue_nums": "2", "step": "write"}, "target_queue_nums"),
        ({"target_queue_nums": 2, "step": "sideways"}, "step"),
        ({"target_queue_nums": 2}, "step"),
        ({"target_queue_nums": 2, "step": "write", "force": True}, "force"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(
    operator, console_admin, console_cluster, topic_name, body, field
) -> None:
    create_topic(console_admin, console_cluster, topic_name, queues=4)
    response = operator.post(url(topic_name), body, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()["fields"]
    assert counts(console_admin, console_cluster, topic_name) == {"broker-a": (4, 4), "broker-b": (4, 4)}


def test_unknown_topic_viewer_and_anonymous(
    operator, viewer, api_client_as, console_admin, console_cluster, topic_name
) -> None:
    assert (
        operator.post(url("NoSuchTopic_s"), {"target_queue_nums": 1, "step": "write"}, format="json").status_code == 404
    )
    assert viewer.get(url("NoSuchTopic_s")).status_code == 404
    create_topic(console_admin, console_cluster, topic_name, queues=2)
    assert viewer.post(url(topic_name), {"target_queue_nums": 1, "step": "write"}, format="json").status_code == 403
    assert api_client_as(None).get(url(topic_name)).status_code == 401
    assert viewer.get(url(topic_name), {"target_queue_nums": "many"}).status_code == 400
    assert viewer.get(url(topic_name)).json()["step"] == "plan"
    assert counts(console_admin, console_cluster, topic_name) == {"broker-a": (2, 2), "broker-b": (2, 2)}


def test_the_shrink_page_takes_both_steps(client, make_user, console_admin, console_cluster, shrinking) -> None:
    topic, member, queues = shrinking
    client.force_login(make_user("operator"))
    page = client.get(f"/topics/{topic}/shrink", {"target_queue_nums": 2}).content.decode()
    assert "step 1: lower the write queues" in page and 'data-testid="lower-write"' in page and member.group in page
    response = client.post(f"/topics/{topic}/shrink", {"target_queue_nums": 2, "step": "write"})
    assert response.status_code == 302 and response["Location"] == f"/topics/{topic}/shrink?target_queue_nums=2"
    fragment = client.get(response["Location"], HTTP_HX_REQUEST="true").content.decode()
    assert "step 2: waiting for consumers" in fragment and "<html" not in fragment
    refused = client.post(f"/topics/{topic}/shrink", {"target_queue_nums": 2, "step": "read"})
    assert refused.status_code == 409 and "not drained" in refused.content.decode()
    consume(member, [q for q in queues if q.queue_id >= 2])
    assert client.post(f"/topics/{topic}/shrink", {"target_queue_nums": 2, "step": "read"}).status_code == 302
    assert counts(console_admin, console_cluster, topic) == {"broker-a": (2, 2), "broker-b": (2, 2)}


def test_a_viewer_sees_the_page_but_may_not_step(client, make_user, console_admin, console_cluster, topic_name) -> None:
    create_topic(console_admin, console_cluster, topic_name, queues=2)
    client.force_login(make_user("viewer"))
    page = client.get(f"/topics/{topic_name}/shrink", {"target_queue_nums": 1}).content.decode()
    assert "step 1" in page and "lower-write" not in page
    assert client.post(f"/topics/{topic_name}/shrink", {"target_queue_nums": 1, "step": "write"}).status_code == 403


def test_a_target_with_nothing_to_take_away_is_refused_not_done(
    viewer, client, make_user, console_admin, console_cluster, topic_name
) -> None:
    """A 4-queue topic read "Shrink to 8 queues per broker: done"."""
    create_topic(console_admin, console_cluster, topic_name, queues=4)
    for target in (8, 4):
        response = viewer.get(url(topic_name), {"target_queue_nums": target})
        assert response.status_code == 400, response.content
        reason = response.json()["fields"]["target_queue_nums"][0]
        assert "at most 4 queues per broker" in reason and "below 4" in reason, reason
    client.force_login(make_user("viewer"))
    page = client.get(f"/topics/{topic_name}/shrink", {"target_queue_nums": 8})
    text = page.content.decode()
    assert page.status_code == 400 and "at most 4 queues per broker" in text and "per broker:" not in text
    assert viewer.get(url(topic_name), {"target_queue_nums": 3}).json()["step"] == "write"


def test_a_shrink_to_no_queue_drains_the_topic(
    operator, viewer, operator_client, console_admin, console_cluster, topic_name
) -> None:
    """0 is a queue count RocketMQ takes (brokers/engine/common/queue_nums.py): producers stop, then the read queues go."""
    create_topic(console_admin, console_cluster, topic_name, queues=2)
    response = operator.post(url(topic_name), {"target_queue_nums": 0, "step": "write"}, format="json")
    assert response.status_code == 200, response.content
    assert counts(console_admin, console_cluster, topic_name) == {"broker-a": (2, 0), "broker-b": (2, 0)}
    under_way = viewer.get(url(topic_name)).json()  # found without a target: the one under way
    assert under_way["target_queue_nums"] == 0 and under_way["step"] == "read" and under_way["drained"]
    page = operator_client.get(f"/topics/{topic_name}/shrink").content.decode()
    assert "?target_queue_nums=0" in page and "Lower the read queues to 0" in page
    response = operator.post(url(topic_name), {"target_queue_nums": 0, "step": "read"}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["step"] == "done"
    assert counts(console_admin, console_cluster, topic_name) == {"broker-a": (0, 0), "broker-b": (0, 0)}
