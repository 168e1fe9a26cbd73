"""The topic pages: list (page and htmx fragment), create in both modes, detail, edit, delete,
test message; the form shows the API's messages; names are escaped; the cluster down is a 503 page."""

from __future__ import annotations

import re

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.client.simple import PullClient
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.topic_config import TopicConfig
from console.models import AuditEntry
from tests.brokers.engine.client._cluster import create_topic
from tests.consumers._groups import send

pytestmark = pytest.mark.django_db


def cluster_form(c, name: str, **overrides) -> dict:
    data = {
        "name": name,
        "mode": "cluster",
        "cluster": c.cluster,
        "read_queue_nums": "4",
        "write_queue_nums": "4",
        "perm": "6",
    }
    data.update(overrides)
    return data


def test_create_in_cluster_mode_then_see_per_broker_counts(operator_client, console_cluster, topic_name) -> None:
    page = operator_client.get("/topics/new")
    assert page.status_code == 200 and console_cluster.cluster in page.content.decode()
    response = operator_client.post("/topics/new", cluster_form(console_cluster, topic_name, read_queue_nums="6"))
    assert response.status_code == 302 and response["Location"] == f"/topics/{topic_name}/"
    detail = operator_client.get(response["Location"]).content.decode()
    assert "Topic " + topic_name + " created." in detail
    for broker in ("broker-a", "broker-b"):
        assert f'data-broker="{broker}"' in detail
    for broker in ("broker-a", "broker-b"):
        assert re.search(
            f'data-broker="{broker}">.*?<td class="num">6</td><td class="num">4</td><td><code>RW-</code>', detail, re.S
        )
    assert AuditEntry.objects.filter(action="topic.create", target=topic_name, source="console", result="ok").exists()


def test_create_in_broker_mode(operator_client, console_cluster, topic_name) -> None:
    data = {
        "name": topic_name,
        "mode": "broker",
        "brokers.broker-a.enabled": "on",
        "brokers.broker-a.read_queue_nums": "3",
        "brokers.broker-a.write_queue_nums": "2",
        "brokers.broker-a.perm": "6",
        "brokers.broker-b.read_queue_nums": "8",
        "brokers.broker-b.write_queue_nums": "8",
        "brokers.broker-b.perm": "6",
    }
    response = operator_client.post("/topics/new", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    listing = operator_client.get("/topics/", {"q": topic_name}).content.decode()
    assert topic_name in listing
    assert '<td class="num">3</td><td class="num">2</td>' in listing  # broker-a
    assert '<td class="num muted">—</td>' in listing  # not on broker-b


@pytest.mark.parametrize(
    ("name", "reason"), [("a b", "a space at position 2"), ("１２", "U+FF11"), ("TBW102", "system topic")]
)
def test_the_form_shows_the_api_message_for_a_bad_name(
    operator_client, api_client_as, console_cluster, name, reason
) -> None:
    page = operator_client.post("/topics/new", cluster_form(console_cluster, name))
    assert page.status_code == 400
    api = api_client_as("operator").post(
        "/api/v1/topics", {"name": name, "cluster": console_cluster.cluster}, format="json"
    )
    message = api.json()["fields"]["name"][0]
    assert reason in message
    assert message.replace("'", "&#x27;") in page.content.decode()


def test_the_form_shows_the_api_message_for_an_unknown_cluster_and_bad_counts(
    operator_client, console_cluster, topic_name
) -> None:
    page = operator_client.post(
        "/topics/new", cluster_form(console_cluster, topic_name, cluster="Nope", read_queue_nums="-1")
    )
    assert page.status_code == 400
    assert "must be from 0 to 1024, got -1." in page.content.decode()
    page = operator_client.post("/topics/new", cluster_form(console_cluster, topic_name, cluster="Nope"))
    assert "unknown cluster &#x27;Nope&#x27;; known: GantryTestCluster." in page.content.decode()
    with BlockingMQAdminClient(console_cluster.namesrv_addr) as admin:
        assert topic_name not in admin.get_all_topic_config(console_cluster.broker_addr("broker-a"))


def test_list_filters_and_htmx_returns_the_table_only(operator_client, console_cluster, topic_name) -> None:
    operator_client.post("/topics/new", cluster_form(console_cluster, topic_name))
    full = operator_client.get("/topics/", {"q": topic_name})
    assert "<html" in full.content.decode() and topic_name in full.content.decode()
    fragment = operator_client.get(
        "/topics/", {"q": topic_name, "type": "normal"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "<html" not in fragment and topic_name in fragment and 'data-testid="topics"' in fragment
    system = operator_client.get("/topics/", {"type": "system"}, HTTP_HX_REQUEST="true").content.decode()
    assert "SCHEDULE_TOPIC_XXXX" in system and topic_name not in system


def test_edit_delete_and_send_from_the_pages(operator_client, console_cluster, topic_name) -> None:
    operator_client.post("/topics/new", cluster_form(console_cluster, topic_name))
    edit = operator_client.get(f"/topics/{topic_name}/edit")
    assert edit.status_code == 200 and 'name="brokers.broker-a.read_queue_nums"' in edit.content.decode()
    data = {
        "mode": "broker",
        "brokers.broker-a.enabled": "on",
        "brokers.broker-a.read_queue_nums": "5",
        "brokers.broker-a.write_queue_nums": "5",
        "brokers.broker-a.perm": "4",
        "brokers.broker-b.enabled": "on",
        "brokers.broker-b.read_queue_nums": "4",
        "brokers.broker-b.write_queue_nums": "4",
        "brokers.broker-b.perm": "6",
    }
    response = operator_client.post(f"/topics/{topic_name}/edit", data)
    assert response.status_code == 302, response.content.decode()[:3000]
    detail = operator_client.get(f"/topics/{topic_name}/").content.decode()
    assert '<td class="num">5</td><td class="num">5</td><td><code>R--</code> (4)</td>' in detail

    sent = operator_client.post(f"/topics/{topic_name}/send", {"body": "hello", "broker": "broker-b"}, follow=True)
    assert "Sent message" in sent.content.decode() and "broker-b" in sent.content.decode()

    gone = operator_client.post(f"/topics/{topic_name}/delete", {"scope": "broker:broker-a"}, follow=True)
    page = gone.content.decode()
    assert f"Topic {topic_name} deleted from broker-a." in page and 'data-broker="broker-a"' not in page
    gone = operator_client.post(f"/topics/{topic_name}/delete", {"scope": "all"}, follow=True)
    assert gone.request["PATH_INFO"] == "/topics/"
    assert operator_client.get(f"/topics/{topic_name}/").status_code == 404


def test_viewer_sees_but_may_not_change(viewer_client, make_user, console_cluster, topic_name, client) -> None:
    page = viewer_client.get("/topics/")
    assert page.status_code == 200 and 'data-testid="new-topic"' not in page.content.decode()
    assert viewer_client.get("/topics/new").status_code == 403
    assert viewer_client.post("/topics/new", cluster_form(console_cluster, topic_name)).status_code == 403
    assert viewer_client.post(f"/topics/{topic_name}/delete", {"scope": "all"}).status_code == 403


def test_names_from_users_are_escaped(operator_client, console_cluster) -> None:
    evil = "<script>alert(1)</script>"
    listing = operator_client.get("/topics/", {"q": evil}).content.decode()
    assert "<script>alert(1)" not in listing and "&lt;script&gt;" in listing
    page = operator_client.post("/topics/new", cluster_form(console_cluster, evil)).content.decode()
    assert "<script>alert(1)" not in page
    missing = operator_client.get("/topics/%3Cb%3Ex/")
    assert missing.status_code == 400 and "<b>x" not in missing.content.decode()
    assert "the topic name contains &#x27;&lt;&#x27; at position 1" in missing.content.decode()


def test_unknown_topic_page_is_404(operator_client, console_cluster) -> None:
    response = operator_client.get("/topics/NoSuchTopicPage/")
    assert response.status_code == 404 and "topic NoSuchTopicPage does not exist" in response.content.decode()


def test_cluster_down_is_a_503_page_not_a_500(operator_client, mq_settings, unused_addr) -> None:
    mq_settings(unused_addr)
    response = operator_client.get("/topics/")
    assert response.status_code == 503
    assert "name server unreachable" in response.content.decode() and unused_addr in response.content.decode()
    assert operator_client.get("/topics/new").status_code == 503


def test_detail_page_lists_each_consumer_group_with_its_lag(
    operator_client, console_cluster, topic_name, console_admin
) -> None:
    """Per-topic consumers with lag, as rocketmq-dashboard's topic "consumer manage" shows them."""
    create_topic(console_admin, console_cluster, topic_name, queues=2)
    send(console_cluster, topic_name, 5, mq=MessageQueue(topic_name, "broker-a", 0))
    group = topic_name.replace("T_", "G_")
    with PullClient(console_cluster.namesrv_addr, group, heartbeat_interval_s=None) as consumer:
        consumer.update_offset(MessageQueue(topic_name, "broker-a", 0), 2)
    page = operator_client.get(f"/topics/{topic_name}/").content.decode()
    row = re.search(rf'<tr data-group="{group}">(.*?)</tr>', page, re.S)
    assert row, page
    assert re.search(r'data-testid="lag">3<', row.group(1)), row.group(1)  # 5 sent, 2 consumed


def test_the_live_tail_lists_the_newest_messages_first(
    operator_client, viewer, console_cluster, topic_name, console_admin
) -> None:
    """A live tail of a topic's newest messages (page fragment and API), nothing consumed."""
    create_topic(console_admin, console_cluster, topic_name, queues=2)
    send(console_cluster, topic_name, 3, mq=MessageQueue(topic_name, "broker-a", 0))
    send(console_cluster, topic_name, 2, mq=MessageQueue(topic_name, "broker-b", 1))
    page = operator_client.get(f"/topics/{topic_name}/").content.decode()
    assert 'data-testid="live-tail"' in page and "part=tail" in page
    tail = operator_client.get(f"/topics/{topic_name}/", {"part": "tail"}, HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in tail and "the 5 newest of 5 stored" in tail
    newest = viewer.get(f"/api/v1/topics/{topic_name}/tail", {"count": 2}).json()
    assert [m["store_timestamp"] for m in newest] == sorted(
        (m["store_timestamp"] for m in newest), reverse=True
    ) and len(newest) == 2
    assert (
        newest[0]["broker_name"] == "broker-b" or newest[0]["store_timestamp"] == newest[1]["store_timestamp"]
    )  # sent last
    refused = viewer.get(f"/api/v1/topics/{topic_name}/tail", {"count": 51})
    assert refused.status_code == 400 and "count" in refused.json()["fields"]


def test_the_tail_and_the_time_search_skip_write_only_queues(
    viewer, console_cluster, topic_name, console_admin
) -> None:
    """A broker refuses to pull a queue id at or above its read queue count: the reads stay below it (was a 502)."""
    create_topic(console_admin, console_cluster, topic_name, queues=4)
    send(console_cluster, topic_name, 1, mq=MessageQueue(topic_name, "broker-a", 0))
    send(console_cluster, topic_name, 1, mq=MessageQueue(topic_name, "broker-a", 3))
    for broker in console_cluster.broker_names:
        console_admin.create_or_update_topic(console_cluster.broker_addr(broker), TopicConfig(topic_name, 2, 4))
    response = viewer.get(f"/api/v1/topics/{topic_name}/tail")
    assert response.status_code == 200, response.content
    assert [(m["broker_name"], m["queue_id"]) for m in response.json()] == [("broker-a", 0)]
