"""The power-cut simulator itself (tests/fixtures/crash_sim.py): it must produce the states a cut
can leave (and catch a writer that is not crash-safe), or the store's power-loss tests prove nothing."""

from __future__ import annotations

import os

from brokers.engine.store.file_io import write_file_atomically
from tests.fixtures.crash_states import crash_states


def test_an_atomic_replace_leaves_the_old_or_the_new_content(crash_recorder, tmp_path):
    rec = crash_recorder()
    path = os.path.join(rec.root, "config", "offsets.json")
    os.makedirs(os.path.dirname(path))
    versions = [(b"v%d " % i) * (100 + 700 * i) for i in range(6)]  # some span several blocks
    for i, data in enumerate(versions):
        rec.mark("begin", i)
        write_file_atomically(rec, path, data)
        rec.mark("done", i)
    states = list(crash_states(rec, 400))
    assert len(states) >= 100  # every distinct state there is (the space is small)
    for n, state in enumerate(states):
        marks = dict(state.marks)  # the last value of each label
        content = state.files.get("config/offsets.json")
        if "done" in marks:
            allowed = versions[marks["done"] : marks.get("begin", -1) + 1]
            assert content in allowed, state.describe()
        else:
            assert content in (None, versions[0]), state.describe()
        state.materialize(str(tmp_path / f"s{n}"))  # materialising works for every state
        assert os.path.isdir(tmp_path / f"s{n}" / "config")


def test_an_in_place_rewrite_is_caught_torn(crash_recorder):
    rec = crash_recorder()
    handle = rec.open(os.path.join(rec.root, "meta"), create=True)
    handle.pwrite(b"A" * 6000, 0)
    handle.sync()
    rec.sync_dir(rec.root)
    rec.mark("synced")
    handle.pwrite(b"B" * 6000, 0)  # not crash-safe: no temp file, no rename
    handle.sync()
    seen = {state.files["meta"] for state in crash_states(rec, 200) if state.marks}
    assert b"A" * 6000 in seen and b"B" * 6000 in seen
    torn = [c for c in seen if c not in (b"A" * 6000, b"B" * 6000)]
    assert torn, "the simulator never tore the in-place write"
    assert any(c.startswith(b"B") and c.endswith(b"A") for c in torn)  # a write cut inside
    assert any(c.startswith(b"A") and c.endswith(b"B") for c in torn)  # blocks out of order


def test_synced_appends_survive_and_unsynced_ones_may_not(crash_recorder):
    rec = crash_recorder()
    handle = rec.open(os.path.join(rec.root, "log"), create=True)
    rec.sync_dir(rec.root)
    records = [bytes([65 + i]) * (500 + 300 * i) for i in range(10)]
    pos = 0
    for i, data in enumerate(records):
        handle.pwrite(data, pos)
        pos += len(data)
        if i % 3 == 2:
            handle.sync()
            rec.mark("synced", pos)
    lost_some = kept_unsynced = False
    for state in crash_states(rec, 500):
        content = state.files.get("log", b"")
        synced = max((v for label, v in state.marks if label == "synced"), default=0)
        assert content[:synced] == b"".join(records)[:synced], state.describe()
        lost_some |= len(content) < pos and state.crash_at == len(rec.ops)
        kept_unsynced |= len(content.rstrip(b"\0")) > synced
    assert lost_some and kept_unsynced


def test_a_file_whose_directory_was_not_synced_may_vanish(crash_recorder):
    rec = crash_recorder()
    handle = rec.open(os.path.join(rec.root, "new"), create=True)
    handle.pwrite(b"x" * 10, 0)
    handle.sync()
    states = list(crash_states(rec, 50))
    assert any("new" not in s.files for s in states if s.crash_at == len(rec.ops))
    rec.sync_dir(rec.root)
    assert all("new" in s.files for s in crash_states(rec, 50) if s.crash_at == len(rec.ops))
