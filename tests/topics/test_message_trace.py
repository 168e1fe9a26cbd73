"""GET /api/v1/messages/{msg_id}/trace and the message trace page: a message sent and consumed by Gantry
clients with tracing on, and a trace a RocketMQ (Java) client would have written, both read back from
RMQ_SYS_TRACE_TOPIC through the key index; bad input is refused with the field named."""

from __future__ import annotations

import uuid

import pytest

from tests.topics._traces import send_java_trace, traced_round_trip

pytestmark = pytest.mark.django_db


def test_gantry_producer_and_consumer_trace_shows_in_api_and_page(
    viewer, viewer_client, console_cluster, topic, group
) -> None:
    msg_id = traced_round_trip(console_cluster, topic, group)
    body = viewer.get(f"/api/v1/messages/{msg_id}/trace").json()
    assert body["found"] and body["trace_topic"] == "RMQ_SYS_TRACE_TOPIC" and body["skipped_records"] == 0
    (pub,) = body["published"]
    assert pub["record"] == {
        **pub["record"],
        "trace_type": "Pub",
        "group": f"{group}-producer",
        "topic": topic,
        "keys": "order-42",
        "tags": "Paid",
        "success": True,
        "msg_type_name": "Normal_Msg",
    }
    assert pub["record"]["store_host"] and pub["record"]["offset_msg_id"] and pub["client_host"]
    assert pub["broker_name"] in console_cluster.broker_names
    (consumed,) = body["consumed"]
    assert (consumed["group"], consumed["status"]) == (group, "success")
    assert consumed["before"]["retry_times"] == 0 and consumed["after"]["context_name"] == "SUCCESS"
    # by key as well (a trace message carries the message's keys), and by the offset id the message detail shows
    assert viewer.get("/api/v1/messages/order-42/trace").json()["found"]
    by_offset_id = viewer.get(f"/api/v1/messages/{pub['record']['offset_msg_id']}/trace").json()
    assert by_offset_id["msg_id"] == msg_id and by_offset_id["published"] == body["published"]

    page = viewer_client.get("/messages/trace/", {"msg_id": msg_id})
    html = page.content.decode()
    assert page.status_code == 200 and f"{group}-producer" in html and group in html and ">success<" in html


def test_a_trace_written_by_a_rocketmq_client_is_decoded_and_shown(viewer, viewer_client, console_cluster) -> None:
    msg_id = uuid.uuid4().hex.upper()  # 32 hex digits, as a Java client's UNIQ_KEY
    send_java_trace(
        console_cluster,
        msg_id,
        "JavaOrders",
        producer_group="java-producer",
        consumer_group="java-consumer",
        keys="java-key-1",
    )
    body = viewer.get(f"/api/v1/messages/{msg_id}/trace").json()
    (pub,) = body["published"]
    assert pub["record"] == {
        **pub["record"],
        "group": "java-producer",
        "topic": "JavaOrders",
        "store_host": "10.1.2.3:10911",
        "offset_msg_id": "0A01020300002A9F0000000000ABCDEF",
        "cost_ms": 4,
        "body_length": 21,
    }
    (consumed,) = body["consumed"]
    assert (
        consumed["group"] == "java-consumer"
        and consumed["status"] == "failed (FAILED)"
        and consumed["after"]["cost_ms"] == 9
    )
    assert consumed["before"]["retry_times"] == 1 and consumed["request_id"] == "0A010203REQ"
    html = viewer_client.get("/messages/trace/", {"msg_id": msg_id}).content.decode()
    assert "java-producer" in html and "failed (FAILED)" in html and "10.1.2.3:10911" in html


def test_an_untraced_message_has_an_empty_trace(viewer, console_cluster) -> None:
    body = viewer.get(f"/api/v1/messages/{uuid.uuid4().hex.upper()}/trace").json()
    assert body["found"] is False and body["published"] == [] and body["consumed"] == []


@pytest.mark.parametrize(
    "msg_id, query, field, status",
    [
        ("x" * 129, {}, "msg_id", 400),
        ("ok-id", {"trace_topic": "bad topic!"}, "trace_topic", 400),
    ],
)
def test_bad_input_names_the_field(viewer, console_cluster, msg_id, query, field, status) -> None:
    response = viewer.get(f"/api/v1/messages/{msg_id}/trace", query)
    assert response.status_code == status and field in response.json()["fields"], response.content


def test_an_unknown_trace_topic_is_404(viewer, viewer_client, console_cluster) -> None:
    assert viewer.get("/api/v1/messages/some-id/trace", {"trace_topic": "NoTraceHere"}).status_code == 404
    page = viewer_client.get("/messages/trace/", {"msg_id": "some-id", "trace_topic": "NoTraceHere"})
    assert page.status_code == 404 and "NoTraceHere" in page.content.decode()


def test_the_page_refuses_an_empty_id_and_needs_a_login(viewer_client, console_cluster) -> None:
    from django.test import Client

    page = viewer_client.get("/messages/trace/", {"msg_id": ""})
    assert page.status_code == 400
    assert Client().get("/messages/trace/", {"msg_id": "x"}).status_code == 302
