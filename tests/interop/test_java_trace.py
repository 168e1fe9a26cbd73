"""Message trace written by Apache's Java clients (4.9.8 and 5.5.0, ``enableMsgTrace``) and read back by the
console: GET /api/v1/messages/{msg_id}/trace and the /messages/trace/ page show who sent the message, where it
was stored and which group consumed it, from the trace records the Java clients wrote to RMQ_SYS_TRACE_TOPIC."""

from __future__ import annotations

import pytest

from tests.interop._java_clients import CLIENTS, JavaClients, message, unique, wait_until

pytestmark = pytest.mark.django_db
# the parameter is "apache_client": "client" is Django's test client, which the console fixtures use


@pytest.mark.parametrize("apache_client", CLIENTS)
def test_a_java_producer_and_consumer_trace_shows_in_the_api_and_page(
    apache_client, module_java_drivers, console_cluster, topic, viewer, viewer_client
):
    java = JavaClients(module_java_drivers, console_cluster.namesrv_addr)
    group, producer_group = unique("g_trace"), unique("pg_trace")
    try:
        consumer = java.push(apache_client, group, topic, trace=True)
        producer = java.producer(apache_client, group=producer_group, trace=True)
        [sent] = java.call(
            "send", producer, mode="sync", messages=[message(topic, "traced", tags="Paid", keys="java-order-7")]
        )
        assert java.received(consumer, count=1, timeout_s=20)[0]["msgId"] == sent["msgId"]

        def traced():
            body = viewer.get(f"/api/v1/messages/{sent['msgId']}/trace").json()
            return (
                body
                if body["found"] and body["published"] and body["consumed"] and body["consumed"][0].get("after")
                else None
            )

        body = wait_until(traced, 30, "the Java clients' Pub, SubBefore and SubAfter in the trace")
    finally:
        java.close()
    assert body["trace_topic"] == "RMQ_SYS_TRACE_TOPIC" and body["skipped_records"] == 0
    (pub,) = body["published"]
    assert pub["record"] == {
        **pub["record"],
        "trace_type": "Pub",
        "group": producer_group,
        "topic": topic,
        "keys": "java-order-7",
        "tags": "Paid",
        "success": True,
        "offset_msg_id": sent["offsetMsgId"],
    }
    assert pub["broker_name"] == sent["queue"]["brokerName"]
    (consumed,) = body["consumed"]
    assert (consumed["group"], consumed["status"]) == (group, "success")
    assert consumed["before"]["retry_times"] == 0 and consumed["after"]["context_name"] == "SUCCESS"

    page = viewer_client.get("/messages/trace/", {"msg_id": sent["msgId"]})
    html = page.content.decode()
    assert page.status_code == 200 and producer_group in html and group in html and ">success<" in html
