"""A topic's message type (RocketMQ 5's ``message.type`` attribute) through the console and /api/v1/topics,
against a real cluster: what the brokers hold (GET_ALL_TOPIC_CONFIG) is what the pages and the API show;
a bad value is refused naming the field and changes nothing."""

from __future__ import annotations

import re

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient

pytestmark = pytest.mark.django_db

URL = "/api/v1/topics"


def attributes(admin_mq: BlockingMQAdminClient, cluster, topic: str) -> dict:
    """broker name -> the topic's attributes there (None where it is not)."""
    out = {}
    for name in cluster.broker_names:
        tc = admin_mq.get_all_topic_config(cluster.broker_addr(name)).get(topic)
        out[name] = tc.attributes if tc else None
    return out


def test_api_creates_changes_and_lists_the_message_type(operator, console_cluster, console_admin, topic_name) -> None:
    response = operator.post(
        URL, {"name": topic_name, "cluster": console_cluster.cluster, "message_type": "FIFO"}, format="json"
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["message_type"] == "FIFO" and {b["message_type"] for b in body["brokers"].values()} == {"FIFO"}
    assert attributes(console_admin, console_cluster, topic_name) == {
        b: {"message.type": "FIFO"} for b in console_cluster.broker_names
    }

    listed = operator.get(URL, {"search": topic_name}).json()["results"]
    assert [(row["name"], row["message_type"]) for row in listed] == [(topic_name, "FIFO")]
    assert operator.get(f"{URL}/{topic_name}").json()["message_type"] == "FIFO"

    response = operator.patch(f"{URL}/{topic_name}", {"message_type": "DELAY"}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["message_type"] == "DELAY"
    response = operator.patch(f"{URL}/{topic_name}", {"perm": 4}, format="json")  # no message_type: kept
    assert response.status_code == 200 and response.json()["message_type"] == "DELAY"
    assert attributes(console_admin, console_cluster, topic_name) == {
        b: {"message.type": "DELAY"} for b in console_cluster.broker_names
    }


def test_a_new_topic_without_one_is_normal(operator, console_cluster, console_admin, topic_name) -> None:
    response = operator.post(URL, {"name": topic_name, "cluster": console_cluster.cluster}, format="json")
    assert response.status_code == 201 and response.json()["message_type"] == "NORMAL"
    assert attributes(console_admin, console_cluster, topic_name) == {b: {} for b in console_cluster.broker_names}


def test_a_broker_the_topic_is_new_on_gets_the_type_of_the_others(
    operator, console_cluster, console_admin, topic_name
) -> None:
    response = operator.post(
        URL, {"name": topic_name, "brokers": {"broker-a": {}}, "message_type": "TRANSACTION"}, format="json"
    )
    assert response.status_code == 201, response.content
    response = operator.patch(
        f"{URL}/{topic_name}", {"brokers": {"broker-b": {"read_queue_nums": 2, "write_queue_nums": 2}}}, format="json"
    )
    assert response.status_code == 200, response.content
    assert attributes(console_admin, console_cluster, topic_name) == {
        "broker-a": {"message.type": "TRANSACTION"},
        "broker-b": {"message.type": "TRANSACTION"},
    }


@pytest.mark.parametrize("value", ["ORDERED", "fifo", "MIXED", "UNSPECIFIED", 3, None])
def test_a_bad_value_is_refused_naming_the_field_and_changes_nothing(
    operator, console_cluster, console_admin, topic_name, value
) -> None:
    response = operator.post(
        URL, {"name": topic_name, "cluster": console_cluster.cluster, "message_type": "DELAY"}, format="json"
    )
    assert response.status_code == 201, response.content
    before = attributes(console_admin, console_cluster, topic_name)
    for call in (
        lambda: operator.patch(f"{URL}/{topic_name}", {"message_type": value}, format="json"),
        lambda: operator.post(
            URL, {"name": topic_name + "x", "cluster": console_cluster.cluster, "message_type": value}, format="json"
        ),
    ):
        refused = call()
        assert refused.status_code == 400, refused.content
        message = refused.json()["fields"]["message_type"][0]
        assert value is None or "NORMAL, FIFO, DELAY, TRANSACTION" in message, message
    assert attributes(console_admin, console_cluster, topic_name) == before
    assert attributes(console_admin, console_cluster, topic_name + "x") == {
        b: None for b in console_cluster.broker_names
    }


def test_schema_documents_the_choices(operator) -> None:
    schemas = operator.get("/api/v1/schema", {"format": "json"}).json()["components"]["schemas"]
    for name in ("TopicCreateInputRequest", "PatchedTopicPatchInputRequest"):
        field = schemas[name]["properties"]["message_type"]
        ref = field["allOf"][0]["$ref"]  # one named enum (console/api_settings.py)
        assert ref.endswith("/TopicMessageTypeEnum"), ref
        field = schemas["TopicMessageTypeEnum"]
        assert field["enum"] == ["NORMAL", "FIFO", "DELAY", "TRANSACTION"], (name, field)
    assert "message_type" in schemas["TopicOutput"]["properties"]


def test_form_sets_it_and_the_pages_show_it(operator_client, console_cluster, console_admin, topic_name) -> None:
    data = {
        "name": topic_name,
        "mode": "cluster",
        "cluster": console_cluster.cluster,
        "read_queue_nums": "4",
        "write_queue_nums": "4",
        "perm": "6",
        "message_type": "TRANSACTION",
    }
    response = operator_client.post("/topics/new", data)
    assert response.status_code == 302, response.content.decode()[:2000]
    detail = operator_client.get(f"/topics/{topic_name}/").content.decode()
    assert re.search(r'data-testid="message-type">Message type: <code>TRANSACTION</code>', detail)
    for broker in console_cluster.broker_names:
        assert re.search(f'data-broker="{broker}">.*?<code>TRANSACTION</code></td></tr>', detail, re.S)
    listing = operator_client.get("/topics/", {"q": topic_name}).content.decode()
    assert '<td data-testid="message-type"><code>TRANSACTION</code></td>' in listing

    edit = operator_client.get(f"/topics/{topic_name}/edit").content.decode()
    assert re.search(r'<option value="TRANSACTION" selected>', edit), edit[:3000]
    update = {"mode": "broker", "message_type": "FIFO"}
    for broker in console_cluster.broker_names:
        update.update(
            {
                f"brokers.{broker}.enabled": "on",
                f"brokers.{broker}.read_queue_nums": "4",
                f"brokers.{broker}.write_queue_nums": "4",
                f"brokers.{broker}.perm": "6",
            }
        )
    assert operator_client.post(f"/topics/{topic_name}/edit", update).status_code == 302
    assert attributes(console_admin, console_cluster, topic_name) == {
        b: {"message.type": "FIFO"} for b in console_cluster.broker_names
    }

    refused = operator_client.post(f"/topics/{topic_name}/edit", dict(update, message_type="SOMETIMES"))
    assert refused.status_code == 400
    assert 'data-field="message_type"' in refused.content.decode()
    assert attributes(console_admin, console_cluster, topic_name) == {
        b: {"message.type": "FIFO"} for b in console_cluster.broker_names
    }


def test_the_page_speaks_chinese(as_role, console_cluster, topic_name, operator) -> None:
    assert (
        operator.post(
            URL, {"name": topic_name, "cluster": console_cluster.cluster, "message_type": "FIFO"}, format="json"
        ).status_code
        == 201
    )
    client = as_role("viewer")
    page = client.get(f"/topics/{topic_name}/", HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode()
    assert "消息类型: <code>FIFO</code>" in page
