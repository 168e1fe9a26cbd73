"""Message lists newest first with a body preview and a chosen page size; a message
found by its client-made id (UNIQ_KEY) and by its offset id alike; a test send shows both ids."""

from __future__ import annotations

import re
import time

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient
from tests.brokers.engine.client._cluster import create_topic
from tests.consumers._groups import send

pytestmark = pytest.mark.django_db

LONG = "Zahlung eingegangen für Bestellung 4711 " * 4  # 160 characters


@pytest.fixture
def stored(console_cluster, topic_name):
    """12 messages over 4 queues (text, one long, one HTML, one binary), and their store-time range."""
    with BlockingMQAdminClient(console_cluster.namesrv_addr) as admin:
        create_topic(admin, console_cluster, topic_name, queues=2)
    begin = int(time.time() * 1000) - 1
    sent = send(console_cluster, topic_name, 9) + send(console_cluster, topic_name, 1, body=LONG.encode())
    sent += send(console_cluster, topic_name, 1, body=b"<b>bold</b>") + send(
        console_cluster, topic_name, 1, body=b"\x00\xffbin"
    )
    end = int(time.time() * 1000) + 1
    return topic_name, sent, begin, end


def test_time_range_results_are_newest_first_across_pages(viewer, stored) -> None:
    topic, sent, begin, end = stored
    listed = []
    for page in (1, 2, 3):
        body = viewer.get(
            "/api/v1/messages", {"topic": topic, "begin": begin, "end": end, "page_size": 5, "page": page}
        ).json()
        listed += body["results"]
    stamps = [m["store_timestamp"] for m in listed]
    assert stamps == sorted(stamps, reverse=True), stamps
    assert sorted(m["msg_id"] for m in listed) == sorted(s.offset_msg_id for s in sent)
    # the last sent is among the newest, the first among the oldest (brokers may share a millisecond)
    assert sent[-1].offset_msg_id in {m["msg_id"] for m in listed if m["store_timestamp"] == stamps[0]}
    assert sent[0].offset_msg_id in {m["msg_id"] for m in listed if m["store_timestamp"] == stamps[-1]}
    for queue in {(m["broker_name"], m["queue_id"]) for m in listed}:  # one queue: offsets descending
        offsets = [m["queue_offset"] for m in listed if (m["broker_name"], m["queue_id"]) == queue]
        assert offsets == sorted(offsets, reverse=True)
    by_key = viewer.get("/api/v1/messages", {"topic": topic, "key": sent[0].msg_id}).json()["results"]
    assert [m["msg_id"] for m in by_key] == [sent[0].offset_msg_id]


def test_results_carry_a_body_preview_escaped_on_the_page(viewer, client, make_user, stored) -> None:
    topic, sent, begin, end = stored
    rows = viewer.get("/api/v1/messages", {"topic": topic, "begin": begin, "end": end}).json()["results"]
    previews = {m["msg_id"]: m["body_preview"] for m in rows}
    assert previews[sent[0].offset_msg_id] == "m0"
    assert previews[sent[9].offset_msg_id] == LONG[:80] + "\u2026"
    assert previews[sent[10].offset_msg_id] == "<b>bold</b>"
    assert previews[sent[11].offset_msg_id] == "binary, 5 bytes"
    client.force_login(make_user("viewer"))
    page = client.get("/messages/", {"mode": "time", "topic": topic, "begin": begin, "end": end}).content.decode()
    assert "&lt;b&gt;bold&lt;/b&gt;" in page and "<b>bold</b>" not in page and "binary, 5 bytes" in page
    assert "newest first" in page


def test_page_size_is_chosen_and_a_bad_one_refused_by_name(viewer, client, make_user, stored) -> None:
    topic, _, begin, end = stored
    client.force_login(make_user("viewer"))
    query = {"mode": "time", "topic": topic, "begin": begin, "end": end}
    page = client.get("/messages/", {**query, "page_size": "50"}).content.decode()
    assert page.count('data-testid="preview"') == 12 and "50 per page" in page
    assert '<option value="50" selected>' in page
    default = client.get("/messages/", query).content.decode()
    assert "20 per page" in default
    refused = client.get("/messages/", {**query, "page_size": "5000"})
    assert refused.status_code == 400 and 'data-field="page_size"' in refused.content.decode()
    api = viewer.get("/api/v1/messages", {"topic": topic, "begin": begin, "end": end, "page_size": "0"})
    assert api.status_code == 400 and "page_size" in api.json()["fields"]


def test_uniq_key_and_offset_id_find_the_same_message(viewer, client, make_user, stored) -> None:
    topic, sent, _, _ = stored
    by_offset = viewer.get(f"/api/v1/messages/{sent[3].offset_msg_id}").json()
    by_uniq = viewer.get(f"/api/v1/messages/{sent[3].msg_id}", {"topic": topic}).json()
    assert by_offset == by_uniq and by_uniq["uniq_key"] == sent[3].msg_id and by_uniq["body"] == "m3"
    no_topic = viewer.get(f"/api/v1/messages/{sent[3].msg_id}")
    assert no_topic.status_code == 400 and "topic" in no_topic.json()["fields"], no_topic.json()
    assert "decodes to" not in str(no_topic.json())
    client.force_login(make_user("viewer"))
    for msg_id in (sent[3].msg_id, sent[3].offset_msg_id):
        found = client.get("/messages/", {"mode": "id", "topic": topic, "msg_id": msg_id})
        assert found.status_code == 302, found.content.decode()[-2000:]
        assert client.get(found["Location"]).content.decode().count('data-encoding="text">m3</pre>') == 1
    unnamed = client.get("/messages/", {"mode": "id", "msg_id": sent[3].msg_id})
    assert unnamed.status_code == 400 and 'data-field="topic"' in unnamed.content.decode()
    assert client.get(f"/messages/{sent[3].msg_id}/").status_code == 400
    assert (
        'data-encoding="text">m3</pre>' in client.get(f"/messages/{sent[3].msg_id}/", {"topic": topic}).content.decode()
    )
    listed = client.get("/messages/", {"mode": "key", "topic": topic, "key": sent[3].msg_id}).content.decode()
    assert sent[3].msg_id in listed and sent[3].offset_msg_id in listed  # the list shows both ids


def test_a_test_send_shows_both_ids_and_a_link_that_finds_it(operator_client, console_cluster, topic_name) -> None:
    with BlockingMQAdminClient(console_cluster.namesrv_addr) as admin:
        create_topic(admin, console_cluster, topic_name, queues=2)
    page = operator_client.post(f"/topics/{topic_name}/send", {"body": "hello <there>"}, follow=True).content.decode()
    uniq = re.search(r'data-testid="sent-uniq-key">([0-9A-F]{32})<', page).group(1)
    offset_id = re.search(r'data-testid="sent-offset-id">([0-9A-F]{32})<', page).group(1)
    link = re.search(r'href="([^"]+)" data-testid="find-sent"', page).group(1).replace("&amp;", "&")
    found = operator_client.get(link)
    assert found.status_code == 302 and offset_id in found["Location"]
    detail = operator_client.get(found["Location"]).content.decode()
    assert "hello &lt;there&gt;" in detail and uniq in detail
