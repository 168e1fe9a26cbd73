"""Apache's Java push consumers (4.9.8 and 5.5.0) on Gantry: RECONSUME_LATER retries through %RETRY%<group>
and dead-letters to %DLQ%<group> after maxReconsumeTimes; MessageListenerOrderly holds the brokers' queue
locks (LOCK_BATCH_MQ) and sees each key's messages in order.

Retries wait the delay level the listener sets (``context.setDelayLevelWhenNextConsume(1)``: 1 s, as
Gantry's own retry tests do); left at 0 the broker picks level 3 + reconsume times (10 s, then 30 s)."""

from __future__ import annotations

import pytest

from brokers.engine.client import Message, Producer
from brokers.engine.common.message_queue import MessageQueue
from tests.interop._java_clients import CLIENTS, JavaClients, create_topic, message, read_topic, unique, wait_until


@pytest.fixture
def java(module_java_drivers, module_cluster):
    clients = JavaClients(module_java_drivers, module_cluster.namesrv_addr)
    yield clients
    clients.close()


@pytest.mark.parametrize("client", CLIENTS)
def test_reconsume_later_retries_then_dead_letters_after_max_reconsume_times(
    client, java, module_cluster, module_admin, topic_name
):
    create_topic(module_admin, module_cluster, topic_name, queues=1)
    group = unique("g_retry")
    name = java.push(client, group, topic_name, maxReconsumeTimes=2, failBodies=["poison"], retryDelayLevel=1)
    with Producer(unique("pg"), module_cluster.namesrv_addr, instance_name=unique("retry-p")) as producer:
        for body in (b"ok", b"poison"):
            producer.send(Message(topic_name, body, tags="T", keys=body.decode(), properties={"origin": "gantry"}))

    def three_poisons():
        got = java.received(name)
        return got if sum(m["body"] == "poison" for m in got) >= 3 else None

    got = wait_until(three_poisons, 30, "the poison message delivered three times")
    poison = [m for m in got if m["body"] == "poison"]
    assert [m["reconsumeTimes"] for m in poison] == [0, 1, 2]  # the first delivery and maxReconsumeTimes retries
    assert all(
        m["topic"] == topic_name and m["props"]["origin"] == "gantry" for m in poison
    )  # the retry topic is hidden
    assert poison[1]["props"]["RETRY_TOPIC"] == topic_name
    assert [m["body"] for m in got].count("ok") == 1

    # the third failure is sent back with reconsume times 2 (= maxReconsumeTimes): the broker moves it to the
    # DLQ, counting that send-back as RocketMQ does (reconsume times + 1)
    [(mq, dead)] = read_topic(module_cluster.namesrv_addr, f"%DLQ%{group}", expect=1, timeout_s=20)
    assert (dead.body, dead.keys, dead.tags, dead.properties["origin"]) == (b"poison", "poison", "T", "gantry")
    assert dead.reconsume_times == 3 and dead.properties["RETRY_TOPIC"] == topic_name
    assert dead.uniq_key == poison[0]["props"]["UNIQ_KEY"]  # the same message id all the way
    assert len([m for m in java.received(name) if m["body"] == "poison"]) == 3  # not delivered again


@pytest.mark.parametrize("client", CLIENTS)
def test_orderly_consumer_locks_its_queues_and_sees_each_key_in_order(
    client, java, module_cluster, module_admin, topic_name
):
    create_topic(module_admin, module_cluster, topic_name, queues=2)
    group = unique("g_orderly")
    name = java.push(client, group, topic_name, orderly=True)
    client_id = java.client_id[name]

    def held_and_locked():
        queues = [q for q in java.call("queues", name) if q["topic"] == topic_name]
        return len(queues) == 4 and all(q["locked"] for q in queues)

    wait_until(held_and_locked, 20, "the orderly consumer holds and has locked the four queues")
    for broker_name, broker in module_cluster.brokers.items():  # the brokers hold the locks for this client
        for q in range(2):
            assert broker.rebalance_lock_manager.is_locked(group, MessageQueue(topic_name, broker_name, q), client_id)

    producer = java.producer(client)
    keys = [f"key{k}" for k in range(6)]
    batch = [message(topic_name, f"{key}:{seq}", keys=key, orderKey=key) for seq in range(8) for key in keys]
    java.call("send", producer, mode="sync", messages=batch)
    got = java.received(name, count=len(batch), timeout_s=30)
    by_key: dict[str, list[int]] = {}
    queue_of: dict[str, set] = {}
    for m in got:
        key, seq = m["body"].split(":")
        by_key.setdefault(key, []).append(int(seq))
        queue_of.setdefault(key, set()).add((m["brokerName"], m["queueId"]))
    assert by_key == {key: list(range(8)) for key in keys}  # in order, each once
    assert all(len(queues) == 1 for queues in queue_of.values())
