"""What the tests of Apache's name server and broker as peers share: Gantry's Python clients sending and
consuming a batch of messages through a given name server, and reading Apache mqadmin's fastjson output."""

from __future__ import annotations

from functools import partial

import itertools
import threading
import uuid

from brokers.engine.client import (
    ClientConfig,
    ConsumeConcurrentlyStatus,
    Message,
    Producer,
    PullConsumer,
    PushConsumer,
    ReceivedMessage,
)
from brokers.engine.client.send_result import SendResult
from brokers.engine.common import json_compat
from tests.fixtures import waiting

wait_until = partial(waiting.wait_until, every_s=0.1, ignoring=(Exception,))  # a server starting or gone: not yet

__all__ = ["FAST", "consume_pulling", "consume_pushed", "mqadmin_json", "send_all", "unique", "wait_until"]

# Clients that notice a new route or a rebalance within a second instead of 30 s.
FAST = ClientConfig(
    rebalance_interval_s=0.5,
    poll_name_server_interval_s=0.5,
    heartbeat_broker_interval_s=1.0,
    persist_consumer_offset_interval_s=0.5,
)
DELIVERY_TIMEOUT_S = 60.0  # generous: the Apache JVMs share 2 cores with the rest of the suite
_counter = itertools.count()


def unique(prefix: str) -> str:
    """A topic, group or instance name no other test of the run uses."""
    return f"{prefix}_{next(_counter)}_{uuid.uuid4().hex[:6]}"


def send_all(namesrv_addr: str, topic: str, bodies: list[str]) -> list[SendResult]:
    """Send each body to ``topic`` with Gantry's Producer, routed through ``namesrv_addr``; the send results."""
    with Producer(unique("peer_producer"), namesrv_addr, client_config=FAST) as producer:
        return [producer.send(Message(topic, body.encode(), tags="peer", keys=f"k-{body}")) for body in bodies]


def consume_pulling(namesrv_addr: str, topic: str, expect: int) -> list[ReceivedMessage]:
    """Everything a PullConsumer subscribed to ``topic`` (from the first offset) gets, once it has ``expect``."""
    consumer = PullConsumer(unique("peer_pull"), namesrv_addr, consume_from_where="FIRST_OFFSET", client_config=FAST)
    consumer.subscribe(topic)
    got: list[ReceivedMessage] = []
    with consumer.start():

        def enough() -> bool:
            got.extend(consumer.poll(timeout_s=1.0))
            return len(got) >= expect

        wait_until(enough, DELIVERY_TIMEOUT_S, f"{expect} messages of {topic} pulled")
        consumer.commit()
    return got


def consume_pushed(namesrv_addr: str, topic: str, expect: int) -> list[ReceivedMessage]:
    """Everything a PushConsumer subscribed to ``topic`` (from the first offset) gets, once it has ``expect``."""
    lock = threading.Lock()
    got: list[ReceivedMessage] = []

    def listener(msgs: list[ReceivedMessage]) -> ConsumeConcurrentlyStatus:
        with lock:
            got.extend(msgs)
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    consumer = PushConsumer(
        unique("peer_push"), namesrv_addr, consume_from_where="CONSUME_FROM_FIRST_OFFSET", client_config=FAST
    )
    consumer.subscribe(topic, "*")
    consumer.register_listener(listener)
    consumer.start()
    try:
        wait_until(lambda: len(got) >= expect, DELIVERY_TIMEOUT_S, f"{expect} messages of {topic} pushed")
    finally:
        consumer.shutdown()
    with lock:
        return list(got)


def mqadmin_json(output: str) -> object:
    """The JSON document (fastjson's dialect: bare integer keys) that mqadmin printed, from its first ``{``."""
    start = output.find("{")
    assert start >= 0, f"no JSON in mqadmin's output:\n{output}"
    return json_compat.loads(output[start:])
