"""Retention seen from the console: when the broker's clean pass deletes old commit log segments,
the topic page and the API show each queue's min offset moving up, and the overview says the
broker is cleaning forcibly.

A real broker (in-process, small 64 KiB segments, small consume queue files); the disk usage the
clean pass sees is pretended through the store's replaceable disk-usage function, so the pass is
the forcible one (above ``diskSpaceCleanForciblyRatio``) without filling the machine's disk.
"""

from __future__ import annotations

import re

import pytest

from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.store.disk_usage import DiskUsage
from tests.brokers.engine.client._cluster import EmbeddedCluster, create_topic
from tests.consumers._groups import send

pytestmark = pytest.mark.django_db

SEGMENT = 64 << 10


@pytest.fixture
def retention_cluster(tmp_path, mq_settings):
    cluster = EmbeddedCluster(
        tmp_path / "stores",
        broker_names=("broker-r",),
        cluster="RetentionCluster",
        store_options={"commitlog_file_size": SEGMENT, "consume_queue_units_per_file": 16},
    ).start()
    mq_settings(cluster.namesrv_addr)
    yield cluster
    cluster.stop()


def min_offsets(html: str) -> dict[str, int]:
    return {
        q: int(lo)
        for q, lo in re.findall(r'<tr data-queue="([^"]+)">.*?data-testid="min-offset">(\d+)</td>', html, re.S)
    }


def test_a_forcible_clean_moves_the_min_offset_on_the_topic_page_and_api(retention_cluster, viewer_client, viewer):
    from brokers.engine.client.admin import BlockingMQAdminClient

    topic = "TopicRetentionSeen"
    with BlockingMQAdminClient(retention_cluster.namesrv_addr) as admin:
        create_topic(admin, retention_cluster, topic, queues=1)
    mq = MessageQueue(topic, "broker-r", 0)
    send(retention_cluster, topic, 80, mq=mq, body=b"x" * 4000)  # ~5 segments of 64 KiB

    page = viewer_client.get(f"/topics/{topic}/", HTTP_HX_REQUEST="true").content.decode()
    assert min_offsets(page) == {"broker-r:0": 0}

    store = retention_cluster.brokers["broker-r"].store
    segments_before = len(store.commitlog.files)
    total = 100 << 30
    store.retention.disk_usage = lambda _path: DiskUsage(total, int(total * 0.87), int(total * 0.13))
    report = store.retention.run_pass()
    assert len(store.commitlog.files) < segments_before, report
    moved = store.get_min_offset_in_queue(topic, 0)
    assert 0 < moved < 80

    page = viewer_client.get(f"/topics/{topic}/", HTTP_HX_REQUEST="true").content.decode()
    assert min_offsets(page) == {"broker-r:0": moved}
    queues = viewer.get(f"/api/v1/topics/{topic}/status").json()["queues"]
    assert [(q["broker_name"], q["queue_id"], q["min_offset"], q["max_offset"]) for q in queues] == [
        ("broker-r", 0, moved, 80)
    ]

    brokers = viewer.get("/api/v1/brokers").json()
    rows = brokers if isinstance(brokers, list) else brokers.get("results", brokers.get("brokers", []))
    (row,) = [b for b in rows if b.get("broker_name") == "broker-r"]
    assert row["disk_state"] == "cleaning forcibly" and row["cleaned_files_total"] >= 1
