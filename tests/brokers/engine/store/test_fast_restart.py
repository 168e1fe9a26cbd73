"""Fast restart: the checkpoint's offsets bound what recovery re-checks, the queue ends a clean
shutdown recorded are taken, and whatever does not add up falls back to the full checks."""

from __future__ import annotations

import json
import os
import struct

import pytest

from brokers.engine.store import DefaultMessageStore, StoreCorruptionError
from brokers.engine.store.checkpoint import StoreCheckpoint
from brokers.engine.store.consume_queue_table import QUEUE_ENDS_FILE
from brokers.engine.store.mapped_file import offset_to_file_name
from brokers.engine.store.recovery import RECHECK_WINDOW
from tests.brokers.engine.store._support import bodies, crash, inner, make_config

BODY = 60_000  # ~60 KB records: the log outgrows the re-check window in ~100 puts
SEGMENT = 1 << 20


@pytest.fixture
def config(tmp_path):
    return make_config(tmp_path / "store", commitlog_file_size=SEGMENT)


def _fill(store, n, start=0, queue_id=0):
    return [
        store.put_message_sync(inner(queue_id=queue_id, body=b"%06d" % i + bytes(BODY), keys=f"key-{i}"))
        for i in range(start, start + n)
    ]


def _count():
    return (RECHECK_WINDOW * 3 // 2) // BODY


def _patch(config, offset, data):
    start = offset - offset % config.commitlog_file_size
    with open(os.path.join(config.commitlog_dir, offset_to_file_name(start)), "r+b") as f:
        f.seek(offset - start)
        f.write(data)


def _heads(store, queue_id=0):
    return [b[:6] for b in bodies(store, "TopicTest", queue_id)]


def test_a_clean_reopen_checks_only_the_tail_and_takes_the_recorded_queue_ends(config, clock):
    n = _count()
    with DefaultMessageStore(config, clock=clock) as store:
        results = _fill(store, n)
        _fill(store, 3, queue_id=1)
        end = store.max_phy_offset
    assert json.load(open(os.path.join(config.store_dir, QUEUE_ENDS_FILE)))["commitLogOffset"] == end
    with DefaultMessageStore(config, clock=clock) as store:
        report = store.recovery_report
        assert not report.abnormal and report.vouched_offset == end and report.end_offset == end
        assert end - RECHECK_WINDOW <= report.scan_from < end - RECHECK_WINDOW + BODY + 1000
        assert report.scan_from % SEGMENT  # mid-segment, at a record
        assert 0 < report.records_checked < n
        assert _heads(store) == [b"%06d" % i for i in range(n)]
        assert store.get_max_offset_in_queue("TopicTest", 1) == 3
        r = store.put_message_sync(inner(body=b"next"))
        assert r.queue_offset == n and r.wrote_offset >= results[-1].wrote_offset + results[-1].wrote_bytes


def test_after_a_crash_only_what_the_checkpoint_does_not_vouch_for_is_checked(tmp_path, clock):
    # no background flush between the explicit one and the crash: the checkpoint must vouch for
    # exactly what store.flush() wrote (a periodic flush on a busy machine would vouch for more)
    config = make_config(
        tmp_path / "store",
        commitlog_file_size=SEGMENT,
        flush_interval_commitlog_ms=3_600_000,
        flush_interval_consume_queue_ms=3_600_000,
    )
    n = _count()
    store = DefaultMessageStore(config, clock=clock)
    store.open()
    _fill(store, n)
    store.flush()  # the checkpoint vouches for everything so far
    vouched = store.max_phy_offset
    later = _fill(store, 4, start=n)
    crash(store)
    units = config.consume_queue_units_per_file
    for offset in range(n, n + 4):  # those units never reached the queue file
        qfile = os.path.join(
            config.consume_queue_dir, "TopicTest", "0", offset_to_file_name((offset - offset % units) * 20)
        )
        with open(qfile, "r+b") as f:
            f.seek((offset % units) * 20)
            f.write(bytes(20))
    with DefaultMessageStore(config, clock=clock) as store:
        report = store.recovery_report
        assert report.abnormal and report.vouched_offset == vouched
        assert vouched - RECHECK_WINDOW <= report.scan_from < vouched
        assert report.records_checked < n
        assert report.end_offset == later[-1].wrote_offset + later[-1].wrote_bytes
        assert report.consume_queue_units_rebuilt == 4
        assert _heads(store) == [b"%06d" % i for i in range(n + 4)]


def test_a_torn_checkpoint_falls_back_to_checking_whole_segments(config, clock):
    n = _count()
    store = DefaultMessageStore(config, clock=clock)
    store.open()
    _fill(store, n)
    store.flush()
    crash(store)
    with open(config.checkpoint_path, "r+b") as f:
        f.seek(30)
        f.write(b"\xff\xff")  # a torn write inside the offsets: their CRC fails
    assert not StoreCheckpoint(config.checkpoint_path).offsets_known
    with DefaultMessageStore(config, clock=clock) as store:
        report = store.recovery_report
        assert report.vouched_offset == -1 and report.scan_from % SEGMENT == 0
        assert report.records_checked > RECHECK_WINDOW // BODY
        assert _heads(store) == [b"%06d" % i for i in range(n)]


@pytest.mark.parametrize("stop", ["clean", "crash"])
def test_damage_inside_the_window_is_still_refused(config, clock, stop):
    n = _count()
    store = DefaultMessageStore(config, clock=clock)
    store.open()
    results = _fill(store, n)
    if stop == "clean":
        store.close()
    else:
        store.flush()
        crash(store)
    victim = results[-5]  # well inside the last RECHECK_WINDOW bytes, valid records after it
    _patch(config, victim.wrote_offset + 4, b"\x12\x34\x56\x78")
    with pytest.raises(StoreCorruptionError) as err:
        DefaultMessageStore(config, clock=clock).open()
    assert err.value.offset == victim.wrote_offset


def test_recorded_queue_ends_that_do_not_match_the_files_are_not_taken(config, clock):
    with DefaultMessageStore(config, clock=clock) as store:
        _fill(store, 5)
    path = os.path.join(config.store_dir, QUEUE_ENDS_FILE)
    body = json.load(open(path))
    body["queues"] = [[t, q, end + 3, phys + 999] for t, q, end, phys in body["queues"]]
    with open(path, "w") as f:
        json.dump(body, f)
    with DefaultMessageStore(config, clock=clock) as store:
        assert store.get_max_offset_in_queue("TopicTest", 0) == 5
        assert _heads(store) == [b"%06d" % i for i in range(5)]
        assert store.put_message_sync(inner(body=b"x")).queue_offset == 5


def test_truncating_the_log_lowers_what_the_checkpoint_vouches_for(config, clock):
    with DefaultMessageStore(config, clock=clock) as store:
        results = _fill(store, 6)
        store.flush()
        cut = results[3].wrote_offset
        store.truncate_to(cut)
        cp = StoreCheckpoint(config.checkpoint_path)
        try:
            assert 0 <= cp.min_offset() <= cut
        finally:
            cp.close()
        assert store.put_message_sync(inner(body=b"after")).wrote_offset == cut
    with DefaultMessageStore(config, clock=clock) as store:
        assert _heads(store)[:3] == [b"%06d" % i for i in range(3)] and len(bodies(store)) == 4


def test_the_checkpoint_keeps_rocketmqs_first_24_bytes(config, clock):
    with DefaultMessageStore(config, clock=clock) as store:
        _fill(store, 2)
    with open(config.checkpoint_path, "rb") as f:
        data = f.read()
    assert len(data) == 4096
    physic, logics, index = struct.unpack_from(">qqq", data)
    assert physic == clock.now_ms() and logics == clock.now_ms() and index == clock.now_ms()
