"""Dead letters made the real way: a push consumer of the group whose listener fails every message,
with maxReconsumeTimes 0, so its first CONSUMER_SEND_MSG_BACK has the broker move each one to
``%DLQ%<group>`` (RETRY_TOPIC, ORIGIN_MESSAGE_ID and reconsume times 1 on the dead letter)."""

from __future__ import annotations

import threading
import time

from brokers.engine.client import ClientConfig, ConsumeConcurrentlyStatus, ConsumerConfig, PushConsumer
from brokers.engine.client.simple import SimpleProducer
from brokers.engine.common.message import Message
from tests.fixtures.waiting import wait_until

FAST = ClientConfig(
    rebalance_interval_s=0.5,
    poll_name_server_interval_s=0.5,
    heartbeat_broker_interval_s=1.0,
    persist_consumer_offset_interval_s=0.5,
)


def make_dead_letters(cluster, group: str, topic: str, messages: list[Message], raise_for: str = "") -> list:
    """Send ``messages`` to ``topic`` and let ``group`` fail each once: they end in its DLQ. The listener
    raises ``RuntimeError(f"{body} (…)")`` for a message whose body contains ``raise_for`` (when given), and
    answers RECONSUME_LATER for the others. Returns the send results."""
    with SimpleProducer(cluster.namesrv_addr, "test_producer", heartbeat_interval_s=None) as producer:
        sent = [producer.send(m) for m in messages]
    failed: set[str] = set()
    lock = threading.Lock()

    def fail(msgs) -> ConsumeConcurrentlyStatus:
        with lock:
            failed.update(m.msg_id for m in msgs)
        for m in msgs:
            if raise_for and raise_for.encode() in m.body:
                raise RuntimeError(f"{m.body.decode()} (card issuer said no)")
        return ConsumeConcurrentlyStatus.RECONSUME_LATER

    consumer = PushConsumer(
        group,
        cluster.namesrv_addr,
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        client_config=FAST,
        config=ConsumerConfig(max_reconsume_times=0),
        instance_name=f"dlq-maker-{group}",
    )
    consumer.subscribe(topic, "*")
    consumer.register_listener(fail)
    consumer.start()
    try:
        wait_until(lambda: {s.msg_id for s in sent} <= failed, what="every message failed once")
        time.sleep(0.3)  # the sendbacks follow the listener's answer
    finally:
        consumer.shutdown()
    return sent


def consume_resent(cluster, group: str, topic: str, count: int, timeout_s: float = 20.0) -> list:
    """Start a member of ``group`` that succeeds, and return the first ``count`` messages it gets that were resent from the DLQ."""
    got, lock = [], threading.Lock()

    def ok(msgs) -> ConsumeConcurrentlyStatus:
        with lock:
            got.extend(m for m in msgs if "DLQ_RESENT_FROM" in m.properties)
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    consumer = PushConsumer(
        group,
        cluster.namesrv_addr,
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        client_config=FAST,
        instance_name=f"dlq-reader-{group}",
    )
    consumer.subscribe(topic, "*")
    consumer.register_listener(ok)
    consumer.start()
    try:
        wait_until(lambda: len(got) >= count, timeout_s, what=f"{count} resent messages")
    finally:
        consumer.shutdown()
    return list(got)
