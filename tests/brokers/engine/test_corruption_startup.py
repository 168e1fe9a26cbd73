"""A record corrupted in the middle of the commitlog stops the broker with a clear error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.client.simple import SimpleProducer
from brokers.engine.common.message import Message
from brokers.engine.common.message_codec import parse_offset_msg_id
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.cluster import ClusterSpec, GroupSpec
from brokers.engine.cluster.processes import ProcessCluster
from tests.brokers.engine.client._cluster import wait_for_route
from tests.fixtures.ports import free_ports

ROOT = Path(__file__).resolve().parents[3]


BROKER = "crash-broker"


def test_middle_corruption_refuses_to_start_naming_file_and_offset(tmp_path) -> None:
    spec = ClusterSpec(
        str(tmp_path),
        groups=(GroupSpec(BROKER),),
        store_overrides={"flush_disk_type": "SYNC_FLUSH", "commitlog_file_size": 64 * 1024},
    )
    store = Path(spec.store_dir(spec.member(BROKER)))
    with ProcessCluster(spec) as cluster:
        namesrv = cluster.namesrv_addr
        admin = BlockingMQAdminClient(namesrv, timeout_s=5.0)
        producer = SimpleProducer(namesrv, "corruption-producer")
        try:
            admin.create_or_update_topic(cluster.addr(BROKER), TopicConfig("CorruptTopic", 1, 1))
            wait_for_route(admin, "CorruptTopic", 1)
            mq = MessageQueue("CorruptTopic", BROKER, 0)
            results = [producer.send(Message("CorruptTopic", b"payload-%03d-" % i + b"x" * 400), mq) for i in range(40)]
        finally:
            producer.close()
            admin.close()
        cluster.kill_broker(BROKER)  # a crash, so recovery checks every record from the checkpoint

        _, victim = parse_offset_msg_id(results[10].offset_msg_id)
        segment = store / "commitlog" / f"{0:020d}"
        data = bytearray(segment.read_bytes())
        data[victim + 200] ^= 0xFF  # inside the body: its CRC no longer matches; valid records follow
        segment.write_bytes(bytes(data))

        # what an operator sees: the broker's command line refuses to start, naming the file and the offset
        argv = [
            sys.executable,
            "-m",
            "brokers.engine",
            "broker",
            "--name",
            BROKER,
            "--port",
            str(free_ports(1)[0]),
            "--namesrv",
            namesrv,
            "--store-dir",
            str(store),
            "--flush",
            "sync",
            "--commitlog-file-size",
            str(64 * 1024),
        ]
        proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert proc.returncode != 0
        output = proc.stdout + proc.stderr
        assert str(segment) in output, output
        assert str(victim) in output, output
