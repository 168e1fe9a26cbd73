"""Apache's Java DefaultMQProducer (4.9.8 and 5.5.0), unmodified, sending to Gantry: sync, async, oneway,
batch, ordered by key and delayed sends, read back with Gantry's own PullClient and admin client."""

from __future__ import annotations

import pytest

from tests.interop._java_clients import CLIENTS, create_topic, message, read_topic, unique


@pytest.fixture
def producer(module_cluster, module_java_drivers, request):
    """Start a Java producer on the module's cluster: ``producer(client)`` -> (driver, name); shut down after."""
    started = []

    def start(client: str):
        driver, name = module_java_drivers[client], unique("producer")
        driver.call("producer_start", name=name, group=unique("pg"), namesrv=module_cluster.namesrv_addr)
        started.append((driver, name))
        return driver, name

    yield start
    for driver, name in started:
        driver.call("shutdown", name=name)


@pytest.mark.parametrize("client", CLIENTS)
def test_sync_async_and_oneway_sends_keep_tags_keys_and_properties(
    client, module_cluster, module_admin, producer, topic_name
):
    create_topic(module_admin, module_cluster, topic_name, queues=2)
    driver, name = producer(client)
    results = {}
    for mode in ("sync", "async", "oneway"):
        batch = [
            message(
                topic_name,
                f"{mode}-{i}",
                tags=f"Tag{mode}",
                keys=f"key-{mode}-{i} second-{i}",
                props={"mode": mode, "i": str(i), "ünïcode": "välue"},
            )
            for i in range(3)
        ]
        results[mode] = driver.call("send", name=name, mode=mode, messages=batch)
    assert [r["status"] for mode in ("sync", "async") for r in results[mode]] == ["SEND_OK"] * 6
    assert results["oneway"] == []

    stored = read_topic(module_cluster.namesrv_addr, topic_name, expect=9)
    by_body = {m.body.decode(): (mq, m) for mq, m in stored}
    assert sorted(by_body) == sorted(f"{mode}-{i}" for mode in ("sync", "async", "oneway") for i in range(3))
    for body, (mq, m) in by_body.items():
        mode, i = body.split("-")
        assert m.tags == f"Tag{mode}" and m.keys == f"key-{mode}-{i} second-{i}"
        assert (m.properties["mode"], m.properties["i"], m.properties["ünïcode"]) == (mode, i, "välue")
    for r in results["sync"] + results["async"]:
        mq, m = next(
            (mq, m) for mq, m in stored if m.uniq_key == r["msgId"]
        )  # the client's id is the message's UNIQ_KEY
        assert (mq.broker_name, mq.queue_id, m.queue_offset) == (
            r["queue"]["brokerName"],
            r["queue"]["queueId"],
            r["queueOffset"],
        )
        assert m.msg_id == r["offsetMsgId"]  # the broker's id: store host and commit-log offset
    # the key index finds a message by either of its keys
    found = module_admin.query_message_by_key(topic_name, "second-1", 32)
    assert sorted(m.body for m in found) == [b"async-1", b"oneway-1", b"sync-1"]


@pytest.mark.parametrize("client", CLIENTS)
def test_a_batch_lands_in_one_queue_in_order_with_each_message_its_own(
    client, module_cluster, module_admin, producer, topic_name
):
    create_topic(module_admin, module_cluster, topic_name, queues=2)
    driver, name = producer(client)
    batch = [message(topic_name, f"b{i}", tags="Batch", keys=f"bk{i}", props={"n": str(i)}) for i in range(5)]
    [result] = driver.call("send", name=name, mode="batch", messages=batch)
    assert result["status"] == "SEND_OK"
    assert len(result["msgId"].split(",")) == 5  # a batch's ids, comma-joined, one per message
    stored = read_topic(module_cluster.namesrv_addr, topic_name, expect=5)
    assert [m.body for _, m in stored] == [f"b{i}".encode() for i in range(5)]
    assert {(mq.broker_name, mq.queue_id) for mq, _ in stored} == {
        (result["queue"]["brokerName"], result["queue"]["queueId"])
    }
    assert [m.queue_offset for _, m in stored] == list(range(result["queueOffset"], result["queueOffset"] + 5))
    assert [(m.keys, m.tags, m.properties["n"]) for _, m in stored] == [(f"bk{i}", "Batch", str(i)) for i in range(5)]
    assert [m.uniq_key for _, m in stored] == result["msgId"].split(",")


@pytest.mark.parametrize("client", CLIENTS)
def test_ordered_sends_put_every_message_of_a_key_on_one_queue_in_order(
    client, module_cluster, module_admin, producer, topic_name
):
    create_topic(module_admin, module_cluster, topic_name, queues=4)
    driver, name = producer(client)
    keys = [f"order-{k}" for k in range(6)]
    batch = [message(topic_name, f"{key}:{seq}", keys=key, orderKey=key) for seq in range(5) for key in keys]
    results = driver.call(
        "send", name=name, mode="sync", messages=batch
    )  # ordered sends are sync: async ones may overtake
    queue_of: dict[str, set] = {}
    for spec, r in zip(batch, results):
        queue_of.setdefault(spec["orderKey"], set()).add((r["queue"]["brokerName"], r["queue"]["queueId"]))
    assert all(len(queues) == 1 for queues in queue_of.values()), queue_of

    stored = read_topic(module_cluster.namesrv_addr, topic_name, expect=30)
    seen: dict[str, list[int]] = {}
    for mq, m in stored:  # queue order
        key, seq = m.body.decode().split(":")
        assert {(mq.broker_name, mq.queue_id)} == queue_of[key]
        seen.setdefault(key, []).append(int(seq))
    assert seen == {key: list(range(5)) for key in keys}
    assert len({q for queues in queue_of.values() for q in queues}) > 1  # the keys spread over queues


@pytest.mark.parametrize("client", CLIENTS)
def test_a_delayed_message_waits_in_the_schedule_topic_then_reaches_its_topic(
    client, module_cluster, module_admin, producer, topic_name
):
    create_topic(module_admin, module_cluster, topic_name, queues=2)
    driver, name = producer(client)
    [result] = driver.call(
        "send",
        name=name,
        mode="sync",
        messages=[message(topic_name, "later", tags="Delayed", keys="dk", props={"p": "v"}, delayLevel=1)],
    )
    assert result["status"] == "SEND_OK"
    parked = module_admin.view_message(result["offsetMsgId"])  # what the broker stored at the acknowledged position
    assert parked.topic == "SCHEDULE_TOPIC_XXXX" and parked.queue_id == 0  # level 1's queue
    assert (parked.properties["REAL_TOPIC"], parked.properties["DELAY"]) == (topic_name, "1")

    [(mq, m)] = read_topic(module_cluster.namesrv_addr, topic_name, expect=1)
    assert (m.body, m.tags, m.keys, m.properties["p"], m.uniq_key) == (b"later", "Delayed", "dk", "v", result["msgId"])
    assert "DELAY" not in m.properties
    assert m.store_timestamp - m.born_timestamp >= 1000  # level 1 is 1 s
