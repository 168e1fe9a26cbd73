"""PushConsumer / PullConsumer in this process against a real name server and two brokers."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from brokers.engine.client import (
    ClientConfig,
    ConsumeConcurrentlyStatus,
    ConsumeOrderlyStatus,
    ConsumerConfig,
    Message,
    MessageQueue,
    PullConsumer,
    PushConsumer,
    ReceivedMessage,
    select_message_queue_by_hash,
)
from brokers.engine.client.admin import MQBrokerError
from brokers.engine.client.simple import PullClient
from tests.brokers.engine.client._cluster import create_topic
from tests.fixtures.waiting import wait_until

FAST = ClientConfig(
    rebalance_interval_s=0.5,
    poll_name_server_interval_s=0.5,
    heartbeat_broker_interval_s=1.0,
    persist_consumer_offset_interval_s=0.5,
)


class Collector:
    """A listener that records what it got (thread-safe), optionally answering with ``status_of``."""

    def __init__(self, status_of: Callable[[ReceivedMessage], ConsumeConcurrentlyStatus] | None = None) -> None:
        self.lock = threading.Lock()
        self.msgs: list[ReceivedMessage] = []
        self.status_of = status_of

    def __call__(self, msgs: list[ReceivedMessage]) -> ConsumeConcurrentlyStatus:
        with self.lock:
            self.msgs.extend(msgs)
        if self.status_of is not None:
            statuses = {self.status_of(m) for m in msgs}
            if ConsumeConcurrentlyStatus.RECONSUME_LATER in statuses:
                return ConsumeConcurrentlyStatus.RECONSUME_LATER
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    def bodies(self) -> list[str]:
        with self.lock:
            return [m.body.decode() for m in self.msgs]


def consumer(cluster, group: str, topic: str, listener, expression: str = "*", **kwargs) -> PushConsumer:
    kwargs.setdefault("consume_from_where", "CONSUME_FROM_FIRST_OFFSET")
    c = PushConsumer(group, cluster.namesrv_addr, client_config=FAST, **kwargs)
    c.subscribe(topic, expression)
    c.register_listener(listener)
    return c.start()


def test_clustering_consumes_each_message_once_and_commits_offsets(module_cluster, module_admin, producer, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=2)
    group = f"g_{topic_name}"
    got = Collector()
    c = consumer(module_cluster, group, topic_name, got)
    try:
        assert {mq for mq in c.assigned_queues() if mq.topic == topic_name} == {
            MessageQueue(topic_name, b, q) for b in ("broker-a", "broker-b") for q in range(2)
        }
        sent = [f"m{i}" for i in range(40)]
        for body in sent:
            producer.send(Message(topic_name, body.encode(), tags="TagA", keys=f"k-{body}", properties={"p": body}))
        wait_until(lambda: len(got.bodies()) >= 40, what="40 messages")
        assert sorted(got.bodies()) == sorted(sent)
        m = got.msgs[0]
        assert (
            m.topic == topic_name
            and m.tags == "TagA"
            and m.keys == f"k-{m.body.decode()}"
            and m.properties["p"] == m.body.decode()
        )
        assert len(m.msg_id) == 32 and m.message_queue.topic == topic_name and m.queue_offset >= 0

        info = module_admin.get_consumer_running_info(group, c.client_id)
        assert info.properties["allocateMessageQueueStrategy"] == "AVG"
        assert info.properties["PROP_CONSUME_TYPE"] == "CONSUME_PASSIVELY"
        assert {s.topic for s in info.subscriptions} == {topic_name, f"%RETRY%{group}"}
        assert {mq for mq in info.mq_table if mq.topic == topic_name} == c.assigned_queues() - {
            mq for mq in c.assigned_queues() if mq.topic != topic_name
        }
    finally:
        c.shutdown()
    # shutdown committed every offset and unregistered the client
    with PullClient(module_cluster.namesrv_addr, group, heartbeat_interval_s=None) as puller:
        for mq in puller.fetch_subscribe_message_queues(topic_name):
            assert puller.query_offset(mq) == puller.max_offset(mq)
    with pytest.raises(MQBrokerError):
        module_admin.examine_consumer_connection_info(group)

    again = Collector()  # a restart resumes from the committed offsets: nothing twice
    c2 = consumer(module_cluster, group, topic_name, again)
    try:
        producer.send(Message(topic_name, b"after-restart"))
        wait_until(lambda: "after-restart" in again.bodies(), what="the message sent after the restart")
        assert again.bodies() == ["after-restart"]
    finally:
        c2.shutdown()


def test_broadcasting_delivers_every_message_to_every_consumer(
    module_cluster, module_admin, producer, topic_name, tmp_path
):
    create_topic(module_admin, module_cluster, topic_name, queues=2)
    group = f"b_{topic_name}"
    collectors = [Collector(), Collector()]
    config = ConsumerConfig(local_offset_store_dir=str(tmp_path))
    consumers = [
        consumer(
            module_cluster, group, topic_name, col, message_model="BROADCASTING", instance_name=f"bc{i}", config=config
        )
        for i, col in enumerate(collectors)
    ]
    try:
        sent = [f"m{i}" for i in range(30)]
        for body in sent:
            producer.send(Message(topic_name, body.encode()))
        for col in collectors:
            wait_until(lambda col=col: len(col.bodies()) >= 30, what="every message at every consumer")
            assert sorted(col.bodies()) == sorted(sent)
        assert all(len(c.assigned_queues()) == 4 for c in consumers)
    finally:
        for c in consumers:
            c.shutdown()
    for i, c in enumerate(consumers):  # offsets in local files, one per client, as RocketMQ's OffsetSerializeWrapper
        [path] = tmp_path.glob(f"*@bc{i}/{group}/offsets.json")
        text = path.read_text()
        assert text.startswith('{"offsetTable":{') and f'"topic":"{topic_name}"' in text
        assert not list(path.parent.glob("*.tmp"))


def test_tag_filtering(module_cluster, module_admin, producer, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=2)
    got = Collector()
    c = consumer(
        module_cluster, f"t_{topic_name}", topic_name, got, "TagA || TagC", config=ConsumerConfig(pull_suspend_ms=500)
    )
    try:
        for i in range(30):
            producer.send(Message(topic_name, f"{'ABC'[i % 3]}{i}".encode(), tags=f"Tag{'ABC'[i % 3]}"))
        maxima = {}
        with PullClient(module_cluster.namesrv_addr, heartbeat_interval_s=None) as puller:
            for mq in puller.fetch_subscribe_message_queues(topic_name):
                maxima[mq] = puller.max_offset(mq)
        # done when the consumer's offsets passed every message, TagB ones included (filtered, not held)
        wait_until(
            lambda: all(c.committed_offset(mq) == off for mq, off in maxima.items()), what="offsets at the queue ends"
        )
        assert sorted(got.bodies()) == sorted(f"{'ABC'[i % 3]}{i}" for i in range(30) if i % 3 != 1)
        assert {m.tags for m in got.msgs} == {"TagA", "TagC"}
    finally:
        c.shutdown()


def test_reconsume_later_retries_then_dead_letters(module_cluster, module_admin, producer, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=1)
    group = f"r_{topic_name}"

    def status_of(m: ReceivedMessage) -> ConsumeConcurrentlyStatus:
        if m.body == b"boom":
            raise RuntimeError("listener failure counts as RECONSUME_LATER")
        return (
            ConsumeConcurrentlyStatus.RECONSUME_LATER
            if m.body == b"poison"
            else ConsumeConcurrentlyStatus.CONSUME_SUCCESS
        )

    got = Collector(status_of)
    config = ConsumerConfig(max_reconsume_times=2, delay_level_when_next_consume=1)  # level 1 = 1 s
    c = consumer(module_cluster, group, topic_name, got, config=config)
    try:
        for body in (b"ok", b"poison", b"boom"):
            producer.send(Message(topic_name, body, tags="T"))
        wait_until(
            lambda: got.bodies().count("poison") >= 3 and got.bodies().count("boom") >= 3,
            timeout_s=30,
            what="3 deliveries each",
        )
        poison = [m for m in got.msgs if m.body == b"poison"]
        assert [m.reconsume_times for m in poison] == [0, 1, 2]
        assert all(m.topic == topic_name for m in poison)  # the retry topic is hidden
        assert poison[1].message_queue.topic == f"%RETRY%{group}"
        dlq_topic = f"%DLQ%{group}"

        def dead() -> list[bytes]:
            try:
                return sorted(m.body for m in _drain(module_cluster, dlq_topic))
            except MQBrokerError:
                return []

        wait_until(lambda: dead() == [b"boom", b"poison"], timeout_s=15, what="both messages in the DLQ")
        assert got.bodies().count("ok") == 1
    finally:
        c.shutdown()


def _drain(cluster, topic: str) -> list:
    out = []
    with PullClient(cluster.namesrv_addr, heartbeat_interval_s=None) as puller:
        for mq in puller.fetch_subscribe_message_queues(topic):
            result = puller.pull(mq, 0, 32)
            out.extend(result.messages)
    return out


def test_orderly_consumers_keep_per_key_order_across_a_rebalance(module_cluster, module_admin, producer, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=4)
    group = f"o_{topic_name}"
    lock = threading.Lock()
    events: list[tuple[str, str, int]] = []  # (consumer, key, seq) in global consumption order

    def listener_for(name: str):
        def listener(msgs: list[ReceivedMessage]) -> ConsumeOrderlyStatus:
            for m in msgs:
                key, seq = m.body.decode().split(":")
                with lock:
                    events.append((name, key, int(seq)))
            time.sleep(0.002)  # slow enough that the second consumer joins mid-stream
            return ConsumeOrderlyStatus.SUCCESS

        return listener

    config = ConsumerConfig(lock_interval_s=0.5, suspend_current_queue_time_s=0.1)
    keys = [f"key{i}" for i in range(16)]
    per_key = 60
    first = consumer(
        module_cluster,
        group,
        topic_name,
        listener_for("first"),
        orderly=True,
        instance_name=f"{group}-1",
        config=config,
    )
    second = None
    try:

        def send_all() -> None:
            for seq in range(per_key):
                for key in keys:
                    producer.send(
                        Message(topic_name, f"{key}:{seq}".encode(), keys=key), select_message_queue_by_hash, key
                    )

        sender = threading.Thread(target=send_all)
        sender.start()
        wait_until(lambda: len(events) >= 100, what="the first consumer to consume")
        second = consumer(
            module_cluster,
            group,
            topic_name,
            listener_for("second"),
            orderly=True,
            instance_name=f"{group}-2",
            config=config,
        )
        sender.join(60)
        # A queue whose unlock was lost in the handover is taken once its broker lock expires (60 s, RocketMQ's
        # lockMaxLiveTime): under load the last messages can wait that long; order is what this test is about.
        wait_until(
            lambda: len({(k, s) for _, k, s in events}) >= len(keys) * per_key, timeout_s=90, what="every message"
        )
        wait_until(lambda: any(n == "second" for n, _, _ in events), what="the second consumer to take queues")
    finally:
        if second is not None:
            second.shutdown()
        first.shutdown()
    by_key: dict[str, list[int]] = {}
    for _, key, seq in events:
        by_key.setdefault(key, []).append(seq)
    assert by_key == {k: list(range(per_key)) for k in keys}  # in order, none twice, across the handover
    assert {n for n, _, _ in events} == {"first", "second"}
    handed_over = {k for k in keys if {n for n, key, _ in events if key == k} == {"first", "second"}}
    assert handed_over, "no key moved from the first consumer to the second mid-stream"


def test_pull_consumer_assign_poll_commit(module_cluster, module_admin, producer, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=2)
    group = f"p_{topic_name}"
    for i in range(10):
        producer.send(Message(topic_name, f"m{i}".encode()), mq=MessageQueue(topic_name, "broker-a", 0))
    mq = MessageQueue(topic_name, "broker-a", 0)
    c = PullConsumer(group, module_cluster.namesrv_addr, consume_from_where="FIRST_OFFSET", client_config=FAST)
    c.assign([mq])
    with c.start():
        assert c.assignment() == {mq}
        got: list[ReceivedMessage] = []
        while len(got) < 10:
            batch = c.poll(timeout_s=5.0)
            assert batch, "poll timed out"
            got.extend(batch)
        assert [m.body for m in got] == [f"m{i}".encode() for i in range(10)]
        assert c.poll(timeout_s=0.3) == []
        c.commit()
        assert c.committed(mq) == 10
    s = PullConsumer(group + "_sub", module_cluster.namesrv_addr, consume_from_where="FIRST_OFFSET", client_config=FAST)
    s.subscribe(topic_name)
    with s.start():
        assert {q for q in s.assignment()} == {
            MessageQueue(topic_name, b, q) for b in ("broker-a", "broker-b") for q in range(2)
        }
        got = []
        deadline = time.monotonic() + 10
        while len(got) < 10 and time.monotonic() < deadline:
            got.extend(s.poll(timeout_s=1.0))
        assert sorted(m.body for m in got) == sorted(f"m{i}".encode() for i in range(10))


def test_an_unexpected_error_in_a_pull_does_not_stop_the_queue(
    module_cluster, module_admin, producer, topic_name, monkeypatch
):
    """A pull that fails with something other than a remoting error (seen: uvloop's AttributeError on
    a connection the broker reset as it opened) is retried, as RocketMQ retries on any Throwable; it
    used to end the queue's pull loop for good and its messages were never delivered."""
    from brokers.engine.client.puller import PullPlans

    create_topic(module_admin, module_cluster, topic_name, queues=1)
    real_pull, failures = PullPlans.pull, []

    def flaky_pull(self, *args, **kwargs):
        if len(failures) < 4:
            failures.append(args[0])
            raise AttributeError("'NoneType' object has no attribute 'getpeername'")
        return real_pull(self, *args, **kwargs)

    monkeypatch.setattr(PullPlans, "pull", flaky_pull)
    for i in range(10):
        producer.send(Message(topic_name, f"m{i}".encode()))
    got = Collector()
    c = consumer(module_cluster, f"g_{topic_name}", topic_name, got)
    try:
        wait_until(lambda: len(got.bodies()) >= 10, what="10 messages after the failed pulls")
        assert sorted(got.bodies()) == sorted(f"m{i}" for i in range(10)) and len(failures) == 4
    finally:
        c.shutdown()
