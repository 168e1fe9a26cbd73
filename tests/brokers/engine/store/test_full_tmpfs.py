"""A real small filesystem (tmpfs) filled from outside while the store runs: no SIGBUS, ever.

For each kind of store file (commit log, consume queue, index, checkpoint) the disk is filled by
another writer at the moment the store needs new space in that kind of file. The store must
answer the put with an error (a SIGBUS would kill this test process), serve reads, take puts
again once the space is freed, and a reopen must recover everything acknowledged.

Needs root to mount a tmpfs; skipped with the reason otherwise.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from brokers.engine.store import DefaultMessageStore, PutMessageStatus
from tests.fixtures.disk_volume import fill_disk
from tests.brokers.engine.store._support import bodies, inner, make_config

TMPFS_BYTES = 8 << 20


@pytest.fixture
def tmpfs(tmp_path):
    mount_point = tmp_path / "vol"
    mount_point.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_BYTES}", "tmpfs", str(mount_point)], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip(
            f"cannot mount a tmpfs here ({done.stderr.strip() or done.returncode}); the injected-fault "
            "tests in test_faults.py cover the same paths"
        )
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], capture_output=True)


@pytest.mark.parametrize("kind", ["commitlog", "consumequeue", "index", "checkpoint"])
def test_a_disk_filled_from_outside_gives_an_error_answer_not_a_dead_store(tmpfs, kind):
    config = make_config(
        tmpfs / "store",
        commitlog_file_size=256 << 10,
        consume_queue_units_per_file=1024,
        max_index_hash_slots=64,
        max_index_count=40,
    )
    store = DefaultMessageStore(config)
    store.open()
    acked: dict[int, list[bytes]] = {0: [], 1: []}

    def put(i: int, queue_id: int = 0, size: int = 100):
        body = f"{kind}-{i}-".encode().ljust(size, b".")
        r = store.put_message_sync(inner(queue_id=queue_id, body=body, keys=f"k{i}"))
        if r.ok:
            acked[queue_id].append(body)
        return r

    for i in range(10):
        assert put(i).ok
    filler = fill_disk(tmpfs)
    refused = None
    if kind == "commitlog":  # bodies of 4 KiB: the segment fills, the roll needs a new one
        results = [put(100 + i, size=4096) for i in range(80)]
        refused = next((r for r in results if not r.ok), None)
    elif kind == "consumequeue":  # a queue without a file yet
        refused = put(200, queue_id=1)
    elif kind == "index":  # 40 items per index file: the next file needs its blocks
        results = [put(300 + i) for i in range(60)]
        refused = next((r for r in results if not r.ok), None)
    else:  # the checkpoint's block was allocated at open: writing it on a full disk works
        store.flush()
        assert store.runtime_info()["storeWritable"] == "true"
    if kind != "checkpoint":
        assert refused is not None and refused.status is PutMessageStatus.CREATE_MAPED_FILE_FAILED
    assert bodies(store) == acked[0]  # reads go on
    os.unlink(filler)
    assert put(900).ok and put(901, queue_id=1).ok  # space is back: puts succeed
    store.close()
    store = DefaultMessageStore(config)
    store.open()
    try:
        assert bodies(store) == acked[0]
        assert bodies(store, queue_id=1) == acked[1]
    finally:
        store.close()
