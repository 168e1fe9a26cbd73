"""A full disk (ENOSPC) and a failing fdatasync (EIO), injected through the store's file seam.

ENOSPC: the put answers an error, nothing is half-visible (the commit log end does not move, no
consume queue unit points past it), reads go on, and once space returns the next record goes at
the same offset; a reopen recovers everything acknowledged. EIO from fdatasync: every waiting
SYNC_FLUSH put fails, the flushed position stays, the store refuses writes until reopened
(``storeWritable``), reads go on, and the reopen recovers to the last good flush.
"""

from __future__ import annotations

import asyncio
import errno
import os

import pytest

from brokers.engine.store import PutMessageStatus
from tests.brokers.engine.store._support import bodies, inner


def _fill(store, n, **kw):
    results = [store.put_message_sync(inner(body=f"m{i}".encode(), **kw)) for i in range(n)]
    assert all(r.ok for r in results)
    return [f"m{i}".encode() for i in range(n)]


@pytest.mark.parametrize("where", ["commitlog", "consumequeue", "index"])
def test_enospc_answers_an_error_leaves_nothing_half_visible_and_the_next_put_takes_the_same_offset(
    open_store, faulty_io, where
):
    store = open_store(file_io=faulty_io, commitlog_file_size=4096, consume_queue_units_per_file=16, max_index_count=8)
    acked = _fill(store, 5, uniq="K")
    end = store.max_phy_offset
    queue_end = store.get_max_offset_in_queue("TopicTest", 0)
    faulty_io.fail("allocate", errno.ENOSPC, path=where)  # where a full disk shows: blocks allocated ahead
    if where == "commitlog":  # and a filesystem that allocates on write (copy-on-write, quota)
        faulty_io.fail("pwrite", errno.ENOSPC, path=where)
    refused = 0
    for i in range(40):  # until the store needs new space in that kind of file
        r = store.put_message_sync(inner(body=f"x{i}".encode(), uniq=f"U{i}"))
        if not r.ok:
            assert r.status is PutMessageStatus.CREATE_MAPED_FILE_FAILED
            assert store.max_phy_offset == end  # nothing of the refused record is visible
            assert store.get_max_offset_in_queue("TopicTest", 0) == queue_end
            refused += 1
            break
        acked.append(f"x{i}".encode())
        end = store.max_phy_offset
        queue_end = store.get_max_offset_in_queue("TopicTest", 0)
    assert refused and faulty_io.raised
    assert bodies(store) == acked  # reads go on
    assert store.runtime_info()["storeWritable"] == "true"
    faulty_io.heal()
    r = store.put_message_sync(inner(body=b"after", uniq="after"))
    assert r.ok and r.wrote_offset == end
    acked.append(b"after")
    assert bodies(store) == acked
    store.close()
    store = open_store()
    assert bodies(store) == acked
    assert store.query_message("TopicTest", "after", 4, 0, 1 << 62)


def test_enospc_when_the_commit_log_rolls_keeps_the_old_end(open_store, faulty_io):
    store = open_store(file_io=faulty_io, commitlog_file_size=1024)
    acked = _fill(store, 1)
    segments = lambda: sorted(os.listdir(store.config.commitlog_dir))  # noqa: E731
    first = segments()
    faulty_io.fail("open", errno.ENOSPC, path="commitlog")
    for i in range(40):
        r = store.put_message_sync(inner(body=f"r{i}".encode()))
        if not r.ok:
            assert r.status is PutMessageStatus.CREATE_MAPED_FILE_FAILED
            break
        acked.append(f"r{i}".encode())
    else:
        pytest.fail("the segment never rolled")
    end = store.max_phy_offset
    assert segments() == first and end < store.config.commitlog_file_size  # no blank marker claimed the rest
    faulty_io.heal()
    r = store.put_message_sync(inner(body=b"rolled"))
    assert r.ok and r.wrote_offset == store.config.commitlog_file_size
    assert bodies(store) == acked + [b"rolled"]


def test_eio_from_fdatasync_fails_waiting_sync_flush_puts_and_latches_until_reopen(open_store, faulty_io):
    store = open_store(file_io=faulty_io, flush_disk_type="SYNC_FLUSH", commitlog_file_size=1 << 16)
    acked = _fill(store, 3)
    flushed = store.commitlog.flushed_where
    assert flushed == store.max_phy_offset
    faulty_io.fail("sync", errno.EIO, path="commitlog")

    async def puts():
        return await asyncio.gather(*(store.put_message(inner(body=f"w{i}".encode())) for i in range(4)))

    results = asyncio.run(puts())
    assert [r.status for r in results] == [PutMessageStatus.UNKNOWN_ERROR] * 4  # none acknowledged
    assert store.commitlog.flushed_where == flushed
    info = store.runtime_info()
    assert info["storeWritable"].startswith("false: fdatasync of ") and "Input/output error" in info["storeWritable"]
    faulty_io.heal()  # a later sync may "succeed" on lost pages: the store still refuses
    assert store.put_message_sync(inner(body=b"no")).status is PutMessageStatus.SERVICE_NOT_AVAILABLE
    assert store.commitlog.flushed_where == flushed
    assert bodies(store)[:3] == acked  # reads go on
    store.close()
    assert os.path.exists(store.config.abort_path)  # the reopen recovers
    # What the kernel may have dropped after the failed sync: the bytes past the last good flush.
    segment = os.path.join(store.config.commitlog_dir, f"{0:020d}")
    with open(segment, "r+b") as f:
        f.seek(flushed)
        f.write(bytes(store.config.commitlog_file_size - flushed))
    store = open_store(flush_disk_type="SYNC_FLUSH", commitlog_file_size=1 << 16)
    assert store.recovery_report.abnormal and store.max_phy_offset == flushed
    assert store.runtime_info()["storeWritable"] == "true"
    assert bodies(store) == acked
    assert store.put_message_sync(inner(body=b"again")).ok


def test_eio_from_a_consume_queue_sync_stops_writes_and_the_checkpoint(open_store, faulty_io):
    store = open_store(file_io=faulty_io)
    _fill(store, 3)
    faulty_io.fail("sync", errno.EIO, path="consumequeue")
    with pytest.raises(OSError):
        store.flush()
    assert store.runtime_info()["storeWritable"].startswith("false: consume queue or index flush failed")
    assert store.put_message_sync(inner()).status is PutMessageStatus.SERVICE_NOT_AVAILABLE
    assert len(bodies(store)) == 3
