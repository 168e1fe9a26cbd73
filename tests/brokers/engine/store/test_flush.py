"""Flushing: SYNC_FLUSH group commit shares fdatasync calls; ASYNC_FLUSH flushes in the background."""

from __future__ import annotations

import asyncio
import errno
import threading
import time

from brokers.engine.store import PutMessageStatus
from brokers.engine.store.checkpoint import StoreCheckpoint
from tests.brokers.engine.store._support import bodies, crash, inner


def test_group_commit_shares_fdatasync_and_answers_after_the_flush(open_store):
    store = open_store(flush_disk_type="SYNC_FLUSH", commitlog_file_size=1 << 20, flush_interval_commitlog_ms=10_000)
    service = store.flush_service
    flushed_when_answered = []

    async def produce(i):
        result = await store.put_message(inner(queue_id=i % 4, body=b"m%d" % i))
        # the record must already be on disk when the producer hears about it
        flushed_when_answered.append((store.commitlog.flushed_where, result.wrote_offset + result.wrote_bytes))
        return result

    async def main():
        return await asyncio.gather(*(produce(i) for i in range(200)))

    syncs_before = service.fsync_count
    results = asyncio.run(main())
    assert all(r.status is PutMessageStatus.PUT_OK for r in results)
    assert all(flushed >= end for flushed, end in flushed_when_answered)
    syncs = service.fsync_count - syncs_before
    assert 1 <= syncs <= 50, syncs  # 200 concurrent producers share a few group commits
    assert service.requests_completed >= 200
    assert len({r.wrote_offset for r in results}) == 200


def test_sync_puts_from_threads_share_flushes(open_store):
    store = open_store(flush_disk_type="SYNC_FLUSH", commitlog_file_size=1 << 20, flush_interval_commitlog_ms=10_000)
    results = []
    barrier = threading.Barrier(8)

    def worker(n):
        barrier.wait()
        for i in range(25):
            r = store.put_message_sync(inner(queue_id=n, body=b"x"))
            assert store.commitlog.flushed_where >= r.wrote_offset + r.wrote_bytes
            results.append(r)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 200 and all(r.ok for r in results)
    assert store.flush_service.fsync_count < 200
    assert [store.get_max_offset_in_queue("TopicTest", n) for n in range(8)] == [25] * 8


def test_wait_false_does_not_wait_for_the_flush(open_store):
    store = open_store(flush_disk_type="SYNC_FLUSH", flush_interval_commitlog_ms=10_000)
    msg = inner()
    msg.wait_store_msg_ok = False
    assert store.put_message_sync(msg).ok
    assert store.flush_service.requests_completed == 0


def test_async_flush_reaches_disk_and_checkpoint_in_the_background(open_store, clock):
    store = open_store(flush_interval_commitlog_ms=20, flush_interval_consume_queue_ms=20)
    r = asyncio.run(store.put_message(inner()))
    assert r.ok
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and store.commitlog.flushed_where < r.wrote_offset + r.wrote_bytes:
        time.sleep(0.01)
    assert store.commitlog.flushed_where == r.wrote_offset + r.wrote_bytes
    assert store.flush_service.fsync_count >= 1
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        cp = StoreCheckpoint(store.config.checkpoint_path)
        stamps = (cp.physic_msg_timestamp, cp.logics_msg_timestamp, cp.index_msg_timestamp)
        cp.close()
        if stamps == (clock.now_ms(),) * 3:
            break
        time.sleep(0.01)
    assert stamps == (clock.now_ms(),) * 3


def test_sync_flush_batches_wait_for_their_flush(open_store):
    from brokers.engine.common.message import Message
    from brokers.engine.common.message_codec import encode_batch_body
    from brokers.engine.store import MessageExtBatch

    store = open_store(flush_disk_type="SYNC_FLUSH", flush_interval_commitlog_ms=10_000)
    body = encode_batch_body([Message("TopicTest", b"x%d" % i) for i in range(10)])
    r = asyncio.run(store.put_messages(MessageExtBatch("TopicTest", 0, body)))
    assert r.ok and r.msg_num == 10
    assert store.commitlog.flushed_where >= r.wrote_offset + r.wrote_bytes


# A flush interval no test outlives: only the open itself may have synced what recovery re-checked.
NEVER_MS = 600_000


def _crashed_with(open_store, n: int, **config) -> list[bytes]:
    store = open_store(commitlog_file_size=1 << 16, flush_interval_commitlog_ms=NEVER_MS, **config)
    written = [b"%04d" % i + bytes(2000) for i in range(n)]
    for body in written:
        assert store.put_message_sync(inner(body=body)).ok
    crash(store)
    return written


def test_after_a_crash_a_sync_flush_store_opens_with_everything_recovered_on_disk(open_store):
    written = _crashed_with(open_store, 80, flush_disk_type="SYNC_FLUSH")  # ~160 KB over three segments
    store = open_store(flush_disk_type="SYNC_FLUSH", commitlog_file_size=1 << 16, flush_interval_commitlog_ms=NEVER_MS)
    report = store.recovery_report
    assert report.abnormal and report.scan_from < report.end_offset == store.max_phy_offset
    assert store.commitlog.flushed_where == store.max_phy_offset
    assert store.runtime_info()["remainHowManyDataToFlush"] == "0"
    assert store.flush_service.fsync_count >= 1  # synced, not merely declared flushed
    assert bodies(store) == written


def test_after_a_crash_an_async_flush_store_reports_the_rechecked_range_until_its_first_flush(open_store):
    _crashed_with(open_store, 80, flush_disk_type="ASYNC_FLUSH")
    store = open_store(flush_disk_type="ASYNC_FLUSH", commitlog_file_size=1 << 16, flush_interval_commitlog_ms=NEVER_MS)
    report = store.recovery_report
    assert report.abnormal
    assert store.runtime_info()["remainHowManyDataToFlush"] == str(report.end_offset - report.scan_from)
    store.flush()
    assert store.runtime_info()["remainHowManyDataToFlush"] == "0"


def test_a_failed_sync_of_the_recovered_range_opens_the_store_unwritable_and_readable(open_store, faulty_io):
    written = _crashed_with(open_store, 40, flush_disk_type="SYNC_FLUSH")
    faulty_io.fail("sync", errno.EIO, path="commitlog")
    store = open_store(
        file_io=faulty_io,
        flush_disk_type="SYNC_FLUSH",
        commitlog_file_size=1 << 16,
        flush_interval_commitlog_ms=NEVER_MS,
    )
    info = store.runtime_info()
    assert info["storeWritable"].startswith("false: fdatasync of ") and info["remainHowManyDataToFlush"] != "0"
    assert store.put_message_sync(inner(body=b"refused")).status is PutMessageStatus.SERVICE_NOT_AVAILABLE
    assert bodies(store) == written
