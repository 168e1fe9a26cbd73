"""Commit log segments: naming, roll-over with the blank marker, reads by physical offset."""

from __future__ import annotations

import os
import struct

from brokers.engine.common.message_codec import BLANK_MAGIC_CODE, decode_record
from brokers.engine.store import PutMessageStatus
from tests.brokers.engine.store._support import bodies, inner


def test_segments_roll_over_with_a_blank_marker(open_store):
    store = open_store(commitlog_file_size=1024)
    results = [store.put_message_sync(inner(body=b"m%03d" % i + b"x" * 100)) for i in range(30)]
    assert all(r.status is PutMessageStatus.PUT_OK for r in results)
    names = sorted(os.listdir(store.config.commitlog_dir))
    assert names[:3] == ["00000000000000000000", "00000000000000001024", "00000000000000002048"]
    assert all(len(n) == 20 for n in names)
    assert all(os.path.getsize(os.path.join(store.config.commitlog_dir, n)) == 1024 for n in names)
    for r in results:  # a record never spans two segments
        assert r.wrote_offset // 1024 == (r.wrote_offset + r.wrote_bytes - 1) // 1024
    first_in_second = next(r for r in results if r.wrote_offset >= 1024)
    assert first_in_second.wrote_offset == 1024
    last_in_first = max((r for r in results if r.wrote_offset < 1024), key=lambda r: r.wrote_offset)
    end = last_in_first.wrote_offset + last_in_first.wrote_bytes
    with open(os.path.join(store.config.commitlog_dir, names[0]), "rb") as f:
        f.seek(end)
        size, magic = struct.unpack(">iI", f.read(8))
    assert (size, magic) == (1024 - end, BLANK_MAGIC_CODE)
    assert bodies(store) == [b"m%03d" % i + b"x" * 100 for i in range(30)]


def test_look_message_by_offset_returns_one_record(open_store):
    store = open_store()
    results = [store.put_message_sync(inner(body=b"body-%d" % i)) for i in range(5)]
    for i, r in enumerate(results):
        record = store.look_message_by_offset(r.wrote_offset)
        assert len(record) == r.wrote_bytes
        msg = decode_record(record)
        assert msg.body == b"body-%d" % i and msg.commit_log_offset == r.wrote_offset
        assert msg.msg_id == r.msg_id
    assert store.look_message_by_offset(results[1].wrote_offset + 1) is None
    assert store.look_message_by_offset(store.max_phy_offset) is None
    assert store.look_message_by_offset(-5) is None


def test_physical_offsets_are_contiguous_and_reported(open_store):
    store = open_store()
    r1 = store.put_message_sync(inner(body=b"a"))
    r2 = store.put_message_sync(inner(body=b"bb"))
    assert r1.wrote_offset == 0 and r2.wrote_offset == r1.wrote_bytes
    assert store.max_phy_offset == r2.wrote_offset + r2.wrote_bytes
    assert store.min_phy_offset == 0
    info = store.runtime_info()
    assert info["commitLogMaxOffset"] == str(store.max_phy_offset)
    assert info["commitLogMinOffset"] == "0"


def test_a_record_larger_than_a_segment_is_illegal_and_writes_nothing(open_store):
    store = open_store(commitlog_file_size=1024)
    r = store.put_message_sync(inner(body=b"x" * 2000))
    assert r.status is PutMessageStatus.MESSAGE_ILLEGAL
    assert store.max_phy_offset == 0
    assert store.get_max_offset_in_queue("TopicTest", 0) == 0
