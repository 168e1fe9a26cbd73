"""RESET_CONSUMER_CLIENT_OFFSET (220): an operator's reset by time reaches a running PushConsumer.

The reset is started as the console starts it, with INVOKE_BROKER_TO_RESET_OFFSET (222) on every
broker of the topic; each broker pushes the new offsets to every online member of the group.
"""

from __future__ import annotations

import threading
import time

from brokers.engine.client import (
    ConsumeConcurrentlyStatus,
    Message,
    MessageQueue,
    Producer,
    PushConsumer,
    ReceivedMessage,
)
from brokers.engine.client.client_remoting_processor import ClientRemotingProcessor, parse_reset_offset_body
from brokers.engine.client.simple import PullClient
from brokers.engine.common import json_compat
from brokers.engine.remoting.blocking import BlockingRemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from tests.brokers.engine.client._cluster import create_topic
from tests.brokers.engine.client.test_push_consumer import FAST, wait_until

N = 20


class GatedCollector:
    """Records every body; once ``gate_after_reset`` is set, each call waits for ``release``."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.bodies: list[str] = []
        self.gate_after_reset = False
        self.release = threading.Event()

    def __call__(self, msgs: list[ReceivedMessage]) -> ConsumeConcurrentlyStatus:
        with self.lock:
            self.bodies.extend(m.body.decode() for m in msgs)
            gated = self.gate_after_reset
        if gated:
            self.release.wait(30)
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    def snapshot(self) -> list[str]:
        with self.lock:
            return list(self.bodies)


def committed(cluster, group: str, topic: str) -> dict[MessageQueue, tuple[int, int]]:
    """(committed offset on the broker, max offset) of every queue of ``topic``."""
    with PullClient(cluster.namesrv_addr, group, heartbeat_interval_s=None) as puller:
        return {
            mq: (puller.query_offset(mq), puller.max_offset(mq)) for mq in puller.fetch_subscribe_message_queues(topic)
        }


def invoke_reset(cluster, topic: str, group: str, timestamp_ms: int) -> dict[MessageQueue, int]:
    """INVOKE_BROKER_TO_RESET_OFFSET (222) on every broker, as the console's group_reset_offset sends it."""
    table: dict[MessageQueue, int] = {}
    with BlockingRemotingClient() as client:
        for name in cluster.broker_names:
            ext = {"topic": topic, "group": group, "timestamp": timestamp_ms, "isForce": True}
            reply = client.invoke(
                cluster.broker_addr(name), RemotingCommand.request(RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, ext), 5.0
            )
            assert reply.code == ResponseCode.SUCCESS, reply.remark
            table.update(parse_reset_offset_body(reply.body))
    return table


def test_reset_offset_by_time_makes_the_push_consumer_consume_again(module_cluster, module_admin, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=2)
    group = f"g_{topic_name}"
    before_first = int(time.time() * 1000) - 1000
    got = GatedCollector()
    c = PushConsumer(
        group, module_cluster.namesrv_addr, consume_from_where="CONSUME_FROM_FIRST_OFFSET", client_config=FAST
    )
    c.subscribe(topic_name)
    c.register_listener(got)
    c.start()
    try:
        sent = [f"m{i}" for i in range(N)]
        with Producer(f"p_{topic_name}", module_cluster.namesrv_addr) as producer:
            for body in sent:
                producer.send(Message(topic_name, body.encode()))
        wait_until(lambda: len(got.snapshot()) >= N, what=f"{N} messages")
        assert sorted(got.snapshot()) == sorted(sent)
        wait_until(
            lambda: all(o == m and m > 0 for o, m in committed(module_cluster, group, topic_name).values()),
            what="offsets committed",
        )
        queues = set(committed(module_cluster, group, topic_name))
        assert len(queues) == 4

        got.gate_after_reset = True  # hold the re-consumed messages: their offsets stay at the reset point
        table = invoke_reset(module_cluster, topic_name, group, before_first)
        assert table == {mq: 0 for mq in queues}

        wait_until(lambda: len(got.snapshot()) >= N + 4, what="re-consumption after the reset")
        # the committed offsets went back, and the consumer's old (higher) offsets never come back:
        # several persist intervals (0.5 s) and piggybacked pulls later they are still the reset ones
        wait_until(
            lambda: all(o == 0 for o, _ in committed(module_cluster, group, topic_name).values()),
            what="offsets reset on the brokers",
        )
        time.sleep(2.0)
        assert all(o == 0 for o, _ in committed(module_cluster, group, topic_name).values())
        assert all(c.committed_offset(mq) == 0 for mq in queues)
        assert c.assigned_queues() >= queues

        got.release.set()
        wait_until(lambda: len(got.snapshot()) >= 2 * N, what=f"all {N} messages again")
        again = got.snapshot()[N:]
        assert sorted(again) == sorted(sent)
        wait_until(
            lambda: all(o == m for o, m in committed(module_cluster, group, topic_name).values()),
            what="offsets committed again",
        )
        assert all(c.committed_offset(mq) == m for mq, (_, m) in committed(module_cluster, group, topic_name).items())
        time.sleep(1.0)
        assert len(got.snapshot()) == 2 * N  # each message exactly once more
    finally:
        got.release.set()
        c.shutdown()
    assert all(o == m for o, m in committed(module_cluster, group, topic_name).values())


def test_reset_request_is_answered_when_not_oneway_and_other_groups_are_untouched(
    module_cluster, module_admin, topic_name
):
    create_topic(module_admin, module_cluster, topic_name, queues=1)
    group = f"g_{topic_name}"
    got = GatedCollector()
    c = PushConsumer(
        group, module_cluster.namesrv_addr, consume_from_where="CONSUME_FROM_FIRST_OFFSET", client_config=FAST
    )
    c.subscribe(topic_name)
    c.register_listener(got)
    c.start()
    try:
        wait_until(lambda: any(mq.topic == topic_name for mq in c.assigned_queues()), what="queues assigned")
        mq = next(mq for mq in c.assigned_queues() if mq.topic == topic_name)
        instance = c._running_instance()
        processor = ClientRemotingProcessor(instance)  # what the instance answers the brokers with
        body = json_compat.dumps({"offsetTable": {mq: 0}}).encode()
        # a group this client does not run: nothing happens, the request is still answered
        request = RemotingCommand.request(
            RequestCode.RESET_CONSUMER_CLIENT_OFFSET,
            {"topic": topic_name, "group": "no_such_group", "timestamp": 0, "isForce": True},
            body,
        )
        reply = instance.call(processor.reset_offset(_Ctx(), request))
        assert reply is not None and reply.code == ResponseCode.SUCCESS
        assert mq in c.assigned_queues()
        # the C-style body (§4.11) is read too
        c_body = b'[{"brokerName":"b","queueId":3,"topic":"T","offset":9}]'
        assert parse_reset_offset_body(b'{"offsetTable":' + c_body + b"}") == {MessageQueue("T", "b", 3): 9}
        # oneway: no answer
        oneway = RemotingCommand.request(
            RequestCode.RESET_CONSUMER_CLIENT_OFFSET,
            {"topic": topic_name, "group": group, "timestamp": 0, "isForce": True},
            body,
            oneway=True,
        )
        assert instance.call(processor.reset_offset(_Ctx(), oneway)) is None
        wait_until(lambda: mq in c.assigned_queues(), what="queue taken again after the reset")
    finally:
        c.shutdown()


class _Ctx:
    remote_addr = "test"
