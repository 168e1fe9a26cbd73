"""``manage.py mqadmin deleteExpiredCommitLog`` and ``cleanExpiredCQ`` against a real cluster with
small segments, and a client consumer whose committed offset retention went past."""

from __future__ import annotations

import io
import time

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from brokers.engine.client import Producer
from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.client.pull_consumer import PullConsumer
from brokers.engine.common.message import Message
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.store.disk_usage import DiskUsage
from tests.brokers.engine.client._cluster import CLUSTER, EmbeddedCluster, create_topic


class SmallSegmentCluster(EmbeddedCluster):
    """broker-a and broker-b with 64 KiB commit log segments (retention has something to delete)."""

    def __init__(self, root) -> None:
        super().__init__(
            root,
            store_options={
                "commitlog_file_size": 64 << 10,
                "consume_queue_units_per_file": 50,
                "max_index_hash_slots": 1000,
                "max_index_count": 4000,
            },
        )


@pytest.fixture(scope="module")
def small_cluster(tmp_path_factory):
    cluster = SmallSegmentCluster(tmp_path_factory.mktemp("retention-cluster")).start()
    yield cluster
    cluster.stop()


def mqadmin(cluster, *args: str) -> str:
    out = io.StringIO()
    call_command("mqadmin", *args, "-n", cluster.namesrv_addr, stdout=out)
    return out.getvalue()


def pretend(ratio: float):
    used = int(ratio * 1000)
    return lambda path: DiskUsage(1000, used, 1000 - used)


def fill(cluster, topic: str, count: int) -> MessageQueue:
    with BlockingMQAdminClient(cluster.namesrv_addr, timeout_s=3.0) as admin:
        create_topic(admin, cluster, topic, queues=1)
    mq = MessageQueue(topic, "broker-a", 0)
    with Producer(f"p_{topic}", cluster.namesrv_addr) as producer:
        for i in range(count):
            producer.send(Message(topic, b"x" * 1000, keys=f"k{i}"), mq=mq)
    return mq


def test_delete_expired_commit_log_on_one_broker_and_clean_cq_on_a_cluster(small_cluster):
    fill(small_cluster, "RetainedA", 200)
    broker = small_cluster.brokers["broker-a"]
    addr = small_cluster.broker_addr("broker-a")
    segments = len(broker.store.commitlog.files)
    broker.store.retention.disk_usage = pretend(0.88)  # above the forcible ratio
    try:
        out = mqadmin(small_cluster, "deleteExpiredCommitLog", "-b", addr).splitlines()
    finally:
        broker.store.retention.disk_usage = pretend(0.10)
    assert out[0].startswith(f"{addr}: deleted {min(10, segments - 1)} commit log segment(s), ")
    assert f"commitLogMinOffset 0 -> {broker.store.min_phy_offset}" in out[0] and out[-1] == "success"
    out = mqadmin(small_cluster, "cleanExpiredCQ", "-c", CLUSTER).splitlines()
    assert [line.split(":")[0] + ":" + line.split(":")[1] for line in out[:-1]] == [
        small_cluster.broker_addr("broker-a"),
        small_cluster.broker_addr("broker-b"),
    ]
    assert out[-1] == "success"
    with pytest.raises(CommandError, match="cluster 'NoSuchCluster' is not known"):
        mqadmin(small_cluster, "deleteExpiredCommitLog", "-c", "NoSuchCluster")


def test_a_consumer_whose_offset_retention_went_past_goes_on_from_the_min_offset(small_cluster):
    mq = fill(small_cluster, "RetainedB", 200)
    group = "lagging_reader"
    first = PullConsumer(group, small_cluster.namesrv_addr, consume_from_where="CONSUME_FROM_FIRST_OFFSET")
    first.assign([mq])
    with first.start():
        got = []
        while len(got) < 10:
            got += first.poll(timeout_s=5.0)[: 10 - len(got)]
        first.seek(mq, 10)
        first.commit()
    broker = small_cluster.brokers["broker-a"]
    broker.store.retention.disk_usage = pretend(0.88)
    try:
        broker.store.retention.execute_delete_files_manually()
    finally:
        broker.store.retention.disk_usage = pretend(0.10)
    min_offset = broker.store.get_min_offset_in_queue("RetainedB", 0)
    assert min_offset > 10
    again = PullConsumer(group, small_cluster.namesrv_addr, consume_from_where="CONSUME_FROM_FIRST_OFFSET")
    again.assign([mq])
    with again.start():
        offsets: list[int] = []
        deadline = time.monotonic() + 20
        while len(offsets) < 200 - min_offset and time.monotonic() < deadline:
            offsets += [m.queue_offset for m in again.poll(timeout_s=2.0)]
    assert offsets == list(range(min_offset, 200))
    moved = broker.broker_stats.offset_moved[(group, "RetainedB", 0)]
    assert moved.times >= 1 and moved.skipped >= min_offset - 10
