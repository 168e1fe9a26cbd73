"""Producer groups and their connected clients: GET_ALL_PRODUCER_INFO
on each master, merged, on /producers/ and /api/v1/producers."""

from __future__ import annotations

import time

import pytest

from brokers.engine.client import Message, Producer

pytestmark = pytest.mark.django_db


def test_a_connected_producer_is_listed_with_its_group_and_brokers(
    viewer, viewer_client, console_cluster, topic_name, console_admin
) -> None:
    from tests.brokers.engine.client._cluster import create_topic

    create_topic(console_admin, console_cluster, topic_name, queues=2)
    group = topic_name.replace("T_", "PG_")
    with Producer(group, console_cluster.namesrv_addr) as producer:
        producer.send(Message(topic_name, b"hello"))
        deadline = time.monotonic() + 10
        while True:
            body = viewer.get("/api/v1/producers").json()
            mine = [g for g in body["groups"] if g["group"] == group]
            if mine or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert mine, body
        [client] = mine[0]["clients"]
        assert client["language"] == "PYTHON" and client["last_heartbeat_ms"] > 0 and client["brokers"]
        assert (client["version"], client["version_code"]) == (
            "V4_9_8",
            409,
        )  # the name the group pages show, and the ordinal
        page = viewer_client.get("/producers/").content.decode()
        assert f'data-group="{group}"' in page and client["client_id"] in page
        assert '<td title="409">V4_9_8</td>' in page and '<td class="num">409</td>' not in page
    assert body["errors"] == []
