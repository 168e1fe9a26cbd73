"""The key index: KEYS and UNIQ_KEY lookups, time ranges, file layout, roll-over."""

from __future__ import annotations

import os
import random
import struct

from brokers.engine.common.message_codec import decode_record
from brokers.engine.store.index_file import INDEX_HEADER_SIZE, IndexFile, key_hash
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
        "order-2 customer-9",
        "order-1 customer-9",
    ]  # newest first
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


def _header_on_disk(path):
    with open(path, "rb") as f:
        return struct.unpack(">qqqqii", f.read(INDEX_HEADER_SIZE))


def test_a_put_writes_its_items_and_the_flush_its_slots_and_header(tmp_path):
    """Until a flush the disk has the items only (a cut then leaves a header counting nothing
    unsynced); lookups see the new keys at once; the flush writes slots and header."""
    path = str(tmp_path / "20240101000000000")
    f = IndexFile(path, 7, 20, create=True)
    f.flush()
    h = key_hash("TopicTest", "k")
    assert f.put_items([(h, 100), (h, 200)], 1_700_000_000_000) == 2
    out: list[int] = []
    f.select(h, 0, FOREVER, 10, out)
    assert out == [200, 100]
    assert _header_on_disk(path)[5] == 1  # indexCount on disk: nothing yet
    assert f.flush() and not f.flush()
    begin_ts, end_ts, begin_phy, end_phy, _used, count = _header_on_disk(path)
    assert (begin_phy, end_phy, count) == (100, 200, 3) and begin_ts == end_ts == 1_700_000_000_000
    f.close()
    reopened = IndexFile(path, 7, 20, create=False)
    out = []
    reopened.select(h, 0, FOREVER, 10, out)
    assert out == [200, 100] and reopened.end_phy_offset == 200
    reopened.close()


def test_slots_written_by_a_flush_cut_before_its_header_are_repaired(tmp_path):
    """A cut after a flush wrote (and synced) the slots but not the header: the slots point
    past the count on disk; the repair after the crash points them at the older chain, so
    re-indexing over those item numbers hides nothing."""
    path = str(tmp_path / "20240101000000000")
    f = IndexFile(path, 7, 20, create=True)
    a, b = key_hash("TopicTest", "a"), key_hash("TopicTest", "b")
    f.put_items([(a, 100), (b, 100)], 1_700_000_000_000)
    f.flush()  # on disk: items 1-2, their slots, count 3
    f.put_items([(a, 300), (b, 300)], 1_700_000_000_000)
    f.mapped.flush()
    f._write_slots(dict(f._pending))  # flush steps (1) and (2), then the cut: no header
    f.mapped.flush()
    f.close()
    reopened = IndexFile(path, 7, 20, create=False)
    assert reopened.index_count == 3 and reopened.end_phy_offset == 100
    assert reopened.repair_slots() == len({a % 7, b % 7})
    reopened.put_items([(b, 300)], 1_700_000_000_000)  # recovery re-indexes over item 3
    for key, want in ((a, [100]), (b, [300, 100])):
        out: list[int] = []
        reopened.select(key, 0, FOREVER, 10, out)
        assert out == want
    assert reopened.repair_slots() == 0
    reopened.close()


def _slots_on_disk(path: str, slots: int) -> list[int]:
    with open(path, "rb") as f:
        f.seek(INDEX_HEADER_SIZE)
        return list(struct.unpack(f">{slots}i", f.read(slots * 4)))


def test_a_flush_writes_every_pending_slot_and_only_those(tmp_path):
    """Slots are written in runs that rewrite the bytes between them: every slot a flush took
    gets its newest item, and a slot that turned pending after the flush took its snapshot keeps
    its value on disk until the next flush (lookups see it at once either way)."""
    path = str(tmp_path / "20240101000000000")
    slots = 5000
    f = IndexFile(path, slots, 4000, create=True)
    rnd = random.Random(7)
    newest: dict[int, int] = {}
    for n in range(1, 3001):
        h = rnd.getrandbits(31)
        f.put_items([(h, n * 100)], 1_700_000_000_000)
        newest[h % slots] = n  # item numbers start at 1
    assert f.flush()
    on_disk = _slots_on_disk(path, slots)
    assert on_disk == [newest.get(s, 0) for s in range(slots)]
    taken = dict(f._pending)  # empty: the flush wrote them all
    assert not taken
    # a flush that took slots 10 and 200 (one run) while a put made slot 100 pending meanwhile
    f.put_items([(10, 1), (200, 2)], 1_700_000_000_000)
    snapshot = dict(f._pending)
    f.put_items([(100, 3)], 1_700_000_000_000)
    f._write_slots(snapshot)
    on_disk = _slots_on_disk(path, slots)
    assert on_disk[10] == 3001 and on_disk[200] == 3002 and on_disk[100] == newest.get(100, 0)
    out: list[int] = []
    f.select(100, 0, FOREVER, 10, out)
    assert out[0] == 3
    f.close()
