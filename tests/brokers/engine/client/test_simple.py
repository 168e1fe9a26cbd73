"""SimpleProducer / PullClient (blocking and async) against a real name server and two brokers."""

from __future__ import annotations

import asyncio
import concurrent.futures
import datetime
import re
import threading
import time

import pytest

from brokers.engine.client.admin import BlockingMQAdminClient, MQBrokerError, MQClientError
from brokers.engine.client.simple import (
    AsyncPullClient,
    AsyncSimpleProducer,
    PullClient,
    PullStatus,
    SendStatus,
    SimpleProducer,
    UniqIdGenerator,
    build_subscription,
)
from brokers.engine.common.clock import ManualClock
from brokers.engine.common.message import Message, tag_hash
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.remoting.codes import ResponseCode
from tests.brokers.engine.client._cluster import EmbeddedCluster, create_topic, run_async, wait_for_route


@pytest.fixture
def simple_producer(module_cluster):
    with SimpleProducer(module_cluster.namesrv_addr, "simple_test_producer", heartbeat_interval_s=None) as p:
        yield p


@pytest.fixture
def puller(module_cluster):
    with PullClient(module_cluster.namesrv_addr, "simple_test_consumer", heartbeat_interval_s=None) as p:
        yield p


def _pull_all(puller: PullClient, topic: str, expression: str = "*") -> list:
    out = []
    for mq in puller.fetch_subscribe_message_queues(topic):
        offset = 0
        while True:
            result = puller.pull(mq, offset, 32, expression)
            out.extend(result.messages)
            if (
                result.status in (PullStatus.NO_NEW_MSG, PullStatus.OFFSET_ILLEGAL)
                or result.next_begin_offset == offset
            ):
                break
            offset = result.next_begin_offset
    return out


def test_send_and_pull_keep_keys_tags_and_properties(module_cluster, module_admin, simple_producer, puller, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=2)
    msg = Message(
        topic_name, "héllo".encode(), tags="TagA", keys=["k1", "k2"], properties={"color": "blue", "n": "1"}, flag=7
    )
    result = simple_producer.send(msg)
    assert result.status is SendStatus.SEND_OK
    assert re.fullmatch(r"[0-9A-F]{32}", result.msg_id) and re.fullmatch(r"[0-9A-F]{32}", result.offset_msg_id)
    assert result.message_queue.topic == topic_name and result.queue_offset == 0

    pulled = puller.pull(result.message_queue, 0)
    assert pulled.status is PullStatus.FOUND and pulled.next_begin_offset == 1
    assert pulled.min_offset == 0 and pulled.max_offset == 1
    [m] = pulled.messages
    assert m.body == "héllo".encode() and m.flag == 7 and m.topic == topic_name
    assert m.tags == "TagA" and m.keys == "k1 k2"
    assert m.properties["color"] == "blue" and m.properties["n"] == "1"
    assert m.uniq_key == result.msg_id and m.msg_id == result.offset_msg_id
    assert m.queue_offset == 0 and m.store_host == module_cluster.broker_addr(result.message_queue.broker_name)


def test_round_robin_over_writable_queues(module_cluster, module_admin, simple_producer, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=2)
    results = [simple_producer.send(Message(topic_name, b"x")) for _ in range(8)]
    assert {r.message_queue for r in results} == {
        MessageQueue(topic_name, b, q) for b in ("broker-a", "broker-b") for q in range(2)
    }


def test_send_to_explicit_queue(module_cluster, module_admin, simple_producer, puller, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=4)
    mq = MessageQueue(topic_name, "broker-b", 3)
    results = [simple_producer.send(Message(topic_name, f"{i}".encode()), mq) for i in range(3)]
    assert [(r.message_queue, r.queue_offset) for r in results] == [(mq, 0), (mq, 1), (mq, 2)]
    assert puller.max_offset(mq) == 3 and puller.min_offset(mq) == 0


def test_tag_filter_on_pull(module_cluster, module_admin, simple_producer, puller, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=1)
    for tag in ("TagA", "TagB", "TagA", None, "TagC"):
        simple_producer.send(Message(topic_name, (tag or "none").encode(), tags=tag))
    assert sorted(m.body for m in _pull_all(puller, topic_name, "TagA")) == [b"TagA", b"TagA"]
    assert sorted(m.body for m in _pull_all(puller, topic_name, "TagA || TagC")) == [b"TagA", b"TagA", b"TagC"]
    assert len(_pull_all(puller, topic_name, "*")) == 5


def test_batch_send(module_cluster, module_admin, simple_producer, puller, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=2)
    msgs = [
        Message(topic_name, f"b{i}".encode(), tags="TagB", keys=f"key{i}", properties={"i": str(i)}) for i in range(5)
    ]
    result = simple_producer.send_batch(msgs)
    assert result.status is SendStatus.SEND_OK
    ids = result.msg_id.split(",")
    assert len(ids) == 5 and len(set(ids)) == 5 and len(result.offset_msg_id.split(",")) == 5
    pulled = puller.pull(result.message_queue, result.queue_offset, 32)
    assert [m.body for m in pulled.messages] == [f"b{i}".encode() for i in range(5)]
    assert [m.queue_offset for m in pulled.messages] == list(range(result.queue_offset, result.queue_offset + 5))
    assert [m.uniq_key for m in pulled.messages] == ids
    assert [m.keys for m in pulled.messages] == [f"key{i}" for i in range(5)]
    assert [m.properties["i"] for m in pulled.messages] == [str(i) for i in range(5)]
    assert all(m.tags == "TagB" for m in pulled.messages)
    with pytest.raises(MQClientError):
        simple_producer.send_batch([Message(topic_name, b"a"), Message(topic_name + "x", b"b")])


def test_large_body_is_compressed_and_inflated(module_cluster, module_admin, simple_producer, puller, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=1)
    body = b"0123456789abcdef" * 1000
    result = simple_producer.send(Message(topic_name, body))
    [m] = puller.pull(result.message_queue, result.queue_offset, 1).messages
    assert m.sys_flag & 0x1 and m.body == body


def test_pull_statuses_and_offsets(module_cluster, module_admin, simple_producer, puller, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=1)
    result = simple_producer.send(Message(topic_name, b"one"))
    mq = result.message_queue
    caught_up = puller.pull(mq, 1)
    assert caught_up.status is PullStatus.NO_NEW_MSG and caught_up.next_begin_offset == 1 and caught_up.messages == ()
    moved = puller.pull(mq, 50)
    assert moved.status is PullStatus.OFFSET_ILLEGAL and moved.next_begin_offset == 1
    assert puller.query_offset(mq) in (-1, 0)
    puller.update_offset(mq, 1)
    assert puller.query_offset(mq) == 1
    assert puller.query_offset(mq, group="another_group") in (-1, 0)
    assert puller.search_offset(mq, int(time.time() * 1000) + 60_000) in (0, 1)
    assert puller.earliest_msg_store_time(mq) > 0


def test_long_polling_pull_wakes_on_arrival(module_cluster, module_admin, simple_producer, puller, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=1)
    first = simple_producer.send(Message(topic_name, b"first"))
    mq = first.message_queue
    timer = threading.Timer(0.5, lambda: simple_producer.send(Message(topic_name, b"second"), mq))
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pending = pool.submit(puller.pull, mq, 1, suspend_ms=60_000)
        timer.start()
        try:
            result = pending.result(
                timeout=15
            )  # held for 60 s unless the arrival wakes it (latency: bench/latency_bench.py)
        finally:
            timer.join()
    assert result.status is PullStatus.FOUND and [m.body for m in result.messages] == [b"second"]


def test_send_to_unknown_topic_fails_clearly(simple_producer):
    with pytest.raises(MQBrokerError) as err:
        simple_producer.send(Message("NoSuchTopic_simple", b"x"))
    assert err.value.code == ResponseCode.TOPIC_NOT_EXIST


def test_send_to_new_topic_auto_creates_it_from_tbw102(tmp_path):
    auto = EmbeddedCluster(tmp_path, ("broker-auto",), auto_create_topic_enable=True).start()
    try:
        with SimpleProducer(auto.namesrv_addr, "auto_create_producer", heartbeat_interval_s=None) as p:
            result = p.send(Message("AutoCreatedTopic", b"x"))
            assert result.status is SendStatus.SEND_OK and result.message_queue.broker_name == "broker-auto"
            assert result.message_queue.queue_id < 4  # min(4, TBW102 queues), as RocketMQ's producer
            with BlockingMQAdminClient(auto.namesrv_addr) as admin:
                route = wait_for_route(admin, "AutoCreatedTopic", 1)
            assert route.queue_datas[0].write_queue_nums == 4
    finally:
        auto.stop()


def test_message_checks_before_sending(simple_producer):
    with pytest.raises(ValueError):
        simple_producer.send(Message("bad topic", b"x"))
    with pytest.raises(MQClientError, match="empty"):
        simple_producer.send(Message("SomeTopic", b""))
    with pytest.raises(MQClientError, match="not allowed"):
        simple_producer.send(Message("SCHEDULE_TOPIC_XXXX", b"x"))


def test_async_producer_pipelines_many_sends(module_cluster, module_admin, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=2)

    async def scenario():
        async with AsyncSimpleProducer(
            module_cluster.namesrv_addr, "async_test_producer", heartbeat_interval_s=None
        ) as p:
            results = await asyncio.gather(*(p.send(Message(topic_name, f"{i}".encode())) for i in range(300)))
        async with AsyncPullClient(module_cluster.namesrv_addr, "async_test_consumer", heartbeat_interval_s=None) as c:
            total = 0
            for mq in await c.fetch_subscribe_message_queues(topic_name):
                total += await c.max_offset(mq)
        return results, total

    results, total = run_async(scenario())
    assert all(r.status is SendStatus.SEND_OK for r in results)
    assert len({(r.message_queue, r.queue_offset) for r in results}) == 300
    assert len({r.msg_id for r in results}) == 300
    assert total == 300


def test_heartbeat_keeps_registration(module_cluster, module_admin, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=1)
    with PullClient(module_cluster.namesrv_addr, f"G_{topic_name}", heartbeat_interval_s=0.2) as puller:
        puller.subscribe(topic_name)
        time.sleep(0.5)
        assert puller.heartbeat() == 2
        assert module_admin.examine_consumer_connection_info(f"G_{topic_name}").connections


def test_uniq_id_format_and_uniqueness():
    clock = ManualClock(1_700_000_000_000)
    gen = UniqIdGenerator("10.1.2.3", clock)
    ids = [gen.next_id() for _ in range(1000)]
    assert len(set(ids)) == 1000
    assert all(re.fullmatch(r"0A010203[0-9A-F]{24}", i) for i in ids)


def test_uniq_id_fields_follow_the_clock_and_the_month():
    """Time field = ms since the local month began (re-based when the month turns, or the clock steps
    back past its start); counter field = one more per id, wrapping at 16 bits."""

    def month_start_ms(now_ms: int) -> int:
        now = datetime.datetime.fromtimestamp(now_ms / 1000).astimezone()
        return int(now.replace(day=1, hour=0, minute=0, second=0, microsecond=0).timestamp() * 1000)

    clock = ManualClock(1_700_000_000_000)
    gen = UniqIdGenerator("10.1.2.3", clock)
    fields = lambda uid: (int(uid[20:28], 16), int(uid[28:], 16))  # noqa: E731
    first_time, first_counter = fields(gen.next_id())
    assert first_time == 1_700_000_000_000 - month_start_ms(1_700_000_000_000)
    assert fields(gen.next_id()) == (first_time, (first_counter + 1) & 0xFFFF)
    clock.advance(0.25)
    assert fields(gen.next_id()) == (first_time + 250, (first_counter + 2) & 0xFFFF)
    for later in (1_700_000_000_000 + 40 * 86_400_000, 1_700_000_000_000 - 40 * 86_400_000):
        clock._ms = later
        assert fields(gen.next_id())[0] == later - month_start_ms(later)
    counters = [fields(gen.next_id())[1] for _ in range(70_000)]
    assert all(b == (a + 1) & 0xFFFF for a, b in zip(counters, counters[1:]))


def test_build_subscription():
    assert build_subscription("T", "*", 1).tags_set == ()
    sub = build_subscription("T", " TagA || TagB ||", 5)
    assert (
        sub.tags_set == ("TagA", "TagB")
        and sub.code_set == (tag_hash("TagA"), tag_hash("TagB"))
        and sub.sub_version == 5
    )
