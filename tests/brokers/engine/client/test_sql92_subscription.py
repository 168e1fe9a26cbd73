"""Gantry's own consumers subscribe with SQL92 (the module cluster's brokers have enable_property_filter on)."""

from __future__ import annotations

from brokers.engine.client import (
    ConsumeConcurrentlyStatus,
    ConsumerConfig,
    Message,
    PullConsumer,
    PushConsumer,
    ReceivedMessage,
)
from brokers.engine.client.simple import PullClient
from tests.brokers.engine.client._cluster import create_topic
from tests.brokers.engine.client.test_push_consumer import FAST, Collector, wait_until


def _queue_ends(cluster, topic: str) -> dict:
    with PullClient(cluster.namesrv_addr, heartbeat_interval_s=None) as puller:
        return {mq: puller.max_offset(mq) for mq in puller.fetch_subscribe_message_queues(topic)}


def test_a_push_consumer_gets_the_matching_messages_and_its_retries(module_cluster, module_admin, producer, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=2)
    group = f"sql_{topic_name}"
    retried: set[bytes] = set()

    def status_of(m: ReceivedMessage) -> ConsumeConcurrentlyStatus:
        if m.body == b"retry-me" and m.body not in retried:  # once: the retry comes back through %RETRY%<group> (TAG *)
            retried.add(m.body)
            return ConsumeConcurrentlyStatus.RECONSUME_LATER
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    got = Collector(status_of)
    c = PushConsumer(
        group,
        module_cluster.namesrv_addr,
        client_config=FAST,
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        config=ConsumerConfig(pull_suspend_ms=500, delay_level_when_next_consume=1),
    )
    c.subscribe(topic_name, "  amount > 100 AND (TAGS = 'order' OR vip = 'true')  ", expression_type="SQL92")
    c.register_listener(got)
    c.start()
    try:
        sent = [
            (b"small", "order", {"amount": "5"}),
            (b"big", "order", {"amount": "500"}),
            (b"retry-me", "order", {"amount": "700"}),
            (b"big-refund", "refund", {"amount": "900"}),
            (b"big-vip-refund", "refund", {"amount": "900", "vip": "true"}),
            (b"no-amount", "order", {}),
        ]
        for body, tags, props in sent:
            producer.send(Message(topic_name, body, tags=tags, properties=props))
        ends = _queue_ends(module_cluster, topic_name)
        wait_until(
            lambda: all(c.committed_offset(mq) == end for mq, end in ends.items()), what="offsets at the queue ends"
        )
        wait_until(lambda: got.bodies().count("retry-me") == 2, timeout_s=20, what="the retried message back")
        assert sorted(set(got.bodies())) == ["big", "big-vip-refund", "retry-me"]
        retry = [m for m in got.msgs if m.body == b"retry-me"][1]
        assert retry.reconsume_times == 1 and retry.message_queue.topic == f"%RETRY%{group}"
        sub = c.subscriptions[topic_name]
        assert (sub.expression_type, sub.sub_string) == ("SQL92", "amount > 100 AND (TAGS = 'order' OR vip = 'true')")
    finally:
        c.shutdown()


def test_a_pull_consumer_subscribes_with_sql92(module_cluster, module_admin, producer, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=1)
    for i in range(10):
        producer.send(Message(topic_name, f"m{i}".encode(), tags="t", properties={"i": str(i)}))
    c = PullConsumer(
        f"sqlpull_{topic_name}", module_cluster.namesrv_addr, consume_from_where="FIRST_OFFSET", client_config=FAST
    )
    c.subscribe(topic_name, "i IN ('2', '3', '7')", expression_type="SQL92")
    with c.start():
        got: list[bytes] = []
        wait_until(lambda: got.extend(m.body for m in c.poll(timeout_s=0.2)) or len(got) >= 3, what="three messages")
        assert sorted(got) == [b"m2", b"m3", b"m7"]
