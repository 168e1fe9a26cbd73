"""AsyncProducer and AsyncPushConsumer, awaited on the test's own loop, against real name servers and brokers."""

from __future__ import annotations

import asyncio
from functools import partial
import threading

import pytest

from brokers.engine.client import (
    AsyncProducer,
    AsyncPushConsumer,
    ClientConfig,
    ConsumeConcurrentlyContext,
    ConsumeConcurrentlyStatus,
    ConsumerConfig,
    Message,
    ProducerConfig,
    ReceivedMessage,
    SendStatus,
    select_message_queue_by_hash,
)
from brokers.engine.client.admin import BlockingMQAdminClient, MQBrokerError
from brokers.engine.client.errors import MQClientError
from brokers.engine.client.simple import PullClient
from brokers.engine.remoting.codes import ResponseCode
from tests.brokers.engine.client._cluster import EmbeddedCluster, create_topic
from tests.fixtures import waiting

eventually = partial(waiting.eventually, timeout=20.0)  # a client's rebalance and redelivery take a few rounds
FAST = ClientConfig(
    rebalance_interval_s=0.5,
    poll_name_server_interval_s=0.5,
    heartbeat_broker_interval_s=1.0,
    persist_consumer_offset_interval_s=0.5,
)


class Collector:
    """A coroutine listener recording what it got (the loop's one thread: no lock needed)."""

    def __init__(self) -> None:
        self.msgs: list[ReceivedMessage] = []
        self.contexts: list[ConsumeConcurrentlyContext] = []

    async def __call__(
        self, msgs: list[ReceivedMessage], context: ConsumeConcurrentlyContext
    ) -> ConsumeConcurrentlyStatus:
        await asyncio.sleep(0)  # a real coroutine: other calls and the pulls run meanwhile
        self.msgs.extend(msgs)
        self.contexts.append(context)
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    def bodies(self) -> list[str]:
        return [m.body.decode() for m in self.msgs]


def async_consumer(cluster, group: str, topic: str, listener, **kwargs) -> AsyncPushConsumer:
    kwargs.setdefault("consume_from_where", "CONSUME_FROM_FIRST_OFFSET")
    c = AsyncPushConsumer(group, cluster.namesrv_addr, client_config=FAST, **kwargs)
    c.subscribe(topic, "*")
    c.register_listener(listener)
    return c


def test_round_trip_on_the_callers_loop(module_cluster, module_admin, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=2)
    threads_before = threading.active_count()

    async def main() -> None:
        got = Collector()
        async with AsyncProducer("async_rt_producer", module_cluster.namesrv_addr, client_config=FAST) as producer:
            assert producer._instance is not None and producer._instance.loop is asyncio.get_running_loop()
            assert threading.active_count() == threads_before  # no client thread: sends are awaited here
            result = await producer.send(Message(topic_name, b"hello", tags="TagA", keys="k1", properties={"p": "v"}))
            assert (
                result.status is SendStatus.SEND_OK
                and len(result.msg_id) == 32
                and result.message_queue.topic == topic_name
            )
            async with async_consumer(module_cluster, f"g_{topic_name}", topic_name, got) as consumer:
                await eventually(lambda: got.bodies() == ["hello"], what="the message")
                # the broker's GET_CONSUMER_RUNNING_INFO is answered from this loop (the admin blocks in a thread)
                info = await asyncio.to_thread(
                    module_admin.get_consumer_running_info, f"g_{topic_name}", consumer.client_id
                )
                assert info.properties["PROP_CONSUME_TYPE"] == "CONSUME_PASSIVELY"
                assert {s.topic for s in info.subscriptions} == {topic_name, f"%RETRY%g_{topic_name}"}
        m = got.msgs[0]
        assert (m.topic, m.tags, m.keys, m.properties["p"], m.msg_id) == (topic_name, "TagA", "k1", "v", result.msg_id)
        assert m.message_queue == result.message_queue and m.queue_offset == result.queue_offset
        assert got.contexts[0].message_queue == result.message_queue

    asyncio.run(main())


def test_64_sends_in_flight_batches_and_ordered_sends(module_cluster, module_admin, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=2)

    async def main() -> None:
        async with AsyncProducer("async_flight_producer", module_cluster.namesrv_addr, client_config=FAST) as producer:
            results = await asyncio.gather(*(producer.send(Message(topic_name, f"m{i}".encode())) for i in range(64)))
            assert all(r.status is SendStatus.SEND_OK for r in results)
            assert len({r.msg_id for r in results}) == 64
            assert len({(r.message_queue, r.queue_offset) for r in results}) == 64
            assert {r.message_queue.broker_name for r in results} == {"broker-a", "broker-b"}  # round robin over both

            batch = await producer.send_batch([Message(topic_name, f"b{i}".encode()) for i in range(8)])
            assert batch.status is SendStatus.SEND_OK and len(batch.msg_id.split(",")) == 8

            queues = await producer.fetch_publish_message_queues(topic_name)
            ordered = [
                await producer.send(Message(topic_name, f"o{i}".encode()), select_message_queue_by_hash, "order-7")
                for i in range(5)
            ]
            assert {r.message_queue for r in ordered} == {select_message_queue_by_hash(queues, ordered[0], "order-7")}
            assert [r.queue_offset for r in ordered] == sorted(r.queue_offset for r in ordered)
        with PullClient(module_cluster.namesrv_addr, "async_flight_check", heartbeat_interval_s=None) as puller:
            pulled = puller.pull(batch.message_queue, batch.queue_offset, 8)
            assert [m.body for m in pulled.messages] == [f"b{i}".encode() for i in range(8)]

    asyncio.run(main())


def test_errors_not_started_other_loop_and_unknown_topic(module_cluster):
    producer = AsyncProducer("async_err_producer", module_cluster.namesrv_addr, client_config=FAST)

    async def not_started() -> None:
        with pytest.raises(MQClientError):
            await producer.send(Message("NoSuchTopicAsync", b"x"))

    asyncio.run(not_started())

    async def main() -> None:
        async with producer:
            with pytest.raises(MQBrokerError) as info:  # no route, auto-create off: the name server's answer
                await producer.send(Message("NoSuchTopicAsync", b"x"))
            assert info.value.code == ResponseCode.TOPIC_NOT_EXIST
            elsewhere = await asyncio.to_thread(asyncio.run, other_loop())
            assert isinstance(elsewhere, MQClientError)

    async def other_loop() -> BaseException | None:
        try:
            await producer.send(Message("NoSuchTopicAsync", b"x"))
        except BaseException as exc:  # noqa: BLE001 (the test's answer)
            return exc
        return None

    asyncio.run(main())
    consumer = AsyncPushConsumer("async_err_group", module_cluster.namesrv_addr)
    with pytest.raises(TypeError):
        consumer.register_listener(
            lambda msgs, context: ConsumeConcurrentlyStatus.CONSUME_SUCCESS
        )  # not a coroutine function


def test_sends_retry_on_the_other_broker_when_one_stops(tmp_path):
    cluster = EmbeddedCluster(tmp_path).start()
    try:
        with BlockingMQAdminClient(cluster.namesrv_addr) as admin:
            create_topic(admin, cluster, "AsyncStopTopic", queues=2)

        async def main() -> None:
            config = ProducerConfig(send_latency_fault_enable=True, send_timeout_s=2.0)
            async with AsyncProducer(
                "async_stop_producer",
                cluster.namesrv_addr,
                client_config=ClientConfig(poll_name_server_interval_s=60),
                config=config,
            ) as producer:
                before = await asyncio.gather(*(producer.send(Message("AsyncStopTopic", b"before")) for _ in range(8)))
                assert {r.message_queue.broker_name for r in before} == {"broker-a", "broker-b"}
                await asyncio.to_thread(cluster.run, cluster.brokers["broker-b"].stop())
                after = [await producer.send(Message("AsyncStopTopic", f"after{i}".encode())) for i in range(10)]
                assert all(r.status is SendStatus.SEND_OK and r.message_queue.broker_name == "broker-a" for r in after)
                assert not producer._producer.fault_strategy.fault_tolerance.is_available("broker-b")

        asyncio.run(main())
    finally:
        cluster.stop()


def test_two_members_get_every_message_once_and_offsets_resume(module_cluster, module_admin, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=2)
    group = f"g_{topic_name}"
    sent = [f"m{i}" for i in range(60)]

    async def main() -> None:
        first, second = Collector(), Collector()
        members = [
            async_consumer(module_cluster, group, topic_name, col, instance_name=f"member{i}")
            for i, col in enumerate((first, second))
        ]
        async with AsyncProducer("async_group_producer", module_cluster.namesrv_addr, client_config=FAST) as producer:
            for m in members:
                await m.start()
            try:
                mine = lambda c: {mq for mq in c.assigned_queues() if mq.topic == topic_name}  # noqa: E731
                await eventually(lambda: all(len(mine(c)) == 2 for c in members), what="the 4 queues split 2 and 2")
                assert not mine(members[0]) & mine(members[1])
                await asyncio.gather(*(producer.send(Message(topic_name, body.encode())) for body in sent))
                await eventually(lambda: len(first.msgs) + len(second.msgs) >= len(sent), what="every message")
                await asyncio.sleep(0.3)  # nothing more arrives: each message went to one member once
                assert sorted(first.bodies() + second.bodies()) == sorted(sent)
                assert first.msgs and second.msgs
            finally:
                for m in members:
                    await m.stop()
            # the stops committed every offset
            with PullClient(module_cluster.namesrv_addr, group, heartbeat_interval_s=None) as puller:
                for mq in puller.fetch_subscribe_message_queues(topic_name):
                    assert puller.query_offset(mq) == puller.max_offset(mq)
            again = Collector()  # a restart resumes from the committed offsets: nothing twice
            async with async_consumer(
                module_cluster, group, topic_name, again, config=ConsumerConfig(consume_message_batch_max_size=4)
            ):
                await producer.send(Message(topic_name, b"after-restart"))
                await eventually(lambda: "after-restart" in again.bodies(), what="the message sent after the restart")
                await asyncio.sleep(0.3)
                assert again.bodies() == ["after-restart"]

    asyncio.run(main())


def test_a_listener_that_fails_gets_its_messages_again_from_the_retry_topic(module_cluster, module_admin, topic_name):
    create_topic(module_admin, module_cluster, topic_name, queues=1)
    calls: list[tuple[str, int]] = []

    async def flaky(msgs: list[ReceivedMessage], context: ConsumeConcurrentlyContext) -> ConsumeConcurrentlyStatus:
        calls.extend((m.body.decode(), m.reconsume_times) for m in msgs)
        if all(m.reconsume_times == 0 for m in msgs):
            context.delay_level_when_next_consume = 1  # 1 s, not the default 10 s
            raise RuntimeError("first delivery fails")
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    async def main() -> None:
        async with AsyncProducer("async_retry_producer", module_cluster.namesrv_addr, client_config=FAST) as producer:
            async with async_consumer(module_cluster, f"g_{topic_name}", topic_name, flaky):
                await producer.send(Message(topic_name, b"again"))
                await eventually(lambda: ("again", 1) in calls, timeout=30.0, what="the redelivery")
        assert calls[0] == ("again", 0)

    asyncio.run(main())


def test_acl_signed_async_clients_send_and_consume_and_unsigned_sends_are_refused(tmp_path):
    from brokers.engine.common.topic_config import TopicConfig
    from brokers.engine.remoting.errors import RemotingError
    from tests.brokers.engine.acl._acl_cluster import ADMIN, DEMO, acl_text, start_acl_cluster, write_acl
    from tests.brokers.engine.client._cluster import wait_for_route

    cluster = start_acl_cluster(tmp_path / "stores", write_acl(tmp_path / "plain_acl.yml", acl_text()))
    try:
        with BlockingMQAdminClient(cluster.namesrv_addr, access_key=ADMIN[0], secret_key=ADMIN[1]) as admin:
            admin.create_or_update_topic(cluster.broker_addr("broker-a"), TopicConfig("AsyncAclTopic", 2, 2))
            wait_for_route(admin, "AsyncAclTopic", 1)

        async def main() -> None:
            got = Collector()
            keys = {"access_key": DEMO[0], "secret_key": DEMO[1]}
            async with AsyncProducer("AsyncAclProducer", cluster.namesrv_addr, client_config=FAST, **keys) as producer:
                async with async_consumer(cluster, "AsyncAclGroup", "AsyncAclTopic", got, **keys):
                    sent = [f"m{i}" for i in range(10)]
                    await asyncio.gather(*(producer.send(Message("AsyncAclTopic", b.encode())) for b in sent))
                    await eventually(lambda: sorted(got.bodies()) == sorted(sent), what="every message consumed")
            async with AsyncProducer("AsyncAclProducer", cluster.namesrv_addr, client_config=FAST) as unsigned:
                with pytest.raises(RemotingError) as info:
                    await unsigned.send(Message("AsyncAclTopic", b"unsigned"))
            assert isinstance(info.value, MQClientError) and info.value.code == ResponseCode.NO_PERMISSION

        asyncio.run(main())
    finally:
        cluster.stop()
