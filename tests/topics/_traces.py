"""Traces made the real way for the trace tests: a Gantry producer and push consumer with tracing on,
or a record in RocketMQ's exact text sent by hand to the trace topic with the keys a Java client sets."""

from __future__ import annotations

import threading

from brokers.engine.client import ConsumeConcurrentlyStatus, Producer, PushConsumer
from brokers.engine.client.admin import MAX_TIMESTAMP, BlockingMQAdminClient
from brokers.engine.client.simple import SimpleProducer
from brokers.engine.common.constants import RMQ_SYS_TRACE_TOPIC
from brokers.engine.common.message import Message
from brokers.engine.common.trace_data import CONTENT_SPLITOR as C, FIELD_SPLITOR as F, decode_trace_data
from tests.topics._dead_letters import FAST, wait_until


def trace_types(cluster, msg_id: str) -> set[str]:
    """The record types the trace topic holds about ``msg_id`` (a key-index query, as the console makes)."""
    with BlockingMQAdminClient(cluster.namesrv_addr) as admin:
        found = admin.query_message_by_key(RMQ_SYS_TRACE_TOPIC, msg_id, 64, 0, MAX_TIMESTAMP)
    return {r.trace_type for m in found for r in decode_trace_data(bytes(m.body)).records if r.msg_id == msg_id}


def traced_round_trip(
    cluster,
    topic: str,
    group: str,
    body: bytes = b"order 42 paid",
    keys: str = "order-42",
    producer_group: str | None = None,
) -> str:
    """Send one message with a tracing Producer (group ``<group>-producer`` by default), consume it with a
    tracing PushConsumer, and wait until the trace topic holds its Pub, SubBefore and SubAfter.
    Returns the message id (UNIQ_KEY)."""
    got = threading.Event()

    def listener(msgs) -> ConsumeConcurrentlyStatus:
        got.set()
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    consumer = PushConsumer(
        group,
        cluster.namesrv_addr,
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        client_config=FAST,
        instance_name=f"trace-{group}",
        trace_enabled=True,
    )
    consumer.subscribe(topic, "*")
    consumer.register_listener(listener)
    consumer.start()
    try:
        with Producer(
            producer_group or f"{group}-producer",
            cluster.namesrv_addr,
            instance_name=f"trace-p-{group}",
            trace_enabled=True,
        ) as producer:
            msg_id = producer.send(Message(topic, body, tags="Paid", keys=keys)).msg_id
            wait_until(got.is_set, what="the consumer got the message")
            wait_until(
                lambda: trace_types(cluster, msg_id) >= {"Pub", "SubBefore", "SubAfter"},
                what="Pub, SubBefore and SubAfter traced",
            )
    finally:
        consumer.shutdown()
    return msg_id


def java_trace_body(msg_id: str, topic: str, *, producer_group: str, consumer_group: str, keys: str) -> str:
    """A Pub, SubBefore and SubAfter exactly as RocketMQ 4.9's TraceDataEncoder writes them (one trace message)."""
    pub = C.join(
        [
            "Pub",
            "1700000000000",
            "DefaultRegion",
            producer_group,
            topic,
            msg_id,
            "TagJ",
            keys,
            "10.1.2.3:10911",
            "21",
            "4",
            "0",
            "0A01020300002A9F0000000000ABCDEF",
            "true",
        ]
    )
    before = C.join(["SubBefore", "1700000000200", "DefaultRegion", consumer_group, "0A010203REQ", msg_id, "1", keys])
    after = C.join(["SubAfter", "0A010203REQ", msg_id, "9", "false", keys, "4", "1700000000209", consumer_group])
    return pub + F + before + F + after + F


def send_java_trace(cluster, msg_id: str, topic: str, *, producer_group: str, consumer_group: str, keys: str) -> None:
    """A plain send of a Java client's trace message: the encoded body on RMQ_SYS_TRACE_TOPIC, keyed by id and keys."""
    body = java_trace_body(msg_id, topic, producer_group=producer_group, consumer_group=consumer_group, keys=keys)
    with SimpleProducer(cluster.namesrv_addr, "_INNER_TRACE_PRODUCER-java", heartbeat_interval_s=None) as producer:
        producer.send(Message(RMQ_SYS_TRACE_TOPIC, body.encode(), keys=f"{msg_id} {keys}"))
    wait_until(lambda: "Pub" in trace_types(cluster, msg_id), what="the hand-written trace indexed")
