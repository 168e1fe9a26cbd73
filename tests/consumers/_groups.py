"""Helpers of the consumer-group tests: send messages, make group members, consume.

Members are PullClients that subscribe (their heartbeats make them members of the group) and
commit offsets with update_offset; they answer GET_CONSUMER_RUNNING_INFO with the queues they
pulled from.
"""
from __future__ import annotations

import pytest

from brokers.engine.client.simple import PullClient, SimpleProducer
from brokers.engine.common.message import Message
from brokers.engine.common.message_queue import MessageQueue


def send(cluster, topic: str, count: int, *, mq: MessageQueue | None = None, keys: str | None = None, body: bytes | None = None) -> list:
    with SimpleProducer(cluster.namesrv_addr, "test_producer", heartbeat_interval_s=None) as producer:
        return [producer.send(Message(topic, body if body is not None else f"m{i}".encode(), keys=keys), mq) for i in range(count)]


@pytest.fixture
def members(cluster):
    """Return a function making a subscribed member of a group (closed at the end of the test)."""
    made: list[PullClient] = []

    def make(group: str, topic: str, instance: str, expression: str = "*") -> PullClient:
        client = PullClient(cluster.namesrv_addr, group, instance_name=instance, heartbeat_interval_s=None)
        made.append(client)
        client.subscribe(topic, expression)
        return client

    yield make
    for client in made:
        client.close()


def consume(client: PullClient, queues, commit: bool = True) -> None:
    """Pull every message of ``queues`` (the member then holds them) and commit the offsets."""
    for mq in queues:
        result = client.pull(mq, 0)
        if commit:
            client.update_offset(mq, result.next_begin_offset)
