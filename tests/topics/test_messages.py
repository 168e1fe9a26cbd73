"""/api/v1/messages and the /messages/ pages: by key, by id (offset id, or UNIQ_KEY with its topic),
by store-time range in pages; properties and body as text or hex; each refusal."""

from __future__ import annotations

import time

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from tests.brokers.engine.client._cluster import create_topic
from tests.consumers._groups import send

pytestmark = pytest.mark.django_db


@pytest.fixture
def stored(console_cluster, topic_name):
    """12 messages (2 with key order-7, one binary body), and the time range they were stored in."""
    with BlockingMQAdminClient(console_cluster.namesrv_addr) as admin:
        create_topic(admin, console_cluster, topic_name, queues=2)
    begin = int(time.time() * 1000) - 1
    sent = (
        send(console_cluster, topic_name, 9)
        + send(console_cluster, topic_name, 2, keys="order-7")
        + send(console_cluster, topic_name, 1, body=b"\x00\xffbin")
    )
    end = int(time.time() * 1000) + 1
    return topic_name, sent, begin, end


def test_by_key(viewer, stored) -> None:
    topic, sent, _, _ = stored
    body = viewer.get("/api/v1/messages", {"topic": topic, "key": "order-7"}).json()
    assert body["count"] == 2 and {m["keys"] for m in body["results"]} == {"order-7"}
    assert {m["uniq_key"] for m in body["results"]} == {s.msg_id for s in sent[9:11]}
    assert viewer.get("/api/v1/messages", {"topic": topic, "key": "order-8"}).json()["count"] == 0


def test_by_offset_id_and_by_uniq_key(viewer, stored) -> None:
    topic, sent, _, _ = stored
    text = viewer.get(f"/api/v1/messages/{sent[0].offset_msg_id}").json()
    assert text["body_encoding"] == "text" and text["body"] == "m0" and text["topic"] == topic
    assert text["properties"]["UNIQ_KEY"] == sent[0].msg_id and text["broker_name"] in ("broker-a", "broker-b")
    binary = viewer.get(f"/api/v1/messages/{sent[11].msg_id}", {"topic": topic}).json()
    assert binary["body_encoding"] == "hex" and binary["body"] == "00 ff 62 69 6e" and binary["body_size"] == 5


def test_by_time_in_pages(viewer, stored) -> None:
    topic, sent, begin, end = stored
    first = viewer.get("/api/v1/messages", {"topic": topic, "begin": begin, "end": end, "page_size": 5}).json()
    assert (
        first["count"] == 12 and len(first["results"]) == 5 and first["previous"] is None and "page=2" in first["next"]
    )
    seen = [m["msg_id"] for m in first["results"]]
    for page in (2, 3):
        seen += [
            m["msg_id"]
            for m in viewer.get(
                "/api/v1/messages", {"topic": topic, "begin": begin, "end": end, "page_size": 5, "page": page}
            ).json()["results"]
        ]
    assert sorted(seen) == sorted(s.offset_msg_id for s in sent)
    later = viewer.get(
        "/api/v1/messages", {"topic": topic, "begin": "2099-01-01T00:00:00Z", "end": "2099-01-02T00:00:00Z"}
    ).json()
    assert later["results"] == []


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"key": "k"}, "topic"),
        ({"topic": "T"}, "key"),
        ({"topic": "T", "begin": "yesterday", "end": 1}, "begin"),
        ({"topic": "T", "begin": 5, "end": 1}, "end"),
        ({"topic": "bad topic", "key": "k"}, "topic"),
        ({"topic": "T", "begin": 0, "end": 1, "page_size": 1000}, "page_size"),
    ],
)
def test_bad_queries_are_400(viewer, console_cluster, query, field) -> None:
    response = viewer.get("/api/v1/messages", query)
    assert response.status_code == 400 and field in response.json()["fields"], response.json()


def test_unknown_topic_or_message_is_404_and_a_bad_id_400(viewer, stored, api_client_as) -> None:
    topic, sent, _, _ = stored
    assert viewer.get("/api/v1/messages", {"topic": "NoSuchTopic_m", "key": "k"}).status_code == 404
    assert viewer.get(f"/api/v1/messages/{sent[0].msg_id}", {"topic": "NoSuchTopic_m"}).status_code == 404
    assert viewer.get("/api/v1/messages/0123456789ABCDEF0123456789ABCDEF", {"topic": topic}).status_code == 404
    response = viewer.get("/api/v1/messages/not-an-id")
    assert response.status_code == 400 and "msg_id" in response.json()["fields"]
    assert api_client_as(None).get("/api/v1/messages", {"topic": topic, "key": "k"}).status_code == 401


def test_message_pages(client, make_user, stored) -> None:
    topic, sent, begin, end = stored
    client.force_login(make_user("viewer"))
    page = client.get("/messages/", {"mode": "key", "topic": topic, "key": "order-7"}).content.decode()
    assert page.count('<tr><td><a href="/messages/') == 2 and "order-7" in page
    fragment = client.get(
        "/messages/", {"mode": "time", "topic": topic, "begin": begin, "end": end}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "<html" not in fragment and "about 12 messages" in fragment
    by_id = client.get("/messages/", {"mode": "id", "msg_id": sent[1].offset_msg_id})
    assert by_id.status_code == 302
    detail = client.get(by_id["Location"]).content.decode()
    assert 'data-encoding="text">m1</pre>' in detail and "UNIQ_KEY" in detail
    refused = client.get("/messages/", {"mode": "key", "topic": topic})
    assert refused.status_code == 400 and 'data-field="key"' in refused.content.decode()
    missing = client.get("/messages/", {"mode": "id", "msg_id": "nope"})
    assert missing.status_code == 400 and "client-made id" in missing.content.decode()


# -- message ids name brokers of this cluster only (no connection to an address taken from an id) ------


def test_an_id_naming_a_listening_socket_that_is_no_broker_gets_the_generic_error_and_no_connection(
    viewer, client, make_user, console_cluster
) -> None:
    import socket

    from brokers.engine.common.message_id import create_offset_msg_id
    from brokers.gateway.message_ids import NOT_IN_CLUSTER

    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    closed = socket.create_server(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()  # nothing listens here: "connection refused" if anyone tried
    try:
        probe = create_offset_msg_id(f"127.0.0.1:{listener.getsockname()[1]}", 0)
        refused = create_offset_msg_id(f"127.0.0.1:{closed_port}", 0)
        unroutable = create_offset_msg_id("10.255.255.1:10911", 4096)  # a timeout if anyone tried
        client.force_login(make_user("viewer"))
        for msg_id in (probe, refused, unroutable):
            response = viewer.get(f"/api/v1/messages/{msg_id}")
            assert response.status_code == 404 and response.json()["detail"] == NOT_IN_CLUSTER, response.json()
            page = client.get(f"/messages/{msg_id}/")
            assert page.status_code == 404 and NOT_IN_CLUSTER in page.content.decode()
        with pytest.raises(BlockingIOError):
            listener.accept()  # no connection ever reached the socket
    finally:
        listener.close()


def test_an_id_of_a_cluster_broker_past_its_commit_log_gets_the_same_generic_error(viewer, console_cluster) -> None:
    from brokers.engine.common.message_id import create_offset_msg_id
    from brokers.gateway.cluster import masters
    from brokers.gateway.message_ids import NOT_IN_CLUSTER

    addr = next(iter(masters().values()))
    response = viewer.get(f"/api/v1/messages/{create_offset_msg_id(addr, 1 << 40)}")
    assert response.status_code == 404 and response.json()["detail"] == NOT_IN_CLUSTER, response.json()
