"""A member's running info (GET_CONSUMER_RUNNING_INFO) on the group page and in the API, from a
live Gantry PushConsumer: its subscription, settings and per-topic figures; an unknown client is
a 404 naming it in the API and a sentence on the page, never a 500."""

from __future__ import annotations

import threading

import pytest

from brokers.engine.client import ClientConfig, ConsumeConcurrentlyStatus, PushConsumer
from brokers.engine.client.admin_bodies import parse_consumer_running_info
from brokers.engine.client.simple import SimpleProducer
from brokers.engine.common.message import Message
from brokers.gateway.running_info import running_info_of
from tests.fixtures.waiting import wait_until

pytestmark = pytest.mark.django_db

FAST = ClientConfig(
    rebalance_interval_s=0.5,
    poll_name_server_interval_s=0.5,
    heartbeat_broker_interval_s=1.0,
    persist_consumer_offset_interval_s=0.5,
)


@pytest.fixture
def push_member(console_cluster, topic, group):
    """A PushConsumer of the group that has consumed 8 messages, one of them failing once."""
    lock, ok, failed = threading.Lock(), [], []

    def listener(msgs):
        with lock:
            for m in msgs:
                if m.body == b"fail" and not failed:
                    failed.append(m)
                    return ConsumeConcurrentlyStatus.RECONSUME_LATER
            ok.extend(msgs)
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    c = PushConsumer(
        group,
        console_cluster.namesrv_addr,
        client_config=FAST,
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        instance_name="running-info",
    )
    c.subscribe(topic, "TagA || TagB")
    c.register_listener(listener)
    c.start()
    try:
        with SimpleProducer(console_cluster.namesrv_addr, "test_producer", heartbeat_interval_s=None) as producer:
            for body in [f"m{i}".encode() for i in range(7)] + [b"fail"]:
                producer.send(Message(topic, body, tags="TagA"))
        wait_until(lambda: failed and len(ok) >= 7, what="the messages consumed and one failure")
        yield c
    finally:
        c.shutdown()


def test_a_real_client_body_parses(push_member, group, topic) -> None:
    info = parse_consumer_running_info(push_member.running_info_body())
    row = running_info_of(group, push_member.client_id, "addr", "PYTHON", "v", "broker", info)
    assert [(s.topic, s.expression, s.tags) for s in row.subscriptions if s.topic == topic] == [
        (topic, "TagA || TagB", ("TagA", "TagB"))
    ]
    props = dict(row.properties)
    assert props["consumeFromWhere"] == "CONSUME_FROM_FIRST_OFFSET" and props["messageModel"] == "CLUSTERING"
    assert int(props["consumeThreadMax"]) > 0 and int(props["pullBatchSize"]) > 0
    assert [s.consume_failed_msgs for s in row.statuses if s.topic == topic] == [1]
    assert {q.topic for q in row.queues} == {topic} and len(row.queues) == 8  # 4 queues on each of two brokers


def test_the_group_page_opens_a_members_running_info(viewer_client, push_member, group, topic) -> None:
    cid = push_member.client_id
    page = viewer_client.get(f"/groups/{group}/").content.decode()
    url = f"/groups/{group}/clients/{cid}/running-info"
    assert f'href="{url}" hx-get="{url}" hx-target="#running-info-slot"' in page and 'id="running-info-slot"' in page
    fragment = viewer_client.get(url, HTTP_HX_REQUEST="true")
    body = fragment.content.decode()
    assert fragment.status_code == 200 and "<html" not in body
    assert 'data-testid="running-subscriptions"' in body and topic in body and "TagA || TagB" in body
    assert "consumeThreadMax" in body and "CONSUME_FROM_FIRST_OFFSET" in body
    assert f'<tr data-topic="{topic}">' in body and 'data-testid="running-queues"' in body
    full = viewer_client.get(url).content.decode()
    assert "<html" in full and 'data-testid="running-info"' in full and cid in full


def test_the_api_gives_a_members_running_info(api_client_as, push_member, group, topic) -> None:
    api = api_client_as("viewer")
    cid = push_member.client_id
    r = api.get(f"/api/v1/groups/{group}/clients/{cid}/running-info")
    assert r.status_code == 200, r.content
    data = r.json()
    assert data["client_id"] == cid and data["group"] == group and data["language"] == "PYTHON"
    assert {
        "topic": topic,
        "expression": "TagA || TagB",
        "expression_type": "TAG",
        "tags": ["TagA", "TagB"],
    }.items() <= next(s for s in data["subscriptions"] if s["topic"] == topic).items()
    assert (
        data["properties"]["consumeFromWhere"] == "CONSUME_FROM_FIRST_OFFSET" and "pullBatchSize" in data["properties"]
    )
    status = next(s for s in data["statuses"] if s["topic"] == topic)
    assert status["consume_failed_msgs"] == 1 and set(status) >= {"consume_rt", "consume_ok_tps", "consume_failed_tps"}
    assert len([q for q in data["queues"] if q["topic"] == topic]) == 8


def test_an_unknown_client_is_a_404_naming_it(api_client_as, viewer_client, push_member, group) -> None:
    r = api_client_as("viewer").get(f"/api/v1/groups/{group}/clients/10.0.0.9@nobody/running-info")
    assert r.status_code == 404 and "10.0.0.9@nobody" in r.content.decode()
    # the page says so in a sentence (the group page's fragment swaps in), no error page
    page = viewer_client.get(f"/groups/{group}/clients/10.0.0.9@nobody/running-info", HTTP_HX_REQUEST="true")
    assert page.status_code == 200 and 'data-testid="running-info-reason"' in page.content.decode()
    assert "10.0.0.9@nobody" in page.content.decode() and "not an online member" in page.content.decode()
