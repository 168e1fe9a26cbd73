"""The SYNC_MASTER fast path, one part at a time on real stores: a slave appends before it
dispatches (and serves only what it dispatched meanwhile), its batched dispatch builds the
master's queues and index, garbage is still refused without the CRC check, and the master's sync
waiters resolve lowest offset first, one pass per ack, their timers cancelled."""

from __future__ import annotations

import asyncio

import pytest

from brokers.engine.common.message import Message
from brokers.engine.common.message_codec import encode_batch_body
from brokers.engine.store.config import StoreConfig
from brokers.engine.store.default_message_store import DefaultMessageStore
from brokers.engine.store.ha.group_transfer import GroupTransfer
from brokers.engine.store.ha.replica_appender import ReplicaStreamError
from brokers.engine.store.message_inner import MessageExtBatch, MessageExtBrokerInner
from brokers.engine.store.results import GetMessageStatus


def _store(path) -> DefaultMessageStore:
    return DefaultMessageStore(
        StoreConfig(
            str(path),
            commitlog_file_size=1 << 16,
            consume_queue_units_per_file=100,
            max_index_hash_slots=100,
            max_index_count=400,
        )
    )


def _fill(master: DefaultMessageStore) -> None:
    """Singles and batches over two queues (batches share one store time: one dispatch run each)."""
    for i in range(40):
        if i % 4:
            assert master.put_message_sync(
                MessageExtBrokerInner(
                    topic="T",
                    queue_id=i % 2,
                    body=b"s%d" % i,
                    properties={"TAGS": "a", "KEYS": f"k{i}"},
                    born_host="127.0.0.1:1",
                )
            ).ok
        else:
            entries = [
                Message("T", b"b%d-%d" % (i, j), tags="b", keys=f"k{i}-{j}", properties={"UNIQ_KEY": f"U{i}-{j}"})
                for j in range(6)
            ]
            assert master.put_messages_sync(MessageExtBatch("T", i % 2, encode_batch_body(entries))).ok


def _same_reads(master: DefaultMessageStore, slave: DefaultMessageStore) -> None:
    for q in (0, 1):
        mine, theirs = master.get_message("g", "T", q, 0, 500), slave.get_message("g", "T", q, 0, 500)
        assert mine.records == theirs.records and mine.records
    for key in ("k5", "k8-3", "U12-0"):
        assert slave.query_message("T", key, 10, 0, 1 << 62) == master.query_message("T", key, 10, 0, 1 << 62) != []


def test_a_slave_whose_dispatch_lags_its_append_serves_what_it_dispatched(tmp_path):
    master, slave = _store(tmp_path / "m"), _store(tmp_path / "s")
    master.open()
    slave.open()
    try:
        _fill(master)
        end = master.max_phy_offset
        half = 9000  # mid-record: the appender holds the tail
        appender = slave.replica_appender(1 << 16)
        arrivals = []
        slave.add_arrival_listener(lambda *a: arrivals.append(a))
        appender.append(0, master.commitlog.read(0, half))
        served = {q: len(slave.get_message("g", "T", q, 0, 500).records) for q in (0, 1)}
        assert sum(served.values()) == len(arrivals) > 0 and appender.undispatched_records == 0

        assert appender.write(half, master.commitlog.read(half, end - half)) == end  # appended, not dispatched
        assert slave.max_phy_offset == end and appender.undispatched_records > 0
        for q in (0, 1):  # reads see only what was dispatched, whole and unchanged
            got = slave.get_message("g", "T", q, 0, 500)
            assert len(got.records) == served[q]
            assert got.records == master.get_message("g", "T", q, 0, served[q]).records
            assert slave.get_max_offset_in_queue("T", q) == served[q]
        assert slave.get_message("g", "T", 0, served[0], 10).status == GetMessageStatus.OFFSET_OVERFLOW_ONE
        assert slave.query_message("T", "k37", 10, 0, 1 << 62) == []

        appender.dispatch()
        assert appender.undispatched_records == 0 and len(arrivals) == 10 * 6 + 30
        _same_reads(master, slave)
    finally:
        master.close()
        slave.close()
    for name in sorted((tmp_path / "m" / "consumequeue" / "T").rglob("*")):
        if name.is_file():
            assert name.read_bytes() == (tmp_path / "s" / name.relative_to(tmp_path / "m")).read_bytes()


def test_reset_dispatches_what_was_appended_before_it_forgets_the_tail(tmp_path):
    master, slave = _store(tmp_path / "m"), _store(tmp_path / "s")
    master.open()
    slave.open()
    try:
        _fill(master)
        end = master.max_phy_offset
        appender = slave.replica_appender(1 << 16)
        appender.write(0, master.commitlog.read(0, end - 5))  # the last record stays pending
        assert appender.pending_bytes and appender.undispatched_records
        appender.reset()  # a new connection
        assert appender.pending_bytes == 0 and appender.undispatched_records == 0
        assert appender.expected_offset == slave.max_phy_offset < end
        appender.append(slave.max_phy_offset, master.commitlog.read(slave.max_phy_offset, end - slave.max_phy_offset))
        _same_reads(master, slave)
    finally:
        master.close()
        slave.close()


def test_structural_checks_refuse_garbage_without_the_crc(tmp_path):
    master, slave = _store(tmp_path / "m"), _store(tmp_path / "s")
    master.open()
    slave.open()
    try:
        _fill(master)
        first = bytearray(master.commitlog.read(0, 400))
        appender = slave.replica_appender(1 << 16)
        for at, value in ((4, 0xAB), (28 + 7, 0x01), (0, 0x7F)):  # magic, PHYSICALOFFSET, TOTALSIZE
            bad = bytearray(first)
            bad[at] ^= value
            with pytest.raises(ReplicaStreamError):
                appender.write(0, bytes(bad))
            appender.reset()
            assert slave.max_phy_offset == 0
    finally:
        master.close()
        slave.close()


def test_sync_waiters_resolve_lowest_offset_first_in_one_pass_per_ack():
    async def scenario():
        gt = GroupTransfer()
        order: list[int] = []
        offsets = [70, 10, 50, 30, 90, 20, 60]
        futs = {}
        for off in offsets:
            futs[off] = gt.register(off, 5)
            futs[off].add_done_callback(lambda f, off=off: order.append(off))
        late = gt.register(1000, 0.05)
        gt.ack(55)
        await asyncio.sleep(0)
        assert order == [10, 20, 30, 50] and all(futs[o].result() for o in order)
        assert gt.waiting == 4 and not futs[60].done()
        gt.ack(40)  # an older ack changes nothing
        gt.ack(90)
        await asyncio.sleep(0)
        assert order == [10, 20, 30, 50, 60, 70, 90] and gt.requests_completed == 7
        assert await late is False and gt.requests_timed_out == 1
        assert gt.register(80, 5).result() is True  # already acknowledged: done at once
        loop = asyncio.get_running_loop()
        assert not [h for h in getattr(loop, "_scheduled", []) if not h.cancelled()]  # no timer left behind
        pending = gt.register(2000, 5)
        gt.fail_all()
        assert pending.result() is False

    asyncio.run(scenario())
