"""Helpers of the consumer-group tests: send messages and consume them as a group member
(members are made by the ``members`` fixture, tests/fixtures/console.py)."""

from __future__ import annotations

from brokers.engine.client.simple import PullClient, SimpleProducer
from brokers.engine.common.message import Message
from brokers.engine.common.message_queue import MessageQueue


def send(
    cluster,
    topic: str,
    count: int,
    *,
    mq: MessageQueue | None = None,
    keys: str | None = None,
    body: bytes | None = None,
) -> list:
    with SimpleProducer(cluster.namesrv_addr, "test_producer", heartbeat_interval_s=None) as producer:
        return [
            producer.send(Message(topic, body if body is not None else f"m{i}".encode(), keys=keys), mq)
            for i in range(count)
        ]


def consume(client: PullClient, queues, commit: bool = True) -> None:
    """Pull every message of ``queues`` (the member then holds them) and commit the offsets."""
    for mq in queues:
        result = client.pull(mq, 0)
        if commit:
            client.update_offset(mq, result.next_begin_offset)


def member_recording_resets(cluster, members, group: str, topic: str, instance: str):
    """An online member of ``group`` holding every queue of ``topic`` (16 messages sent and consumed) that records
    the RESET_CONSUMER_CLIENT_OFFSET pushes it gets: (member, the pushed requests, an Event set on the first)."""
    import threading

    from brokers.engine.remoting.codes import RequestCode

    send(cluster, topic, 16)
    member = members(group, topic, instance)
    consume(member, member.fetch_subscribe_message_queues(topic))
    pushed, arrived = [], threading.Event()

    async def on_reset(ctx, request):
        pushed.append(request)
        arrived.set()

    member.driver.remoting.register_processor(RequestCode.RESET_CONSUMER_CLIENT_OFFSET, on_reset)
    return member, pushed, arrived
