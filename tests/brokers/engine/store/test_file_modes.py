"""The store's files are private to the broker's user whatever the umask: files 0600 and
directories 0700 (commit log, consume queues, index, checkpoint, lock, abort, queue ends)."""

from __future__ import annotations

import os
import stat

from tests.brokers.engine.store._support import inner


def test_store_files_are_0600_and_directories_0700_under_a_permissive_umask(open_store, tmp_path):
    old = os.umask(0o022)
    try:
        store = open_store()
        assert store.put_message_sync(inner(keys="k1")).ok
        store.flush()
        store.close()
        store = open_store()  # a clean reopen writes the ends file, the abort file again
    finally:
        os.umask(old)
    kinds = set()
    for root, dirs, files in os.walk(tmp_path / "store"):
        for d in dirs:
            assert stat.S_IMODE(os.stat(os.path.join(root, d)).st_mode) == 0o700, os.path.join(root, d)
        for f in files:
            assert stat.S_IMODE(os.stat(os.path.join(root, f)).st_mode) == 0o600, os.path.join(root, f)
            kinds.add(os.path.basename(root) if f.isdigit() else f)
    assert stat.S_IMODE(os.stat(tmp_path / "store").st_mode) == 0o700
    assert {"commitlog", "checkpoint", "lock", "abort"} <= kinds and any(k.isdigit() or k == "0" for k in kinds)
    store.close()
