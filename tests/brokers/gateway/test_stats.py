"""Gantry's GANTRY_GET_QUEUE_STATS through brokers.gateway.stats, against the session cluster: one
request per broker, every queue's offsets and bytes, every group's committed offsets."""

from __future__ import annotations


from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.remoting.errors import RemotingError
from brokers.gateway.cluster import masters
from brokers.gateway.stats import BrokerQueueStats, broker_stats
from tests.brokers.engine.client._cluster import create_topic
from tests.consumers._groups import send


def test_queue_stats_carry_every_queue_and_committed_offset(console_cluster, console_admin, topic_name, members):
    create_topic(console_admin, console_cluster, topic_name, queues=2)
    mq = MessageQueue(topic_name, "broker-a", 1)
    send(console_cluster, topic_name, 5, mq=mq, body=b"x" * 100)
    member = members("G_" + topic_name, topic_name, "one")
    member.update_offset(mq, 3)

    stats = broker_stats()
    assert set(stats) == set(console_cluster.broker_names) == set(masters())
    a = stats["broker-a"]
    assert isinstance(a, BrokerQueueStats) and a.addr == console_cluster.broker_addr("broker-a") and a.timestamp_ms > 0
    queues = {(q.topic, q.queue_id): q for q in a.queues}
    assert queues[(topic_name, 1)].max_offset == 5 and queues[(topic_name, 0)].max_offset == 0
    assert queues[(topic_name, 1)].put_bytes > 5 * 100  # whole records: body plus headers and properties
    assert queues[(topic_name, 0)].put_bytes == 0
    offsets = [o for o in a.offsets if o.topic == topic_name]
    assert [(o.group, o.queue_id, o.committed_offset, o.max_offset) for o in offsets] == [("G_" + topic_name, 1, 3, 5)]
    b = {(q.topic, q.queue_id): q for q in stats["broker-b"].queues}
    assert b[(topic_name, 1)].max_offset == 0


def test_an_unreachable_broker_is_reported_and_the_others_still_answer(console_cluster, unused_addr):
    stats = broker_stats({"broker-a": console_cluster.broker_addr("broker-a"), "gone": unused_addr})
    assert isinstance(stats["broker-a"], BrokerQueueStats)
    assert isinstance(stats["gone"], RemotingError)
