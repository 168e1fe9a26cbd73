"""Power loss: the store recovers from every file state a power cut can leave.

One deterministic workload per flush mode is recorded through the crash simulator
(tests/fixtures/crash_sim.py); at least 1,000 distinct crash states of each are materialised,
opened and checked (``_power_loss.check_state``): with SYNC_FLUSH every acknowledged message is
there and intact; with ASYNC_FLUSH everything the commit log had flushed is; in both nothing
corrupt is visible (every consume queue unit points at the record it names, pulls and key
lookups return only whole messages that were sent, the survivors are a prefix of the puts) and
recovery reports what it cut. The numbers are printed (``-s``).
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field

import pytest

from brokers.engine.common.clock import ManualClock
from brokers.engine.common.message_codec import decode_records
from brokers.engine.store import DefaultMessageStore, MessageExtBrokerInner
from brokers.engine.store.config import ASYNC_FLUSH, SYNC_FLUSH
from brokers.engine.store.mapped_file import offset_to_file_name
from tests.brokers.engine.store._power_loss import START_MS, StateCheckError, check_state, power_config, run_workload
from tests.brokers.engine.store._support import crash
from tests.fixtures.crash_sim import RecordingFileIO
from tests.fixtures.crash_states import crash_states

STATES_PER_MODE = 2500  # at least 1,000 per mode are asked for; the sweep takes a few seconds
SEED = 14


@dataclass
class Sweep:
    """What the crash states of one flush mode showed."""

    mode: str
    operations: int = 0
    messages: int = 0
    writes_by_kind: Counter = field(default_factory=Counter)
    segments: int = 0
    checked: int = 0
    torn_tails: int = 0
    bytes_cleared: int = 0
    units_rebuilt: int = 0
    lossy_states: int = 0
    max_lost: int = 0
    failures: list[str] = field(default_factory=list)
    index_misses: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"power loss {self.mode}: {self.checked} crash states checked over {self.operations} recorded "
            f"operations ({self.messages} messages, {self.segments} commit log segments, writes per file kind "
            f"{dict(self.writes_by_kind)}); {self.torn_tails} torn tails cut ({self.bytes_cleared} bytes cleared), "
            f"{self.units_rebuilt} consume queue units rebuilt or repaired, {self.lossy_states} states lost "
            f"unacknowledged/unflushed messages (at most {self.max_lost}); {len(self.failures)} failures, "
            f"{len(self.index_misses)} states with a key lookup missing a present message"
        )


def _writes_by_kind(rec) -> Counter:
    """Which kinds of store file the recording wrote to (and how often)."""
    inode_names: dict[int, str] = {}
    for op in rec.ops:
        if op.kind in ("create", "replace"):
            inode_names[op.inode] = op.dst or op.path
    kinds: Counter = Counter()
    for op in rec.ops:
        if op.kind == "write":
            name = inode_names.get(op.inode, "?")
            kinds[name.split(os.sep)[0]] += 1
    return kinds


def _sweep(mode: str, live: str, scratch: str) -> Sweep:
    rec = RecordingFileIO(live)
    work = run_workload(rec, mode)
    assert not rec.untracked, f"files written behind the seam: {rec.untracked}"
    sweep = Sweep(mode, len(rec.ops), len(work.sent), _writes_by_kind(rec))
    sweep.segments = len({op.path for op in rec.ops if op.kind == "create" and op.path.startswith("commitlog")})
    logger = logging.getLogger("brokers.engine.store")
    level = logger.level
    logger.setLevel(logging.ERROR)  # recovery warns about every torn tail it cuts
    try:
        for state in crash_states(rec, STATES_PER_MODE, seed=SEED):
            dest = os.path.join(scratch, f"{mode}-{sweep.checked}")
            try:
                outcome = check_state(state, work, dest)
            except StateCheckError as exc:
                sweep.failures.append(str(exc))
            else:
                report = outcome.report
                sweep.torn_tails += report.torn_tail
                sweep.bytes_cleared += report.bytes_cleared
                sweep.units_rebuilt += report.consume_queue_units_rebuilt
                lost = outcome.issued - outcome.present
                sweep.lossy_states += lost > 0
                sweep.max_lost = max(sweep.max_lost, lost)
                if outcome.index_misses:
                    sweep.index_misses.append(f"{', '.join(outcome.index_misses)}\n  state: {state.describe()}")
            finally:
                shutil.rmtree(dest, ignore_errors=True)
            sweep.checked += 1
    finally:
        logger.setLevel(level)
    return sweep


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory):
    """Run each mode's sweep once for the tests of this module (tmpfs for the states when the
    machine has one: thousands of small files)."""
    base = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    scratch = tempfile.mkdtemp(prefix="gantry-powerloss-", dir=base or str(tmp_path_factory.mktemp("states")))
    cache: dict[str, Sweep] = {}

    def get(mode: str) -> Sweep:
        if mode not in cache:
            cache[mode] = _sweep(mode, str(tmp_path_factory.mktemp(f"live-{mode}")), scratch)
            print("\n" + cache[mode].summary())
        return cache[mode]

    yield get
    shutil.rmtree(scratch, ignore_errors=True)


@pytest.mark.parametrize("mode", [SYNC_FLUSH, ASYNC_FLUSH])
def test_every_power_cut_state_recovers(mode, sweeps):
    sweep = sweeps(mode)
    for kind in ("commitlog", "consumequeue", "index", "checkpoint", "config"):
        assert sweep.writes_by_kind[kind], f"the workload wrote no {kind} file: {sweep.writes_by_kind}"
    assert sweep.segments >= 3, "the workload must roll commit log segments"
    assert sweep.checked >= 1000
    assert sweep.torn_tails and sweep.lossy_states, "the states must include torn and lost tails"
    assert not sweep.failures, (
        f"{len(sweep.failures)} of {sweep.checked} crash states failed; the first ones:\n"
        + "\n".join(sweep.failures[:5])
    )


@pytest.mark.parametrize("mode", [SYNC_FLUSH, ASYNC_FLUSH])
def test_no_power_cut_state_loses_an_index_entry(mode, sweeps):
    sweep = sweeps(mode)
    assert not sweep.index_misses, (
        f"{len(sweep.index_misses)} of {sweep.checked} states; the first ones:\n" + "\n".join(sweep.index_misses[:3])
    )


def test_a_lost_end_of_segment_marker_is_a_torn_tail_not_corruption(tmp_path):
    """The power cut the sweep found first: a segment's end-of-file marker did not reach the disk
    while the next segment's first record did. Recovery cuts the log at the marker (the record
    after it was never flushed) instead of refusing to start."""
    clock = ManualClock(START_MS)
    config = power_config(str(tmp_path / "store"), ASYNC_FLUSH)
    store = DefaultMessageStore(config, clock)
    store.open()
    results = []
    while len(store.commitlog.files) < 2:
        clock.advance(0.01)
        results.append(
            store.put_message_sync(
                MessageExtBrokerInner(topic="TopicA", queue_id=0, body=b"x" * 100, born_host="10.0.0.5:1")
            )
        )
        if len(results) == 3:
            store.flush()  # the checkpoint vouches for the first three
    crash(store)
    in_first = [r for r in results if r.wrote_offset < config.commitlog_file_size]
    marker_at = in_first[-1].wrote_offset + in_first[-1].wrote_bytes
    segment = os.path.join(config.commitlog_dir, offset_to_file_name(0))
    with open(segment, "r+b") as f:  # the marker's block is lost: zeros
        f.seek(marker_at)
        f.write(bytes(config.commitlog_file_size - marker_at))
    with DefaultMessageStore(config, ManualClock(START_MS + 60_000)) as reopened:
        report = reopened.recovery_report
        assert report.torn_tail and report.end_offset == marker_at
        assert reopened.get_max_offset_in_queue("TopicA", 0) == len(in_first)
        assert [len(reopened.commitlog.files)] == [1]


def test_a_lost_consume_queue_unit_before_later_ones_is_repaired(tmp_path):
    """A unit whose block did not reach the disk while the next consume queue file's did: after
    the crash recovery rewrites it from its record instead of leaving a hole consumers read."""
    clock = ManualClock(START_MS)
    config = power_config(str(tmp_path / "store"), ASYNC_FLUSH)
    store = DefaultMessageStore(config, clock)
    store.open()
    for i in range(6):  # units 0-3 in the first file (4 units a file), 4-5 in the second
        clock.advance(0.01)
        store.put_message_sync(
            MessageExtBrokerInner(
                topic="TopicA", queue_id=0, body=b"m%d" % i, properties={"TAGS": "T"}, born_host="10.0.0.5:1"
            )
        )
    crash(store)
    first = os.path.join(config.consume_queue_dir, "TopicA", "0", offset_to_file_name(0))
    with open(first, "r+b") as f:
        f.seek(3 * 20)
        f.write(bytes(20))
    with DefaultMessageStore(config, ManualClock(START_MS + 60_000)) as reopened:
        assert reopened.recovery_report.consume_queue_units_rebuilt >= 1
        got = reopened.get_message("g", "TopicA", 0, 0, 32)
        assert [m.body for m in decode_records(b"".join(got.records))] == [b"m0", b"m1", b"m2", b"m3"]
        assert reopened.consume_queue("TopicA", 0, create=False).get_unit(3)[1] > 0
