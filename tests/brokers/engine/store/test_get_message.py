"""get_message: statuses and next_begin_offset as RocketMQ's getMessage, tag filtering, limits."""

from __future__ import annotations

import os

from brokers.engine.common.message_codec import decode_records, tags_code
from brokers.engine.store import DefaultMessageStore, GetMessageStatus
from tests.brokers.engine.store._support import inner, make_config

TAG_A = tags_code("TagA")
TAG_B = tags_code("TagB")


def _fill(store, n, queue_id=0, tags=lambda i: "TagA"):
    for i in range(n):
        assert store.put_message_sync(inner(queue_id=queue_id, body=b"m%d" % i, tags=tags(i))).ok


def test_found_returns_records_from_the_offset(open_store):
    store = open_store()
    _fill(store, 10)
    r = store.get_message("g", "TopicTest", 0, 3, 4)
    assert r.status is GetMessageStatus.FOUND
    assert (r.next_begin_offset, r.min_offset, r.max_offset, r.message_count) == (7, 0, 10, 4)
    assert [m.body for m in decode_records(b"".join(r.records))] == [b"m3", b"m4", b"m5", b"m6"]
    assert [m.queue_offset for m in decode_records(b"".join(r.records))] == [3, 4, 5, 6]
    assert r.buffer_total_size == sum(len(x) for x in r.records)


def test_status_codes_and_next_begin_offset(open_store):
    store = open_store()
    r = store.get_message("g", "Unknown", 0, 5, 32)
    assert (r.status, r.next_begin_offset, r.min_offset, r.max_offset) == (
        GetMessageStatus.NO_MATCHED_LOGIC_QUEUE,
        0,
        0,
        0,
    )
    store.consume_queue("Empty", 0)  # a queue that exists but holds nothing
    r = store.get_message("g", "Empty", 0, 3, 32)
    assert (r.status, r.next_begin_offset) == (GetMessageStatus.NO_MESSAGE_IN_QUEUE, 0)
    _fill(store, 5)
    r = store.get_message("g", "TopicTest", 0, 5, 32)
    assert (r.status, r.next_begin_offset, r.max_offset) == (GetMessageStatus.OFFSET_OVERFLOW_ONE, 5, 5)
    r = store.get_message("g", "TopicTest", 0, 9, 32)
    assert (r.status, r.next_begin_offset) == (GetMessageStatus.OFFSET_OVERFLOW_BADLY, 5)
    assert r.records == [] and r.message_count == 0


def test_offset_too_small_after_the_first_queue_file_is_gone(tmp_path, clock):
    config = make_config(tmp_path / "s", consume_queue_units_per_file=4)
    with DefaultMessageStore(config, clock=clock) as store:
        _fill(store, 10)
    qdir = os.path.join(config.consume_queue_dir, "TopicTest", "0")
    os.unlink(os.path.join(qdir, "00000000000000000000"))  # units 0..3 expired
    with DefaultMessageStore(config, clock=clock) as store:
        assert store.get_min_offset_in_queue("TopicTest", 0) == 4
        r = store.get_message("g", "TopicTest", 0, 1, 32)
        assert (r.status, r.next_begin_offset, r.min_offset, r.max_offset) == (
            GetMessageStatus.OFFSET_TOO_SMALL,
            4,
            4,
            10,
        )
        r = store.get_message("g", "TopicTest", 0, 4, 32)
        assert r.status is GetMessageStatus.FOUND and r.message_count == 4  # up to the file end


def test_a_pull_stops_at_the_consume_queue_file_end(open_store):
    store = open_store(consume_queue_units_per_file=4)
    _fill(store, 10)
    r = store.get_message("g", "TopicTest", 0, 2, 32)
    assert (r.message_count, r.next_begin_offset) == (2, 4)
    r = store.get_message("g", "TopicTest", 0, 4, 32)
    assert (r.message_count, r.next_begin_offset) == (4, 8)


def test_tag_filtering_skips_units_and_counts_them(open_store):
    store = open_store()
    _fill(store, 8, tags=lambda i: "TagA" if i % 2 else "TagB")
    r = store.get_message("g", "TopicTest", 0, 0, 2, {TAG_A})
    assert r.status is GetMessageStatus.FOUND
    assert [m.body for m in decode_records(b"".join(r.records))] == [b"m1", b"m3"]
    assert r.next_begin_offset == 4  # units 0..3 scanned; the batch is full before unit 4
    r = store.get_message("g", "TopicTest", 0, 0, 32, {TAG_A, TAG_B})
    assert r.message_count == 8 and r.next_begin_offset == 8
    r = store.get_message("g", "TopicTest", 0, 0, 32, None)
    assert r.message_count == 8


def test_no_matched_message_moves_past_the_scanned_units(open_store):
    store = open_store()
    _fill(store, 6, tags=lambda i: "TagB")
    r = store.get_message("g", "TopicTest", 0, 1, 32, {TAG_A})
    assert (r.status, r.next_begin_offset, r.records) == (GetMessageStatus.NO_MATCHED_MESSAGE, 6, [])
    r = store.get_message("g", "TopicTest", 0, 0, 32, set())
    assert r.status is GetMessageStatus.NO_MATCHED_MESSAGE


def test_max_total_bytes_limits_a_pull_but_returns_at_least_one(open_store):
    store = open_store()
    for i in range(5):
        store.put_message_sync(inner(body=bytes(500)))
    size = store.get_message("g", "TopicTest", 0, 0, 1).records[0].__len__()
    r = store.get_message("g", "TopicTest", 0, 0, 32, max_total_bytes=size * 2 + 10)
    assert (r.message_count, r.next_begin_offset) == (2, 2)
    r = store.get_message("g", "TopicTest", 0, 0, 32, max_total_bytes=10)
    assert (r.message_count, r.next_begin_offset) == (1, 1)


def test_get_message_counts_in_runtime_info(open_store):
    store = open_store()
    _fill(store, 2)
    store.get_message("g", "TopicTest", 0, 0, 32)
    store.get_message("g", "TopicTest", 0, 2, 32)
    assert store.stats.get_message_times_found == 1
    assert store.stats.get_message_times_miss == 1
    assert store.stats.get_message_transferred_msg_count == 2
