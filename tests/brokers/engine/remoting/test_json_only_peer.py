"""A consumer that reads only JSON headers keeps its place in a group shared with Gantry's consumers.

Gantry's own requests travel with the ROCKETMQ binary header when the compiled codecs are built,
but a broker's requests to a client (NOTIFY_CONSUMER_IDS_CHANGED here) go as JSON unless that client
has itself sent the binary header on the connection. A client that reads only JSON would otherwise
close the connection at the first notification, and the broker would drop it from its group: it
then held no queue and consumed nothing. ``make test`` runs this on the compiled codecs and again on
the pure-Python path.
"""

from __future__ import annotations

import threading
import uuid

from brokers.engine.client import ConsumeConcurrentlyStatus, Message, Producer, PushConsumer
from tests.brokers.engine.client._cluster import create_topic
from tests.brokers.engine.remoting._json_only_peer import JsonOnlyConsumer
from tests.fixtures.waiting import wait_until

MESSAGES = 60


def test_json_only_consumer_shares_a_group_with_gantry_consumers(module_cluster, module_admin):
    topic = f"JsonOnly{uuid.uuid4().hex[:8]}"
    group = f"json_only_group_{uuid.uuid4().hex[:8]}"
    create_topic(module_admin, module_cluster, topic, queues=4)  # 8 queues on two brokers
    every_queue = {(broker, qid) for broker in module_cluster.broker_names for qid in range(4)}

    peer = JsonOnlyConsumer(
        module_cluster.namesrv_addr, group, topic, client_id=f"127.0.0.1@json-only-{uuid.uuid4().hex[:6]}"
    ).start()
    lock = threading.Lock()
    gantry_bodies: list[bytes] = []

    def listener(msgs):
        with lock:
            gantry_bodies.extend(m.body for m in msgs)
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    consumers = []
    try:
        wait_until(lambda: peer.assigned == every_queue, what="the JSON-only consumer holding the topic alone")
        for _ in range(2):
            consumer = PushConsumer(group, module_cluster.namesrv_addr, consume_from_where="CONSUME_FROM_FIRST_OFFSET")
            consumer.subscribe(topic, "*")
            consumer.register_listener(listener)
            consumer.start()
            consumers.append(consumer)

        def owners_settled():
            held = [
                {(mq.broker_name, mq.queue_id) for mq in c.assigned_queues() if mq.topic == topic} for c in consumers
            ]
            held.append(set(peer.assigned))
            return all(held) and sum(len(h) for h in held) == len(every_queue) and set().union(*held) == every_queue

        wait_until(owners_settled, what="every queue with exactly one owner among the three members")
        assert peer.notifications >= 1, "the broker told the JSON-only member about the new members"
        assert len(peer.assigned) >= 2

        with Producer(f"json_only_producer_{uuid.uuid4().hex[:6]}", module_cluster.namesrv_addr) as producer:
            sent = {producer.send(Message(topic, b"m-%d" % i)).msg_id and b"m-%d" % i for i in range(MESSAGES)}

        def all_consumed():
            with lock:
                return set(gantry_bodies) | set(peer.received) >= sent

        wait_until(all_consumed, what=f"all {MESSAGES} messages consumed by the group")
        assert peer.received, "the JSON-only member consumed its share"
        assert peer.non_json_frames == 0, "a frame in the binary header reached a client that never sent one"
        assert peer.connections_closed == 0
    finally:
        for consumer in consumers:
            consumer.shutdown()
        peer.stop()
