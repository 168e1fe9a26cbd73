"""What the Java-client interop tests share: topics made with Gantry's admin client, message specs for the
driver's ``send``, a reader of what a topic holds through Gantry's own PullClient, and client names unique
to a test (a module's driver JVM outlives each test)."""

from __future__ import annotations

from functools import partial

import itertools
import uuid
from typing import Any

from brokers.engine.client.simple import PullClient
from brokers.engine.client.admin_errors import TopicNotFound
from tests.fixtures import waiting
from tests.brokers.engine.client._cluster import create_topic

wait_until = partial(waiting.wait_until, every_s=0.1, ignoring=(Exception,))  # a server starting or gone: not yet

__all__ = ["CLIENTS", "JavaClients", "create_topic", "message", "read_topic", "unique", "wait_until"]

CLIENTS = ("client4", "client5")  # Apache's rocketmq-client 4.9.8 and 5.5.0 (interop/pom.xml)
_counter = itertools.count()


def unique(prefix: str) -> str:
    """A client, group or instance name no other test of the run uses."""
    return f"{prefix}_{next(_counter)}_{uuid.uuid4().hex[:6]}"


def message(topic: str, body: str, **fields: Any) -> dict[str, Any]:
    """One message for the driver: tags, keys, props ({name: value}), delayLevel, orderKey."""
    return {"topic": topic, "body": body, **fields}


def read_topic(namesrv_addr: str, topic: str, *, expect: int, timeout_s: float = 15.0, group: str = "interop_reader"):
    """Every message ``topic`` holds, read from offset 0 of each queue with Gantry's PullClient, once there are
    at least ``expect``; a list of MessageExt (``broker_name`` attribute added) in queue order. A topic that has
    no route yet (a dead-letter topic its broker is creating) is waited for within ``timeout_s`` too."""
    with PullClient(namesrv_addr, group, heartbeat_interval_s=None) as puller:

        def everything():
            try:
                queues = puller.fetch_subscribe_message_queues(topic)
            except TopicNotFound:
                return None
            found = []
            for mq in sorted(queues, key=lambda q: (q.broker_name, q.queue_id)):
                offset = 0
                while True:
                    result = puller.pull(mq, offset, 32)
                    if not result.messages:
                        break
                    found.extend((mq, m) for m in result.messages)
                    offset = result.next_begin_offset
            return found if len(found) >= expect else None

        return wait_until(everything, timeout_s, f"{expect} messages in {topic}")


class JavaClients:
    """Clients started in the module's driver JVMs for one test, shut down at its end (``java_clients`` fixture).

    ``producer``, ``push`` and ``lite`` start one and return its name; ``call`` runs an op on the driver
    that holds a name."""

    def __init__(self, drivers, namesrv_addr: str) -> None:
        self.drivers = drivers
        self.namesrv_addr = namesrv_addr
        self.started: list[tuple[Any, str]] = []
        self.driver_of: dict[str, Any] = {}
        self.client_id: dict[str, str] = {}

    def _start(self, op: str, client: str, prefix: str, **args: Any) -> str:
        driver = self.drivers[client]
        name = args.pop("name", None) or unique(prefix)
        args.setdefault("namesrv", self.namesrv_addr)
        self.client_id[name] = driver.call(op, name=name, **args)
        self.started.append((driver, name))
        self.driver_of[name] = driver
        return name

    def producer(self, client: str, group: str | None = None, **args: Any) -> str:
        return self._start("producer_start", client, "producer", group=group or unique("pg"), **args)

    def push(self, client: str, group: str, topic: str, **args: Any) -> str:
        return self._start("push_start", client, "push", group=group, topic=topic, **args)

    def lite(self, client: str, group: str, topic: str, **args: Any) -> str:
        return self._start("lite_start", client, "lite", group=group, topic=topic, **args)

    def call(self, op: str, name: str, **args: Any) -> Any:
        return self.driver_of[name].call(op, name=name, **args)

    def received(self, name: str, count: int = 0, timeout_s: float = 0.0) -> list[dict[str, Any]]:
        """What push consumer ``name`` got so far, after waiting (in the JVM) until it has ``count``."""
        return self.call("received", name, count=count, timeoutMs=int(timeout_s * 1000), timeout_s=timeout_s + 30)

    def queues(self, name: str) -> set[tuple[str, str, int]]:
        """(topic, broker, queue id) of what push consumer ``name``'s rebalance holds."""
        return {(q["topic"], q["brokerName"], q["queueId"]) for q in self.call("queues", name)}

    def shutdown(self, name: str) -> None:
        self.call("shutdown", name)

    def close(self) -> None:
        for driver, name in reversed(self.started):
            try:
                driver.call("shutdown", name=name, timeout_s=30)
            except Exception:  # the JVM may be gone with the test's failure; the module fixture ends it
                pass
