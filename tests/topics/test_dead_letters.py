"""/api/v1/groups/{name}/dlq and its resend and export: dead letters made by a real failing consumer
(tests/topics/_dead_letters.py); the resent copies reach the group again and only it; each refusal
names the field and changes nothing; the resend is audited (one entry per batch)."""

from __future__ import annotations

import base64
import json

import pytest

from brokers.engine.common.message import Message
from console.models import AuditEntry
from tests.topics._dead_letters import consume_resent, make_dead_letters, wait_until

pytestmark = pytest.mark.django_db


@pytest.fixture
def dead(console_cluster, topic, group):
    """Three dead letters of ``group`` (one with a binary body), listed by the API once all are in the DLQ."""
    from topics.dead_letters.selectors import dead_letter_page

    sent = make_dead_letters(
        console_cluster,
        group,
        topic,
        [
            Message(topic, b"order 1 failed", tags="TagA", keys="order-1", properties={"tenant": "acme"}),
            Message(topic, b"order 2 failed", keys="order-2"),
            Message(topic, b"\x00\xffbin", keys="order-3"),
        ],
    )
    wait_until(lambda: dead_letter_page(group=group).total >= 3, what="three dead letters")
    return sent


def test_list_shows_original_topic_id_and_reconsume_times_newest_first(viewer, dead, topic, group) -> None:
    body = viewer.get(f"/api/v1/groups/{group}/dlq").json()
    assert (
        body["exists"]
        and body["count"] == 3
        and body["dlq_topic"] == f"%DLQ%{group}"
        and body["retry_topic"] == f"%RETRY%{group}"
    )
    assert "RocketMQ's clients send none" in body["last_error"]
    rows = body["results"]
    assert {r["last_error"] for r in rows} == {
        "the listener answered RECONSUME_LATER"
    }  # kept by the broker from the send-back
    assert {r["original_topic"] for r in rows} == {topic}
    assert {r["origin_msg_id"] for r in rows} == {s.msg_id for s in dead}
    assert all(r["reconsume_times"] == 1 for r in rows)
    moved = [r["message"]["store_timestamp"] for r in rows]
    assert moved == sorted(moved, reverse=True)
    paged = viewer.get(f"/api/v1/groups/{group}/dlq", {"page_size": 2, "page": 2}).json()
    assert paged["pages"] == 2 and len(paged["results"]) == 1


def test_a_group_without_dead_letters_lists_none(viewer, console_cluster) -> None:
    body = viewer.get("/api/v1/groups/G_never_failed/dlq").json()
    assert body == {**body, "exists": False, "count": 0, "results": []}
    assert viewer.get("/api/v1/groups/G_never_failed/dlq", {"page_size": 0}).json()["fields"].keys() == {"page_size"}


def test_resend_reaches_the_group_again_with_the_original_topic_and_is_audited(
    operator, dead, console_cluster, topic, group
) -> None:
    rows = operator.get(f"/api/v1/groups/{group}/dlq").json()["results"]
    text = [r for r in rows if r["message"]["keys"] == "order-1"][0]
    answer = operator.post(f"/api/v1/groups/{group}/dlq/resend", {"msg_ids": [text["msg_id"]]}, format="json")
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["topic"] == f"%RETRY%{group}" and body["resent"] == 1 and body["failed"] == 0
    [result] = body["results"]
    assert result["ok"] and result["msg_id"] == text["msg_id"] and len(result["new_msg_id"]) == 32

    [copy] = consume_resent(console_cluster, group, topic, 1)
    assert copy.topic == topic and copy.body == b"order 1 failed" and copy.tags == "TagA" and copy.keys == "order-1"
    assert copy.properties["tenant"] == "acme" and copy.properties["DLQ_RESENT_FROM"] == text["msg_id"]
    assert copy.properties["ORIGIN_MESSAGE_ID"] == text["origin_msg_id"] and copy.reconsume_times == 0

    [entry] = AuditEntry.objects.filter(action="group.dlq_resend", target=group)
    assert entry.result == AuditEntry.OK and entry.actor == "api-operator"
    assert (
        entry.before["msg_ids"] == [text["msg_id"]] and entry.after["results"][0]["new_msg_id"] == result["new_msg_id"]
    )


def test_resend_refuses_bad_ids_naming_the_field_and_sends_nothing(
    operator, viewer, dead, console_cluster, topic, group
) -> None:
    rows = operator.get(f"/api/v1/groups/{group}/dlq").json()["results"]
    good = rows[0]["msg_id"]
    url = f"/api/v1/groups/{group}/dlq/resend"
    for payload, needle in (
        ({"msg_ids": []}, "msg_ids"),
        ({"msg_ids": [good] * 101}, "msg_ids"),
        ({"msg_ids": [good, good]}, "more than once"),
        ({"msg_ids": [good, "not-an-id"]}, "not an offset message id"),
        ({"msg_ids": [good, dead[0].offset_msg_id]}, f"a message of {topic}, not a dead letter"),
        ({"msg_ids": [good], "extra": 1}, "extra"),
    ):
        answer = operator.post(url, payload, format="json")
        assert answer.status_code == 400, (payload, answer.content)
        assert needle in answer.content.decode() and set(answer.json()["fields"]) <= {"msg_ids", "extra"}
    assert viewer.post(url, {"msg_ids": [good]}, format="json").status_code == 403
    assert operator.get(f"/api/v1/groups/{group}/dlq").json()["count"] == 3
    refused = AuditEntry.objects.filter(action="group.dlq_resend", target=group)
    assert refused.exists() and not refused.filter(result=AuditEntry.OK).exists()  # each refusal recorded as failed


def test_export_streams_json_lines_with_whole_bodies(viewer, dead, group, topic) -> None:
    answer = viewer.get(f"/api/v1/groups/{group}/dlq/export")
    assert (
        answer.status_code == 200
        and answer["Content-Type"] == "application/x-ndjson"
        and answer["X-Total-Count"] == "3"
    )
    lines = [json.loads(line) for line in b"".join(answer.streaming_content).splitlines()]
    assert len(lines) == 3 and {line["original_topic"] for line in lines} == {topic}
    by_key = {line["keys"]: line for line in lines}
    assert by_key["order-1"]["body_encoding"] == "text" and by_key["order-1"]["body"] == "order 1 failed"
    assert by_key["order-1"]["properties"]["tenant"] == "acme" and by_key["order-1"]["reconsume_times"] == 1
    assert by_key["order-1"]["last_error"] == "the listener answered RECONSUME_LATER"
    assert (
        by_key["order-3"]["body_encoding"] == "base64" and base64.b64decode(by_key["order-3"]["body"]) == b"\x00\xffbin"
    )

    capped = b"".join(viewer.get(f"/api/v1/groups/{group}/dlq/export", {"limit": 2}).streaming_content).splitlines()
    assert len(capped) == 3 and json.loads(capped[-1]) == {"truncated": True, "limit": 2, "exported": 2, "in_range": 3}
    for query, field in (
        ({"limit": 10_001}, "limit"),
        ({"begin": "yesterday"}, "begin"),
        ({"begin": 5, "end": 4}, "end"),
    ):
        refused = viewer.get(f"/api/v1/groups/{group}/dlq/export", query)
        assert refused.status_code == 400 and field in refused.json()["fields"], (query, refused.content)
    empty = viewer.get(f"/api/v1/groups/{group}/dlq/export", {"end": 1})
    assert empty.status_code == 200 and b"".join(empty.streaming_content) == b""


def test_pages_list_resend_and_refuse(viewer_client, as_role, dead, group, topic) -> None:
    page = viewer_client.get(f"/groups/{group}/dlq/").content.decode()
    assert (
        page.count('name="msg_ids"') == 0 and "RocketMQ&#x27;s clients send none" in page and f"%RETRY%{group}" in page
    )
    assert "order 1 failed" in page and topic in page
    topics = viewer_client.get("/topics/", {"type": "dlq"}).content.decode()
    assert f'href="/groups/{group}/dlq/"' in topics
    assert viewer_client.get(f"/groups/{group}/dlq/", {"page": "x"}).status_code == 400
    assert viewer_client.get(f"/groups/{group}/dlq/export", {"begin": "yesterday"}).status_code == 400

    operator = as_role("operator")
    page = operator.get(f"/groups/{group}/dlq/").content.decode()
    assert page.count('name="msg_ids"') == 3
    refused = operator.post(f"/groups/{group}/dlq/resend", {})
    assert refused.status_code == 400 and 'data-field="msg_ids"' in refused.content.decode()
    from topics.dead_letters.selectors import dead_letter_page

    ids = [d.msg_id for d in dead_letter_page(group=group).letters[:2]]
    done = operator.post(f"/groups/{group}/dlq/resend", {"msg_ids": ids}).content.decode()
    assert "Resent 2 of 2" in done and done.count('data-ok="true"') == 2
    export = operator.get(f"/groups/{group}/dlq/export", {"begin": "", "end": "", "limit": ""})
    assert export.status_code == 200 and len(b"".join(export.streaming_content).splitlines()) == 3
