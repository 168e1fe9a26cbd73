"""Message trace from Gantry's clients on a real tier: the records land on RMQ_SYS_TRACE_TOPIC, keyed by
message id, and a dispatcher that cannot keep up drops records instead of slowing the sender."""

from __future__ import annotations

import asyncio
import uuid

from brokers.engine.client import AsyncProducer, AsyncPushConsumer, ConsumeConcurrentlyStatus, Producer
from brokers.engine.client.admin import MAX_TIMESTAMP
from brokers.engine.client.producer import trace_sender_factory
from brokers.engine.client.simple import SimpleProducer
from brokers.engine.client.trace_dispatcher import TraceConfig, TraceDispatcher
from brokers.engine.common.constants import RMQ_SYS_TRACE_TOPIC
from brokers.engine.common.message import Message
from brokers.engine.common.trace_data import TraceRecord, decode_trace_data
from tests.brokers.engine.client._cluster import create_topic
from tests.topics._dead_letters import FAST, wait_until
from tests.topics._traces import trace_types, traced_round_trip


def test_producer_and_push_consumer_trace_a_message(module_cluster, module_admin) -> None:
    topic, group = f"Traced_{uuid.uuid4().hex[:6]}", f"TracedGroup_{uuid.uuid4().hex[:6]}"
    create_topic(module_admin, module_cluster, topic, queues=2)
    msg_id = traced_round_trip(module_cluster, topic, group)
    found = module_admin.query_message_by_key(RMQ_SYS_TRACE_TOPIC, msg_id, 64, 0, MAX_TIMESTAMP)
    records = [r for m in found for r in decode_trace_data(bytes(m.body)).records if r.msg_id == msg_id]
    pub = next(r for r in records if r.trace_type == "Pub")
    after = next(r for r in records if r.trace_type == "SubAfter")
    before = next(r for r in records if r.trace_type == "SubBefore")
    assert (pub.group, pub.topic, pub.tags, pub.keys, pub.success, pub.body_length) == (
        f"{group}-producer",
        topic,
        "Paid",
        "order-42",
        True,
        13,
    )
    assert pub.store_host and pub.offset_msg_id
    assert (before.group, before.retry_times) == (group, 0) and (after.success, after.context_name) == (True, "SUCCESS")
    assert before.request_id == after.request_id
    assert all(
        msg_id in m.keys.split(" ") and "order-42" in m.keys.split(" ") for m in found
    )  # findable by id and by key


def test_a_full_queue_drops_records_and_never_blocks(module_cluster) -> None:
    dispatcher = TraceDispatcher(
        "never-started", trace_sender_factory(module_cluster.namesrv_addr, None, None, None), TraceConfig(queue_size=3)
    )
    for i in range(10):  # the thread is not started: nothing drains the queue
        dispatcher.offer(TraceRecord("SubBefore", f"ID{i}", 1, group="g", request_id="r"))
    assert dispatcher.dropped == 7


def test_a_missing_trace_topic_costs_the_traces_not_the_sends(module_cluster, module_admin) -> None:
    topic = f"Traced_{uuid.uuid4().hex[:6]}"
    create_topic(module_admin, module_cluster, topic, queues=1)
    with Producer(
        "untraced-topic-producer", module_cluster.namesrv_addr, trace_enabled=True, trace_topic="NoSuchTraceTopic"
    ) as producer:
        results = [producer.send(Message(topic, b"x")) for _ in range(3)]
        tracer = producer.tracer
        assert tracer is not None
        wait_until(lambda: tracer.send_failures >= 1, what="the trace send failed")
    assert all(r.offset_msg_id for r in results) and tracer.sent_records == 0


def test_asyncio_clients_trace_too(module_cluster, module_admin) -> None:
    topic, group = f"Traced_{uuid.uuid4().hex[:6]}", f"TracedAsync_{uuid.uuid4().hex[:6]}"
    create_topic(module_admin, module_cluster, topic, queues=1)

    async def scenario() -> str:
        got = asyncio.Event()

        async def listener(msgs, context) -> ConsumeConcurrentlyStatus:
            got.set()
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

        consumer = AsyncPushConsumer(
            group,
            module_cluster.namesrv_addr,
            consume_from_where="CONSUME_FROM_FIRST_OFFSET",
            client_config=FAST,
            trace_enabled=True,
        )
        consumer.subscribe(topic, "*")
        consumer.register_listener(listener)
        async with (
            AsyncProducer(f"{group}-producer", module_cluster.namesrv_addr, trace_enabled=True) as producer,
            consumer,
        ):
            msg_id = (await producer.send(Message(topic, b"async"))).msg_id
            await asyncio.wait_for(got.wait(), 20)
            await asyncio.to_thread(
                wait_until,
                lambda: trace_types(module_cluster, msg_id) >= {"Pub", "SubBefore", "SubAfter"},
                20.0,
                "async Pub and Sub records",
            )
        return msg_id

    assert asyncio.run(scenario())


def test_simple_producer_traces_its_sends(module_cluster, module_admin) -> None:
    topic = f"Traced_{uuid.uuid4().hex[:6]}"
    create_topic(module_admin, module_cluster, topic, queues=1)
    with SimpleProducer(
        module_cluster.namesrv_addr, "simple-traced", heartbeat_interval_s=None, trace_enabled=True
    ) as producer:
        msg_id = producer.send(Message(topic, b"simple", keys="simple-1")).msg_id
    wait_until(lambda: "Pub" in trace_types(module_cluster, msg_id), what="the simple producer's Pub")


def test_a_producer_and_consumer_of_one_name_both_trace(module_cluster, module_admin) -> None:
    topic, name = f"Traced_{uuid.uuid4().hex[:6]}", f"same_{uuid.uuid4().hex[:6]}"
    create_topic(module_admin, module_cluster, topic, queues=1)
    msg_id = traced_round_trip(module_cluster, topic, name, producer_group=name)
    assert trace_types(module_cluster, msg_id) == {"Pub", "SubBefore", "SubAfter"}
