"""What the gRPC Java-client interop tests share: Apache's official 5.x gRPC client (rocketmq-client-java,
Maven module ``grpc5``, driven by interop/grpc-driver) against a Gantry broker whose 5.x endpoint
(``apache.rocketmq.v2.MessagingService``) is on (``grpc_port=0``).

- :func:`start_grpc_cluster`: an EmbeddedCluster of one broker with the gRPC port, and options (ACL, TLS).
- :func:`create_group`: a subscription group on every broker (a FIFO group: ``consume_message_orderly``).
- :func:`create_fifo_topic`: a topic with RocketMQ 5's ``message.type=FIFO`` attribute.
- :class:`GrpcClients`: producers, simple and push consumers in one driver JVM, shut down at the test's end.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.client.admin_subscription_groups import SubscriptionGroupConfig, update_subscription_group
from brokers.engine.common.topic_config import TopicConfig
from tests.brokers.engine.client._cluster import EmbeddedCluster, create_topic, wait_for_route
from tests.fixtures.waiting import wait_until
from tests.interop._java_clients import read_topic, unique

__all__ = [
    "GRPC",
    "GrpcClients",
    "create_fifo_topic",
    "create_group",
    "create_topic",
    "endpoints",
    "read_topic",
    "start_grpc_cluster",
    "unique",
    "wait_until",
]

GRPC = "grpc5"  # the driver module: rocketmq-client-java (interop/pom.xml)
BROKER = "broker-a"


def start_grpc_cluster(root: Path, **options: Any) -> EmbeddedCluster:
    """A name server and one broker with the 5.x gRPC endpoint on an ephemeral port; ``options`` are more
    EmbeddedCluster / BrokerConfig options (``acl_file``, ``tls``, ``namesrv_options``)."""
    return EmbeddedCluster(root, broker_names=(BROKER,), grpc_port=0, enable_property_filter=True, **options).start()


def endpoints(cluster: EmbeddedCluster) -> str:
    """The client's endpoints: the broker's gRPC address, "127.0.0.1:<port>"."""
    return cluster.brokers[BROKER].grpc_addr


def create_group(admin: BlockingMQAdminClient, cluster: EmbeddedCluster, group: str, **fields: Any) -> str:
    """Create ``group`` on every broker (``fields``: SubscriptionGroupConfig's, e.g. retry_max_times)."""
    for broker in cluster.brokers.values():
        admin.driver.run(update_subscription_group(broker.addr, SubscriptionGroupConfig(group, **fields)))
    return group


def create_fifo_topic(admin: BlockingMQAdminClient, cluster: EmbeddedCluster, topic: str, queues: int = 2) -> None:
    """Create ``topic`` as RocketMQ 5 makes a FIFO topic (``mqadmin updateTopic -a +message.type=FIFO``)."""
    admin.create_or_update_topic_in_cluster(cluster.cluster, TopicConfig(topic, queues, queues), "+message.type=FIFO")
    wait_for_route(admin, topic, len(cluster.broker_names))


class GrpcClients:
    """gRPC clients started in one driver JVM for one test, shut down at its end.

    Every start gets ``defaults`` (the endpoints, and the test's ``tls`` or keys) under its own arguments;
    ``producer``, ``simple`` and ``push`` return the client's name, which the other calls take."""

    def __init__(self, driver, **defaults: Any) -> None:
        self.driver = driver
        self.defaults = defaults
        self.started: list[str] = []

    def _start(self, op: str, prefix: str, **args: Any) -> str:
        name = args.pop("name", None) or unique(prefix)
        self.driver.call(op, name=name, timeout_s=90, **{**self.defaults, **args})
        self.started.append(name)
        return name

    def producer(self, *topics: str, **args: Any) -> str:
        return self._start("producer_start", "grpc_producer", topics=list(topics), **args)

    def simple(self, group: str, topic: str, **args: Any) -> str:
        return self._start("simple_start", "grpc_simple", group=group, topic=topic, **args)

    def push(self, group: str, topic: str, **args: Any) -> str:
        return self._start("push_start", "grpc_push", group=group, topic=topic, **args)

    def send(self, producer: str, *messages: dict[str, Any]) -> list[dict[str, Any]]:
        """Send each message ({topic, body, tag?, keys?, messageGroup?, properties?}) in order; their receipts."""
        return self.driver.call("send", name=producer, messages=list(messages), timeout_s=60)

    def receive(self, consumer: str, max_messages: int = 16, invisible_ms: int = 30_000) -> list[dict[str, Any]]:
        """One ReceiveMessage of simple consumer ``consumer`` (a long poll of its awaitMs)."""
        return self.driver.call(
            "simple_receive", name=consumer, max=max_messages, invisibleMs=invisible_ms, timeout_s=60
        )

    def receive_until(self, consumer: str, count: int, timeout_s: float = 30.0, **args: Any) -> list[dict[str, Any]]:
        """Receive (without acking) until ``count`` messages came in all; every message received, in order."""
        got: list[dict[str, Any]] = []

        def enough():
            got.extend(self.receive(consumer, **args))
            return got if len(got) >= count else None

        return wait_until(enough, timeout_s, f"{count} messages for {consumer}")

    def ack(self, consumer: str, message: dict[str, Any]) -> None:
        self.driver.call("simple_ack", name=consumer, receiptHandle=message["receiptHandle"])

    def change_invisible(self, consumer: str, message: dict[str, Any], invisible_ms: int) -> str:
        """ChangeInvisibleDuration of a received message; the new receipt handle (``message`` is updated to it)."""
        message["receiptHandle"] = self.driver.call(
            "simple_change_invisible", name=consumer, receiptHandle=message["receiptHandle"], invisibleMs=invisible_ms
        )
        return message["receiptHandle"]

    def received(self, consumer: str, count: int = 0, timeout_s: float = 0.0) -> list[dict[str, Any]]:
        """Every delivery push consumer ``consumer`` got so far, after waiting (in the JVM) until it has ``count``."""
        return self.driver.call(
            "received", name=consumer, count=count, timeoutMs=int(timeout_s * 1000), timeout_s=timeout_s + 30
        )

    def shutdown(self, name: str) -> None:
        self.driver.call("shutdown", name=name, timeout_s=60)
        self.started.remove(name)

    def close(self) -> None:
        """Shut every client down in the background: a push consumer's close waits out its long poll."""
        for name in reversed(self.started):
            try:
                self.driver.call("shutdown", name=name, background=True, timeout_s=60)
            except Exception:  # the JVM may be gone with the test's failure; the module fixture ends it
                pass
        self.started.clear()
