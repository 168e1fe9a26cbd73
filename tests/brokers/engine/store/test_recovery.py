"""Recovery: clean restarts, torn tails after a crash, rebuilt queues and index, middle corruption."""

from __future__ import annotations

import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import textwrap

import pytest

from brokers.engine.common.message_codec import decode_record, decode_records
from brokers.engine.store import DefaultMessageStore, StoreCorruptionError
from brokers.engine.store.mapped_file import offset_to_file_name
from tests.brokers.engine.store._support import bodies, crash, inner, make_config

FOREVER = 2**62


def _write(store, n, queue_id=0):
    return [
        store.put_message_sync(
            inner(queue_id=queue_id, body=b"body-%03d" % i, tags="TagA", keys=f"key-{i}", uniq=f"UNIQ{i:04d}")
        )
        for i in range(n)
    ]


def _segment(config, offset):
    start = offset - offset % config.commitlog_file_size
    return os.path.join(config.commitlog_dir, offset_to_file_name(start)), offset - start


def _patch(config, offset, data):
    path, pos = _segment(config, offset)
    with open(path, "r+b") as f:
        f.seek(pos)
        f.write(data)


def _zero_unit(config, queue_id, offset):
    units = config.consume_queue_units_per_file
    start = offset - offset % units
    qfile = os.path.join(config.consume_queue_dir, "TopicTest", str(queue_id), offset_to_file_name(start * 20))
    with open(qfile, "r+b") as f:
        f.seek((offset - start) * 20)
        f.write(bytes(20))


def _state(store, queues=(0,)):
    """Everything a consumer can observe, to compare two opens."""
    return (
        store.max_phy_offset,
        {q: bodies(store, "TopicTest", q) for q in queues},
        {q: store.get_max_offset_in_queue("TopicTest", q) for q in queues},
        sorted(decode_record(r).body for r in store.query_message("TopicTest", "key-1", 10, 0, FOREVER)),
    )


@pytest.fixture
def config(tmp_path):
    return make_config(tmp_path / "store", commitlog_file_size=2048)


def test_clean_restart_keeps_everything(config, clock):
    with DefaultMessageStore(config, clock=clock) as store:
        results = _write(store, 40)
        _write(store, 5, queue_id=1)
        before = _state(store, (0, 1))
    assert not os.path.exists(config.abort_path)
    with DefaultMessageStore(config, clock=clock) as store:
        report = store.recovery_report
        assert not report.abnormal and not report.torn_tail
        assert report.consume_queue_units_rebuilt == 0 and report.messages_reindexed == 0
        assert _state(store, (0, 1)) == before
        r = store.put_message_sync(inner(body=b"next"))
        assert r.queue_offset == 40 and r.wrote_offset >= results[-1].wrote_offset + results[-1].wrote_bytes


@pytest.mark.parametrize(
    "damage", ["cut_file", "cut_record", "zero_tail", "zero_header", "random_tail", "random_over_last"]
)
def test_torn_tail_is_truncated_and_everything_before_survives(config, clock, damage):
    store = DefaultMessageStore(config, clock=clock)
    store.open()
    results = _write(store, 30)
    crash(store)
    last = results[-1]
    end = last.wrote_offset + last.wrote_bytes
    path, pos = _segment(config, last.wrote_offset)
    rnd = random.Random(7)
    expected = [b"body-%03d" % i for i in range(29)]
    if damage == "cut_file":  # the file itself ends inside the last record
        os.truncate(path, pos + last.wrote_bytes // 2)
    elif damage == "cut_record":  # the second half of the last record never made it
        _patch(config, last.wrote_offset + last.wrote_bytes // 2, bytes(last.wrote_bytes // 2 + 1))
    elif damage == "zero_tail":  # the last record is entirely zeros
        _patch(config, last.wrote_offset, bytes(last.wrote_bytes))
    elif damage == "zero_header":  # size and magic missing, the rest written
        _patch(config, last.wrote_offset, bytes(8))
    elif damage == "random_tail":  # garbage after the last good record
        _patch(config, end, rnd.randbytes(300))
        expected.append(b"body-029")
    elif damage == "random_over_last":
        _patch(config, last.wrote_offset + 10, rnd.randbytes(last.wrote_bytes + 100))
    cut_at = end if damage == "random_tail" else last.wrote_offset

    store = DefaultMessageStore(config, clock=clock)
    store.open()
    report = store.recovery_report
    assert report.abnormal and report.end_offset == cut_at and store.max_phy_offset == cut_at
    assert report.torn_tail or damage == "zero_tail"
    assert bodies(store) == expected
    assert store.get_max_offset_in_queue("TopicTest", 0) == len(expected)
    last_survived = damage == "random_tail"
    assert (store.look_message_by_offset(last.wrote_offset) is not None) == last_survived
    assert len(store.query_message("TopicTest", "key-3", 10, 0, FOREVER)) == 1
    assert len(store.query_message("TopicTest", "key-29", 10, 0, FOREVER)) == int(last_survived)
    # the tail is clean again: a new record takes the freed space and survives the next crash
    r = store.put_message_sync(inner(body=b"after", keys="after"))
    assert r.ok and r.wrote_offset == cut_at and r.queue_offset == len(expected)
    state = _state(store)
    crash(store)
    with DefaultMessageStore(config, clock=clock) as again:
        assert _state(again) == state
        assert again.recovery_report.end_offset == cut_at + r.wrote_bytes
        assert not again.recovery_report.torn_tail
    with DefaultMessageStore(config, clock=clock) as third:  # and a clean reopen agrees
        assert _state(third) == state


def test_consume_queue_units_missing_for_logged_records_are_rebuilt(config, clock):
    store = DefaultMessageStore(config, clock=clock)
    store.open()
    _write(store, 20)
    _write(store, 6, queue_id=1)
    crash(store)
    # the process died after the commit log writes but before the last 5 units of queue 1 and
    # of queue 0 reached their files
    for queue_id, count, lost in ((0, 20, 5), (1, 6, 5)):
        for offset in range(count - lost, count):
            _zero_unit(config, queue_id, offset)
    with DefaultMessageStore(config, clock=clock) as store:
        assert store.recovery_report.consume_queue_units_rebuilt == 10
        assert bodies(store, "TopicTest", 0) == [b"body-%03d" % i for i in range(20)]
        assert bodies(store, "TopicTest", 1) == [b"body-%03d" % i for i in range(6)]
        assert store.put_message_sync(inner(queue_id=1)).queue_offset == 6


def test_a_lost_queue_directory_and_index_are_rebuilt(config, clock):
    store = DefaultMessageStore(config, clock=clock)
    store.open()
    _write(store, 25)
    crash(store)
    shutil.rmtree(config.consume_queue_dir)
    shutil.rmtree(config.index_dir)
    with DefaultMessageStore(config, clock=clock) as store:
        report = store.recovery_report
        assert report.consume_queue_units_rebuilt == 25 and report.messages_reindexed == 25
        assert bodies(store) == [b"body-%03d" % i for i in range(25)]
        assert [decode_record(r).body for r in store.query_message("TopicTest", "UNIQ0007", 5, 0, FOREVER)] == [
            b"body-007"
        ]


def test_consume_queue_units_past_the_log_end_are_removed(config, clock):
    store = DefaultMessageStore(config, clock=clock)
    store.open()
    results = _write(store, 12)
    crash(store)
    cut = results[8].wrote_offset  # records 8..11 lost (e.g. unflushed pages), units remain
    path, pos = _segment(config, cut)
    with open(path, "r+b") as f:
        f.seek(pos)
        f.write(bytes(config.commitlog_file_size - pos))
    for later in sorted(os.listdir(config.commitlog_dir)):
        if int(later) > cut:
            os.unlink(os.path.join(config.commitlog_dir, later))
    with DefaultMessageStore(config, clock=clock) as store:
        assert store.recovery_report.consume_queue_units_removed == 4
        assert store.get_max_offset_in_queue("TopicTest", 0) == 8
        assert bodies(store) == [b"body-%03d" % i for i in range(8)]
        assert store.query_message("TopicTest", "key-9", 5, 0, FOREVER) == []
        again = store.put_message_sync(inner(body=b"new", keys="key-9"))
        assert again.queue_offset == 8 and again.wrote_offset == cut
        assert [decode_record(r).body for r in store.query_message("TopicTest", "key-9", 5, 0, FOREVER)] == [b"new"]


@pytest.mark.parametrize("damage", ["body_byte", "magic", "size"])
def test_corruption_in_the_middle_stops_the_store(config, clock, damage):
    store = DefaultMessageStore(config, clock=clock)
    store.open()
    results = _write(store, 30)
    crash(store)
    victim = results[4]
    if damage == "body_byte":
        record = decode_record(store_bytes(config, victim))
        _patch(config, victim.wrote_offset + 88, bytes([record.body[0] ^ 0xFF]))
    elif damage == "magic":
        _patch(config, victim.wrote_offset + 4, b"\x12\x34\x56\x78")
    else:
        _patch(config, victim.wrote_offset, struct.pack(">i", 5))
    path, _pos = _segment(config, victim.wrote_offset)
    for _ in range(2):  # refuses every time, and changes nothing on disk
        with pytest.raises(StoreCorruptionError) as err:
            DefaultMessageStore(config, clock=clock).open()
        assert path in str(err.value) and str(victim.wrote_offset) in str(err.value)
        assert err.value.path == path and err.value.offset == victim.wrote_offset
    assert os.path.getsize(path) == config.commitlog_file_size
    assert os.path.exists(config.abort_path)


def test_corruption_at_a_segment_end_with_valid_segments_after_is_middle_corruption(config, clock):
    with DefaultMessageStore(config, clock=clock) as store:
        results = _write(store, 30)
    assert len(os.listdir(config.commitlog_dir)) == 3  # a clean open re-checks the last three
    last_in_first = max(
        (r for r in results if r.wrote_offset < config.commitlog_file_size), key=lambda r: r.wrote_offset
    )
    _patch(config, last_in_first.wrote_offset + 30, b"\xff" * 8)  # clean shutdown, then bit rot
    with pytest.raises(StoreCorruptionError) as err:
        DefaultMessageStore(config, clock=clock).open()
    assert err.value.offset == last_in_first.wrote_offset


def test_crc_check_can_be_disabled(tmp_path, clock):
    config = make_config(tmp_path / "s", check_crc_on_recover=False)
    store = DefaultMessageStore(config, clock=clock)
    store.open()
    results = _write(store, 5)
    crash(store)
    _patch(config, results[2].wrote_offset + 88, b"X")
    with DefaultMessageStore(config, clock=clock) as store:
        assert store.get_max_offset_in_queue("TopicTest", 0) == 5


def store_bytes(config, result):
    path, pos = _segment(config, result.wrote_offset)
    with open(path, "rb") as f:
        f.seek(pos)
        return f.read(result.wrote_bytes)


def test_a_killed_broker_process_recovers_every_acknowledged_message(config):
    """SIGKILL a real writer process mid-stream: every put it reported is there after reopen."""
    script = textwrap.dedent(f"""
        import sys
        from brokers.engine.store import DefaultMessageStore, MessageExtBrokerInner, StoreConfig
        store = DefaultMessageStore(StoreConfig(store_dir={config.store_dir!r}, commitlog_file_size=2048,
                                         consume_queue_units_per_file=16, max_index_hash_slots=64,
                                         max_index_count=200))
        store.open()
        i = 0
        while True:
            r = store.put_message_sync(MessageExtBrokerInner("TopicTest", 0, b"body-%06d" % i,
                                                             {{"KEYS": "key-%d" % i}}))
            assert r.ok
            print(i, flush=True)
            i += 1
    """)
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": os.getcwd()}
    )
    acked = -1
    try:
        for line in proc.stdout:
            acked = int(line)
            if acked >= 300:
                break
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert acked >= 300
    with DefaultMessageStore(config) as store:
        assert store.recovery_report.abnormal
        got = bodies(store)
        assert len(got) >= acked + 1
        assert got == [b"body-%06d" % i for i in range(len(got))]
        assert len(store.query_message("TopicTest", f"key-{acked}", 5, 0, FOREVER)) == 1
        records = decode_records(b"".join(store.get_message("g", "TopicTest", 0, 0, 4).records))
        assert [m.queue_offset for m in records] == [0, 1, 2, 3]


def test_a_hole_in_a_consume_queue_after_a_crash_is_rebuilt(config, clock):
    store = DefaultMessageStore(config, clock=clock)
    store.open()
    _write(store, 14)
    crash(store)
    for offset in range(5, 9):  # a lost page in the middle; later units made it to disk
        _zero_unit(config, 0, offset)
    with DefaultMessageStore(config, clock=clock) as store:
        assert store.recovery_report.consume_queue_units_rebuilt == 9
        assert bodies(store) == [b"body-%03d" % i for i in range(14)]


def test_an_interrupted_topic_deletion_is_finished_at_open(config, clock):
    with DefaultMessageStore(config, clock=clock) as store:
        _write(store, 3)
    doomed = os.path.join(config.consume_queue_dir, ".deleting.Old.123")
    os.makedirs(os.path.join(doomed, "0"))
    with DefaultMessageStore(config, clock=clock) as store:
        assert not os.path.exists(doomed)
        assert store.get_max_offset_in_queue("TopicTest", 0) == 3


def test_the_same_store_object_reopens(config, clock):
    store = DefaultMessageStore(config, clock=clock)
    store.open()
    _write(store, 5)
    store.close()
    store.open()
    try:
        assert bodies(store) == [b"body-%03d" % i for i in range(5)]
        assert store.put_message_sync(inner()).queue_offset == 5
    finally:
        store.close()
