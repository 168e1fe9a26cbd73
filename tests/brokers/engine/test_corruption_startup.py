"""A record corrupted in the middle of the commitlog stops the broker with a clear error."""

from __future__ import annotations

import subprocess
from pathlib import Path

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.client.simple import SimpleProducer
from brokers.engine.common.message import Message
from brokers.engine.common.message_codec import parse_offset_msg_id
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.topic_config import TopicConfig
from tests.brokers.engine.client._cluster import EmbeddedCluster, wait_for_route
from tests.brokers.engine.test_crash_recovery import BrokerProcess
from tests.fixtures.ports import free_ports

ROOT = Path(__file__).resolve().parents[3]


def test_middle_corruption_refuses_to_start_naming_file_and_offset(tmp_path) -> None:
    cluster = EmbeddedCluster(tmp_path / "ns", broker_names=()).start()
    store = tmp_path / "store"
    try:
        namesrv = cluster.namesrv_addr
        broker = BrokerProcess(store, namesrv, free_ports(1)[0])
        broker.start()
        admin = BlockingMQAdminClient(namesrv, timeout_s=5.0)
        producer = SimpleProducer(namesrv, "corruption-producer")
        try:
            admin.create_or_update_topic(f"127.0.0.1:{broker.port}", TopicConfig("CorruptTopic", 1, 1))
            wait_for_route(admin, "CorruptTopic", 1)
            mq = MessageQueue("CorruptTopic", "crash-broker", 0)
            results = [producer.send(Message("CorruptTopic", b"payload-%03d-" % i + b"x" * 400), mq) for i in range(40)]
        finally:
            producer.close()
            admin.close()
        broker.kill()  # a crash, so recovery checks every record from the checkpoint

        _, victim = parse_offset_msg_id(results[10].offset_msg_id)
        segment = store / "commitlog" / f"{0:020d}"
        data = bytearray(segment.read_bytes())
        data[victim + 200] ^= 0xFF  # inside the body: its CRC no longer matches; valid records follow
        segment.write_bytes(bytes(data))

        proc = subprocess.run(broker.argv, cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert proc.returncode != 0
        output = proc.stdout + proc.stderr
        assert str(segment) in output, output
        assert str(victim) in output, output
    finally:
        cluster.stop()
