"""Helpers of the consumer-group tests: send messages and consume them as a group member
(members are made by the ``members`` fixture, tests/fixtures/console.py)."""
from __future__ import annotations

from brokers.engine.client.simple import PullClient, SimpleProducer
from brokers.engine.common.message import Message
from brokers.engine.common.message_queue import MessageQueue


def send(cluster, topic: str, count: int, *, mq: MessageQueue | None = None, keys: str | None = None, body: bytes | None = None) -> list:
    with SimpleProducer(cluster.namesrv_addr, "test_producer", heartbeat_interval_s=None) as producer:
        return [producer.send(Message(topic, body if body is not None else f"m{i}".encode(), keys=keys), mq) for i in range(count)]


def consume(client: PullClient, queues, commit: bool = True) -> None:
    """Pull every message of ``queues`` (the member then holds them) and commit the offsets."""
    for mq in queues:
        result = client.pull(mq, 0)
        if commit:
            client.update_offset(mq, result.next_begin_offset)
