"""The key index: KEYS and UNIQ_KEY lookups, time ranges, file layout, roll-over."""
from __future__ import annotations

import os
import struct

from brokers.engine.common.message_codec import decode_record
from brokers.engine.store.index import INDEX_HEADER_SIZE, key_hash
from tests.brokers.engine.store._support import inner

FOREVER = 2**62


def _keys(records):
    return [decode_record(r).properties.get("KEYS") for r in records]


def test_key_hash_reference_example():
    assert key_hash("TopicTest", "KEY1") == 1656969516
    assert key_hash("TopicTest", "KEY1") % 5_000_000 == 1969516


def test_query_by_each_key_and_by_uniq_key(open_store):
    store = open_store()
    store.put_message_sync(inner(keys="order-1 customer-9", uniq="AAAA"))
    store.put_message_sync(inner(keys="order-2 customer-9", uniq="BBBB"))
    store.put_message_sync(inner(topic="Other", keys="order-1"))
    assert _keys(store.query_message("TopicTest", "order-1", 10, 0, FOREVER)) == ["order-1 customer-9"]
    assert _keys(store.query_message("TopicTest", "customer-9", 10, 0, FOREVER)) == [
        "order-2 customer-9", "order-1 customer-9"]  # newest first
    assert _keys(store.query_message("TopicTest", "customer-9", 1, 0, FOREVER)) == ["order-2 customer-9"]
    assert _keys(store.query_message("TopicTest", "BBBB", 10, 0, FOREVER)) == ["order-2 customer-9"]
    assert _keys(store.query_message("Other", "order-1", 10, 0, FOREVER)) == ["order-1"]
    assert store.query_message("TopicTest", "order-3", 10, 0, FOREVER) == []
    assert store.query_message("TopicTest", "order-", 10, 0, FOREVER) == []


def test_query_respects_the_time_range(open_store, clock):
    store = open_store()
    start = clock.now_ms()
    store.put_message_sync(inner(keys="k"))
    clock.advance(10)
    store.put_message_sync(inner(keys="k", body=b"later"))
    assert len(store.query_message("TopicTest", "k", 10, start, start + 5000)) == 1
    later = store.query_message("TopicTest", "k", 10, start + 9000, FOREVER)
    assert [decode_record(r).body for r in later] == [b"later"]
    assert len(store.query_message("TopicTest", "k", 10, 0, FOREVER)) == 2


def test_index_files_roll_over_and_are_all_searched(open_store, clock):
    store = open_store(max_index_count=5, max_index_hash_slots=7)  # 4 items per file
    for i in range(10):
        store.put_message_sync(inner(keys=f"k{i} common"))
    names = sorted(os.listdir(store.config.index_dir))
    assert len(names) == 5 and all(len(n) == 17 and n.isdigit() for n in names)
    assert len(store.query_message("TopicTest", "common", 100, 0, FOREVER)) == 10
    assert _keys(store.query_message("TopicTest", "k0", 10, 0, FOREVER)) == ["k0 common"]
    store.flush()
    with open(os.path.join(store.config.index_dir, names[0]), "rb") as f:
        header = f.read(INDEX_HEADER_SIZE)
    begin_ts, end_ts, begin_phy, end_phy, slots_used, count = struct.unpack(">qqqqii", header)
    assert count == 5 and begin_ts == end_ts == clock.now_ms() and begin_phy == 0 and 1 <= slots_used <= 4
    assert store.index_last_update()[1] > 0


def test_hash_collisions_are_filtered_by_the_record(open_store):
    store = open_store(max_index_hash_slots=1)  # every key lands in the same slot
    for i in range(20):
        store.put_message_sync(inner(keys=f"key-{i}"))
    assert _keys(store.query_message("TopicTest", "key-7", 10, 0, FOREVER)) == ["key-7"]
    assert store.query_message("TopicTest", "key-70", 10, 0, FOREVER) == []
