"""10,000 messages over 2 brokers x 4 queues, produced and consumed back through the wire."""

from __future__ import annotations

import asyncio

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.client.simple import AsyncPullClient, AsyncSimpleProducer, PullStatus
from brokers.engine.common.message import Message
from tests.brokers.engine.client._cluster import create_topic

TOTAL = 10_000


def _message(topic: str, n: int) -> Message:
    return Message(
        topic,
        f"body-{n}-".encode() + bytes([n % 251]) * (n % 300),
        tags=f"Tag{n % 3}",
        keys=[f"order-{n}", f"customer-{n % 97}"],
        properties={"seq": str(n), "unicode": "zażółć", "empty-looking": " "},
    )


async def _produce(namesrv: str, topic: str) -> dict:
    """Send one task per queue, each sequentially, so per-queue send order is known."""
    async with AsyncSimpleProducer(namesrv, "e2e-producer") as producer:
        queues = await producer.fetch_publish_message_queues(topic)
        assert len(queues) == 8
        sent: dict = {mq: [] for mq in queues}

        async def fill(index: int, mq) -> None:
            for n in range(index, TOTAL, len(queues)):
                result = await producer.send(_message(topic, n), mq)
                assert result.message_queue == mq
                sent[mq].append((result.queue_offset, n))

        await asyncio.gather(*(fill(i, mq) for i, mq in enumerate(queues)))
        return sent


async def _consume(namesrv: str, topic: str, queues) -> dict:
    async with AsyncPullClient(namesrv, "e2e-consumer") as puller:
        got: dict = {}

        async def drain(mq) -> None:
            offset, out = 0, []
            while True:
                result = await puller.pull(mq, offset, max_nums=32)
                if result.status != PullStatus.FOUND:
                    assert result.status == PullStatus.NO_NEW_MSG, result
                    break
                out.extend(result.messages)
                offset = result.next_begin_offset
            got[mq] = out

        await asyncio.gather(*(drain(mq) for mq in queues))
        return got


def test_ten_thousand_messages_round_trip_in_order_with_metadata(module_cluster) -> None:
    admin = BlockingMQAdminClient(module_cluster.namesrv_addr, timeout_s=5.0)
    try:
        create_topic(admin, module_cluster, "E2E_Orders", queues=4)
    finally:
        admin.close()

    sent = asyncio.run(_produce(module_cluster.namesrv_addr, "E2E_Orders"))
    assert sum(len(v) for v in sent.values()) == TOTAL
    assert {mq.broker_name for mq in sent} == {"broker-a", "broker-b"}

    got = asyncio.run(_consume(module_cluster.namesrv_addr, "E2E_Orders", list(sent)))
    assert sum(len(v) for v in got.values()) == TOTAL
    for mq, sends in sent.items():
        messages = got[mq]
        # In order per queue: consecutive queue offsets, in the order the producer sent them.
        assert [m.queue_offset for m in messages] == list(range(len(sends)))
        assert [off for off, _ in sends] == list(range(len(sends)))
        for (offset, n), m in zip(sends, messages):
            expected = _message("E2E_Orders", n)
            assert m.topic == "E2E_Orders" and m.queue_id == mq.queue_id and m.queue_offset == offset
            assert m.body == expected.body
            assert m.tags == expected.tags
            assert m.keys == f"order-{n} customer-{n % 97}"
            assert m.properties["seq"] == str(n)
            assert m.properties["unicode"] == "zażółć"
            assert m.properties["empty-looking"] == " "
            assert m.uniq_key  # the producer's client-side id survives
