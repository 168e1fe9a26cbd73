"""Apache's official 5.x Python client (``rocketmq-python-client`` from PyPI, unmodified) against Gantry's
gRPC endpoint: clients made for one test and shut down at its end, and a push listener that records
each delivery.

The client runs in the test's process on its own threads; ``receive`` long-polls for ``await_duration``
seconds when nothing is there, so the simple consumers here wait 2 s.
"""

from __future__ import annotations

import threading
from typing import Any

from rocketmq import (
    ClientConfiguration,
    ConsumeResult,
    Credentials,
    FilterExpression,
    Message,
    MessageListener,
    Producer,
    PushConsumer,
    SimpleConsumer,
)

from brokers.engine.client.admin import MQBrokerError
from tests.fixtures.waiting import wait_until
from tests.interop._grpc_clients import create_group, read_topic

AWAIT_S = 2


def message(
    topic: str,
    body: str,
    *,
    tag: str | None = None,
    keys: list[str] | None = None,
    group: str | None = None,
    properties: dict[str, str] | None = None,
) -> Message:
    msg = Message()
    msg.topic = topic
    msg.body = body.encode()
    if tag:
        msg.tag = tag
    for key in keys or ():
        msg.keys = key  # the setter adds one key each time
    if group:
        msg.message_group = group
    for key, value in (properties or {}).items():
        msg.add_property(key, value)
    return msg


class Recorder(MessageListener):
    """A push listener: records (body, delivery attempt, message group); FAILURE for bodies in ``fail``."""

    def __init__(self, fail: set[str] | None = None) -> None:
        self.fail = fail or set()
        self.deliveries: list[tuple[str, int, str | None]] = []
        self._lock = threading.Lock()

    def consume(self, msg) -> ConsumeResult:
        body = msg.body.decode()
        with self._lock:
            self.deliveries.append((body, msg.delivery_attempt, msg.message_group))
        return ConsumeResult.FAILURE if body in self.fail else ConsumeResult.SUCCESS

    def bodies(self) -> list[str]:
        with self._lock:
            return [d[0] for d in self.deliveries]


class PythonClients:
    """Clients of one test (``python_clients`` fixture): every client it starts is shut down at its end."""

    def __init__(self, endpoints: str, *, access_key: str = "", secret_key: str = "", tls: bool = False) -> None:
        self.config = ClientConfiguration(endpoints, Credentials(access_key, secret_key), request_timeout=10)
        self.tls = tls
        self.started: list[Any] = []

    def _start(self, client):
        client.startup()
        self.started.append(client)
        return client

    def producer(self, *topics: str) -> Producer:
        return self._start(Producer(self.config, topics, tls_enable=self.tls))

    def simple(self, group: str, topic: str, expression: str = "*") -> SimpleConsumer:
        return self._start(
            SimpleConsumer(
                self.config, group, {topic: FilterExpression(expression)}, await_duration=AWAIT_S, tls_enable=self.tls
            )
        )

    def push(self, group: str, topic: str, listener: MessageListener, expression: str = "*") -> PushConsumer:
        return self._start(
            PushConsumer(
                self.config,
                group,
                listener,
                {topic: FilterExpression(expression)},
                consumption_thread_count=2,
                tls_enable=self.tls,
            )
        )

    def close(self) -> None:
        for client in reversed(self.started):
            try:
                client.shutdown()
            except Exception:  # noqa: BLE001 - a client the test already shut down, or one that failed to start
                pass
        self.started.clear()


def receive_until(consumer: SimpleConsumer, count: int, timeout_s: float = 30.0, invisible_s: int = 30) -> list:
    """Receive (without acking) until ``count`` messages came in all; every message received, in order."""
    got: list = []

    def enough():
        got.extend(consumer.receive(16, invisible_s) or ())
        return got if len(got) >= count else None

    return wait_until(enough, timeout_s, f"{count} messages")


def poison_goes_to_the_dead_letter_topic(admin, cluster, clients: PythonClients, topic: str, group: str) -> Recorder:
    """A push consumer of ``group`` (retryMaxTimes 1) fails "poison" and takes "fine": after two deliveries,
    "poison" is the only message of %DLQ%<group> and "fine" came once. The listener, for more checks."""
    create_group(admin, cluster, group, retry_max_times=1)  # two deliveries, then %DLQ%<group>
    listener = Recorder(fail={"poison"})
    clients.push(group, topic, listener)
    producer = clients.producer(topic)
    producer.send(message(topic, "poison"))
    producer.send(message(topic, "fine"))
    wait_until(
        lambda: listener.bodies().count("poison") >= 2 and "fine" in listener.bodies(), 40, "two deliveries of poison"
    )
    wait_until(
        lambda: admin.examine_topic_route_info(f"%DLQ%{group}"), 30, "the dead-letter topic", ignoring=(MQBrokerError,)
    )
    dead = read_topic(cluster.namesrv_addr, f"%DLQ%{group}", expect=1, timeout_s=30)
    assert [m.body for _, m in dead] == [b"poison"]
    assert sorted(a for body, a, _ in listener.deliveries if body == "poison") == [1, 2]
    assert listener.bodies().count("fine") == 1
    return listener
