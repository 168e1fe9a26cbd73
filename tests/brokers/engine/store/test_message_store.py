"""DefaultMessageStore puts: offsets, validation, batches, listeners, special records, admin calls."""

from __future__ import annotations

import asyncio
import errno
import os

from brokers.engine.common.message import Message
from brokers.engine.common.message_codec import (
    BORNHOST_V6_FLAG,
    TRANSACTION_PREPARED_TYPE,
    decode_record,
    decode_records,
    encode_batch_body,
)
from brokers.engine.store import MessageExtBatch, PutMessageStatus, StoreNotOpenError
from brokers.engine.store.dispatch import DELAY_LEVELS_MS
from tests.brokers.engine.store._support import bodies, inner

import pytest


def test_put_assigns_queue_offsets_per_queue_and_fills_record_fields(open_store, clock):
    store = open_store(store_host="192.168.1.10:10911")
    r0 = asyncio.run(store.put_message(inner(queue_id=0, body=b"a", tags="TagA")))
    r1 = asyncio.run(store.put_message(inner(queue_id=1, body=b"b")))
    r2 = asyncio.run(store.put_message(inner(queue_id=0, body=b"c")))
    assert [r0.queue_offset, r1.queue_offset, r2.queue_offset] == [0, 0, 1]
    assert r0.ok and r0.msg_num == 1 and r0.store_timestamp == clock.now_ms()
    msg = decode_record(store.look_message_by_offset(r2.wrote_offset))
    assert msg.queue_offset == 1 and msg.commit_log_offset == r2.wrote_offset
    assert msg.store_timestamp == clock.now_ms() and msg.store_host == "192.168.1.10:10911"
    assert msg.born_host == "10.0.0.5:51000" and msg.born_timestamp == 1_700_000_000_000
    assert r2.msg_id == msg.msg_id and r2.msg_id.startswith("C0A8010A00002A9F")
    assert store.get_max_offset_in_queue("TopicTest", 0) == 2
    assert store.get_max_offset_in_queue("TopicTest", 1) == 1
    assert store.get_max_offset_in_queue("Nope", 0) == 0


def test_rejected_puts_write_nothing(open_store):
    store = open_store(max_message_size=100)
    assert store.put_message_sync(inner(body=b"x" * 101)).status is PutMessageStatus.MESSAGE_ILLEGAL
    big = inner(properties={"K": "v" * 32767})
    assert store.put_message_sync(big).status is PutMessageStatus.PROPERTIES_SIZE_EXCEEDED
    assert store.put_message_sync(inner(topic="bad/topic")).status is PutMessageStatus.MESSAGE_ILLEGAL
    assert store.put_message_sync(inner(queue_id=-1)).status is PutMessageStatus.MESSAGE_ILLEGAL
    bad_host = inner()
    bad_host.born_host = "not-a-host"
    assert store.put_message_sync(bad_host).status is PutMessageStatus.MESSAGE_ILLEGAL
    assert store.put_message_sync(inner(flag=1 << 40)).status is PutMessageStatus.MESSAGE_ILLEGAL
    assert store.max_phy_offset == 0
    assert not os.path.exists(os.path.join(store.config.consume_queue_dir, "bad"))
    assert store.runtime_info()["putMessageFailedTimes"] == "6"
    assert store.put_message_sync(inner(body=b"x" * 100)).ok


def test_put_after_close_is_service_not_available(open_store):
    store = open_store()
    store.close()
    assert store.put_message_sync(inner()).status is PutMessageStatus.SERVICE_NOT_AVAILABLE
    with pytest.raises(StoreNotOpenError):
        store.get_message("g", "TopicTest", 0, 0, 1)


def test_batch_gets_consecutive_offsets_and_batch_properties(open_store):
    store = open_store()
    store.put_message_sync(inner(body=b"before"))
    entries = [
        Message("TopicTest", b"b%d" % i, tags="TagB", keys=f"key{i}", properties={"UNIQ_KEY": f"U{i}"})
        for i in range(5)
    ]
    batch = MessageExtBatch(
        "TopicTest", 0, encode_batch_body(entries), {"CLUSTER": "DefaultCluster"}, born_host="10.0.0.5:1"
    )
    r = asyncio.run(store.put_messages(batch))
    assert r.ok and r.msg_num == 5 and r.queue_offset == 1
    ids = r.msg_id.split(",")
    assert len(ids) == 5
    got = decode_records(b"".join(store.get_message("g", "TopicTest", 0, 1, 32).records))
    assert [m.queue_offset for m in got] == [1, 2, 3, 4, 5]
    assert [m.msg_id for m in got] == ids
    assert got[0].commit_log_offset == r.wrote_offset
    assert sum(m.store_size for m in got) == r.wrote_bytes
    assert got[2].properties == {"UNIQ_KEY": "U2", "TAGS": "TagB", "KEYS": "key2", "CLUSTER": "DefaultCluster"}
    assert len(store.query_message("TopicTest", "key3", 10, 0, 2**62)) == 1
    assert len(store.query_message("TopicTest", "U4", 10, 0, 2**62)) == 1
    bad = MessageExtBatch("TopicTest", 0, b"\x00\x00\x00\x05garbage")
    assert store.put_messages_sync(bad).status is PutMessageStatus.MESSAGE_ILLEGAL


def test_arrival_listeners_hear_each_dispatched_message(open_store):
    store = open_store()
    heard = []
    store.add_arrival_listener(lambda *args: heard.append(args))
    store.add_arrival_listener(lambda *args: 1 / 0)  # a failing listener does not fail the put
    store.put_message_sync(inner(queue_id=2, tags="TagA"))
    store.put_message_sync(inner(queue_id=2))
    assert heard == [("TopicTest", 2, 1, 2598919), ("TopicTest", 2, 2, 0)]


def test_prepared_transaction_records_get_no_queue_unit(open_store):
    store = open_store()
    r = store.put_message_sync(inner(sys_flag=TRANSACTION_PREPARED_TYPE))
    assert r.ok and r.queue_offset == 0
    assert store.get_max_offset_in_queue("TopicTest", 0) == 0
    assert store.look_message_by_offset(r.wrote_offset) is not None
    assert store.put_message_sync(inner()).queue_offset == 0


def test_schedule_topic_units_carry_the_delivery_time(open_store, clock):
    store = open_store()
    store.put_message_sync(inner(topic="SCHEDULE_TOPIC_XXXX", queue_id=2, properties={"DELAY": "3"}))
    unit = store.consume_queue("SCHEDULE_TOPIC_XXXX", 2, create=False).get_unit(0)
    assert unit[2] == clock.now_ms() + DELAY_LEVELS_MS[2] == clock.now_ms() + 10_000


def test_ipv6_born_host_is_stored_with_its_flag(open_store):
    store = open_store()
    msg = inner()
    msg.born_host = "[2001:db8::5]:4000"
    r = store.put_message_sync(msg)
    got = decode_record(store.look_message_by_offset(r.wrote_offset))
    assert got.sys_flag & BORNHOST_V6_FLAG and got.born_host == "[2001:db8::5]:4000"


def test_delete_topics_removes_queues_and_restarts_offsets(open_store):
    store = open_store()
    for _ in range(3):
        store.put_message_sync(inner(topic="Gone", queue_id=1))
    store.put_message_sync(inner(topic="Kept"))
    store.delete_topics({"Gone", "../Kept", ""})
    assert not os.path.exists(os.path.join(store.config.consume_queue_dir, "Gone"))
    assert os.path.exists(os.path.join(store.config.consume_queue_dir, "Kept"))
    assert store.get_message("g", "Gone", 1, 0, 32).status.name == "NO_MATCHED_LOGIC_QUEUE"
    assert store.put_message_sync(inner(topic="Gone", queue_id=1)).queue_offset == 0
    assert bodies(store, "Kept") == [b"hello"]


def test_runtime_info_values_are_strings(open_store):
    store = open_store()
    store.put_message_sync(inner(body=b"12345"))
    info = store.runtime_info()
    for key in (
        "bootTimestamp",
        "runtime",
        "putTps",
        "getFoundTps",
        "getMissTps",
        "getTotalTps",
        "getTransferedTps",
        "putMessageTimesTotal",
        "putMessageSizeTotal",
        "putMessageAverageSize",
        "commitLogMaxOffset",
        "commitLogMinOffset",
        "commitLogDiskRatio",
        "consumeQueueDiskRatio",
        "putMessageEntireTimeMax",
        "getMessageEntireTimeMax",
        "dispatchMaxBuffer",
    ):
        assert isinstance(info[key], str), key
    assert info["putMessageTimesTotal"] == "1"
    assert 0.0 <= float(info["commitLogDiskRatio"]) <= 1.0
    assert len(info["putTps"].split()) == 3


def test_store_config_rejects_nonsense(tmp_path):
    from brokers.engine.store import StoreConfig

    for bad in (
        dict(flush_disk_type="SOMETIMES"),
        dict(commitlog_file_size=10),
        dict(store_host="broker-a:10911"),
        dict(max_index_count=1),
        dict(consume_queue_units_per_file=0),
    ):
        with pytest.raises(ValueError):
            StoreConfig(store_dir=str(tmp_path), **bad)
    assert StoreConfig(store_dir=str(tmp_path)).commitlog_file_size == 1 << 30


def test_a_queue_that_cannot_be_created_refuses_the_put_before_anything_is_written(open_store):
    # A file where the queue's directory must go: the put path finds it before writing the
    # record, so nothing reaches the commit log and the next put goes at the same offset.
    store = open_store()
    blocker = os.path.join(store.config.consume_queue_dir, "Blocked")
    with open(blocker, "wb"):
        pass
    end = store.max_phy_offset
    assert (
        store.put_message_sync(inner(topic="Blocked", body=b"lost")).status is PutMessageStatus.CREATE_MAPED_FILE_FAILED
    )
    assert store.max_phy_offset == end
    assert store.runtime_info()["storeHealthy"] == "true"
    os.remove(blocker)
    result = store.put_message_sync(inner(topic="Blocked", body=b"kept"))
    assert result.ok and result.wrote_offset == end
    assert bodies(store, "Blocked") == [b"kept"]


def test_a_failed_dispatch_stops_puts_until_reopen_which_redispatches(open_store, faulty_io):
    # The record reaches the commit log, its consume queue unit cannot be written (EIO).
    store = open_store(file_io=faulty_io)
    faulty_io.fail("pwrite", errno.EIO, path=os.path.join("consumequeue", "Blocked"))
    assert store.put_message_sync(inner(topic="Blocked", body=b"kept")).ok
    assert store.runtime_info()["storeHealthy"].startswith("false: dispatch failed")
    assert store.put_message_sync(inner()).status is PutMessageStatus.SERVICE_NOT_AVAILABLE
    store.close()
    assert os.path.exists(store.config.abort_path)  # the next open must recover
    faulty_io.heal()
    store = open_store()
    assert store.runtime_info()["storeHealthy"] == "true"
    assert bodies(store, "Blocked") == [b"kept"]
    assert store.put_message_sync(inner()).ok
