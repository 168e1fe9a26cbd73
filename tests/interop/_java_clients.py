"""What the Java-client interop tests share: topics made with Gantry's admin client, message specs for the
driver's ``send``, a reader of what a topic holds through Gantry's own PullClient, and client names unique
to a test (a module's driver JVM outlives each test)."""
from __future__ import annotations

import itertools
import uuid
from typing import Any

from brokers.engine.client.simple import PullClient
from tests.brokers.engine._group_procs import wait_until
from tests.brokers.engine.client._cluster import create_topic

__all__ = ["CLIENTS", "create_topic", "message", "read_topic", "unique", "wait_until"]

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
    at least ``expect``; a list of MessageExt (``broker_name`` attribute added) in queue order."""
    with PullClient(namesrv_addr, group, heartbeat_interval_s=None) as puller:
        queues = puller.fetch_subscribe_message_queues(topic)

        def everything():
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
