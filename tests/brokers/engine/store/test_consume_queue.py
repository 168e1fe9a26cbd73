"""Consume queue files: 20-byte units, file naming, store timestamps and search by time."""

from __future__ import annotations

import os
import struct

from brokers.engine.common.message_codec import tags_code
from brokers.engine.store.consume_queue import ConsumeQueue
from tests.brokers.engine.store._support import inner


def test_units_are_20_bytes_in_files_named_by_byte_offset(open_store):
    store = open_store(consume_queue_units_per_file=4)
    results = [store.put_message_sync(inner(queue_id=3, tags="TagA")) for _ in range(6)]
    qdir = os.path.join(store.config.consume_queue_dir, "TopicTest", "3")
    assert sorted(os.listdir(qdir)) == ["00000000000000000000", "00000000000000000080"]
    assert os.path.getsize(os.path.join(qdir, "00000000000000000000")) == 80
    store.flush()
    with open(os.path.join(qdir, "00000000000000000080"), "rb") as f:
        data = f.read()
    phys, size, tag = struct.unpack_from(">qiq", data, 20)  # logical offset 5
    assert (phys, size, tag) == (results[5].wrote_offset, results[5].wrote_bytes, tags_code("TagA"))
    assert data[40:] == bytes(40)


def test_a_queue_reloads_its_end_from_the_files(tmp_path):
    q = ConsumeQueue("T", 0, str(tmp_path / "T" / "0"), 4)
    for i in range(6):
        q.put(i * 100, 100, 7)
    q.close()
    again = ConsumeQueue("T", 0, str(tmp_path / "T" / "0"), 4)
    again.load()
    assert (again.min_offset, again.max_offset, again.max_phys_end) == (0, 6, 600)
    assert again.get_unit(5) == (500, 100, 7) and again.get_unit(6) is None
    assert again.truncate_dirty(350) == 3
    assert again.max_offset == 3 and again.max_phys_end == 300
    assert sorted(os.listdir(tmp_path / "T" / "0")) == ["00000000000000000000"]
    again.close()


def test_store_timestamp_and_offset_by_time(open_store, clock):
    store = open_store()
    stamps = []
    for i in range(10):
        stamps.append(clock.now_ms())
        store.put_message_sync(inner(body=b"m%d" % i))
        clock.advance(1.0)
    assert [store.get_message_store_timestamp("TopicTest", 0, i) for i in range(10)] == stamps
    assert store.get_message_store_timestamp("TopicTest", 0, 10) == -1
    assert store.get_earliest_message_time("TopicTest", 0) == stamps[0]
    assert store.get_earliest_message_time("TopicTest", 9) == -1
    by_time = store.get_offset_in_queue_by_time
    assert by_time("TopicTest", 0, stamps[4]) == 4  # exact
    assert by_time("TopicTest", 0, stamps[4] + 300) == 4  # nearer to the left
    assert by_time("TopicTest", 0, stamps[4] + 700) == 5  # nearer to the right
    assert by_time("TopicTest", 0, stamps[4] + 500) == 4  # tie: the earlier
    assert by_time("TopicTest", 0, stamps[0] - 10_000) == 0
    assert by_time("TopicTest", 0, stamps[9] + 10_000) == 9
    assert by_time("Unknown", 0, stamps[0]) == 0


def test_offset_by_time_picks_the_first_of_equal_timestamps(open_store, clock):
    store = open_store()
    for _ in range(3):
        store.put_message_sync(inner())
    clock.advance(1.0)
    for _ in range(3):
        store.put_message_sync(inner())
    assert store.get_offset_in_queue_by_time("TopicTest", 0, clock.now_ms()) == 3
