"""The power-loss workload and the checks run on every crash state of it.

The workload drives a store over a :class:`~tests.fixtures.crash_sim.RecordingFileIO` on one
thread with a manual clock, so the recording (and the crash states drawn from it) is the same
on every run: single puts and batches to three queues with keys (index writes), commit log
segment rolls (small segments), consume queue file rolls (4 units a file), index file rolls,
periodic flushes of the commit log, of the queues and index and of the checkpoint, then a clean
close. It marks what the client was told: ``ack`` (SYNC_FLUSH: the first n messages were
answered after their flush) and ``flushed`` (ASYNC_FLUSH: the commit log is on disk up to an
offset); ``putting`` counts the messages whose put has started, ``put`` those it answered.

:func:`check_state` opens the store on one crash state and checks what a consumer can see.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from brokers.engine.broker.config import BrokerConfig
from brokers.engine.broker.consumer_offset_manager import ConsumerOffsetManager
from brokers.engine.broker.subscription_group_manager import SubscriptionGroupConfig, SubscriptionGroupManager
from brokers.engine.broker.topic_config_manager import TopicConfigManager
from brokers.engine.common.batch_body import encode_batch_body
from brokers.engine.common.clock import ManualClock
from brokers.engine.common.java_hash import tags_code
from brokers.engine.common.message import Message
from brokers.engine.common.message_codec import decode_record, decode_records
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.store import DefaultMessageStore, MessageExtBrokerInner, StoreConfig
from brokers.engine.store.config import ASYNC_FLUSH, SYNC_FLUSH
from brokers.engine.store.message_inner import MessageExtBatch
from brokers.engine.store.recovery import RecoveryReport
from tests.fixtures.crash_sim import RecordingFileIO
from tests.fixtures.crash_states import CrashState

QUEUES = (("TopicA", 0), ("TopicA", 1), ("TopicB", 0))
NEVER = 10**9  # ms: the flush threads never wake on their own; the workload flushes by hand
FOREVER = 2**62
START_MS = 1_700_000_000_000
TAGS = "T"


@dataclass(frozen=True, slots=True)
class Sent:
    seq: int  # global put order
    topic: str
    queue_id: int
    queue_offset: int
    phys: int
    size: int
    body: bytes
    uniq: str


@dataclass(frozen=True)
class Workload:
    mode: str
    config: StoreConfig
    sent: tuple[Sent, ...]
    by_queue: dict[tuple[str, int], tuple[Sent, ...]]
    metadata: dict[str, tuple[object, ...]]  # file -> every version written, in order


class Metadata:
    """The broker's metadata files beside the store (``<store>/config``), as the broker keeps
    them: consumer offsets, topics and subscription groups, each written atomically."""

    def __init__(self, store_dir: str, clock: ManualClock, file_io=None) -> None:
        config_dir = f"{store_dir}/config"
        kw = {} if file_io is None else {"file_io": file_io}
        broker = BrokerConfig(broker_name="broker-a", store=StoreConfig(store_dir=store_dir))
        self.offsets = ConsumerOffsetManager(config_dir, **kw)
        self.topics = TopicConfigManager(broker, config_dir, clock, **kw)
        self.groups = SubscriptionGroupManager(config_dir, clock, **kw)
        self.offsets.load()
        self.topics.load()  # writes the first topics.json (the system topics)
        self.groups.load()

    def view(self) -> dict[str, object]:
        """What a restarted broker would see of each file."""
        return {
            "offsets": self.offsets.encode()["offsetTable"],
            "topics": tuple(sorted(self.topics.topic_config_table)),
            "groups": tuple(sorted(self.groups.subscription_group_table)),
        }


def power_config(store_dir: str, mode: str) -> StoreConfig:
    return StoreConfig(
        store_dir=store_dir,
        flush_disk_type=mode,
        commitlog_file_size=2048,
        consume_queue_units_per_file=4,
        max_index_hash_slots=64,
        max_index_count=40,
        flush_interval_commitlog_ms=NEVER,
        flush_interval_consume_queue_ms=NEVER,
    )


def _body(seq: int) -> bytes:
    return b"m%04d:" % seq + bytes((seq * 7 + i) % 251 for i in range(40 + seq % 50))


def run_workload(rec: RecordingFileIO, mode: str, *, steps: int = 48, seed: int = 14) -> Workload:
    """Run the workload on ``rec`` (see the module docstring); return what was sent."""
    clock = ManualClock(START_MS)
    config = power_config(rec.root, mode)
    store = DefaultMessageStore(config, clock, file_io=rec)
    rng = random.Random(seed)
    sent: list[Sent] = []
    store.open()
    rec.mark("opened")
    meta = Metadata(rec.root, clock, rec)
    versions: dict[str, list[object]] = {k: [v] for k, v in meta.view().items()}
    rec.mark("meta-done", {k: 0 for k in versions})
    for step in range(steps):
        clock.advance(0.003)
        topic, queue_id = QUEUES[rng.randrange(len(QUEUES))]
        n = rng.choice((2, 3)) if rng.random() < 0.2 else 1
        seqs = range(len(sent), len(sent) + n)
        rec.mark("putting", len(sent) + n)
        uniqs = [f"U{s:05d}" for s in seqs]
        if n == 1:
            result = store.put_message_sync(
                MessageExtBrokerInner(
                    topic=topic,
                    queue_id=queue_id,
                    body=_body(seqs[0]),
                    properties={"TAGS": TAGS, "KEYS": f"k{seqs[0]}", "UNIQ_KEY": uniqs[0]},
                    born_timestamp=clock.now_ms(),
                    born_host="10.0.0.5:51000",
                )
            )
        else:
            entries = [
                Message(topic, _body(s), tags=TAGS, keys=f"k{s}", properties={"UNIQ_KEY": u})
                for s, u in zip(seqs, uniqs)
            ]
            result = store.put_messages_sync(
                MessageExtBatch(
                    topic,
                    queue_id,
                    encode_batch_body(entries),
                    born_timestamp=clock.now_ms(),
                    born_host="10.0.0.5:51000",
                )
            )
        assert result.ok, result
        phys = result.wrote_offset
        for i, (s, u) in enumerate(zip(seqs, uniqs)):
            msg = decode_record(store.look_message_by_offset(phys))
            assert msg.body == _body(s) and msg.queue_offset == result.queue_offset + i
            sent.append(Sent(s, topic, queue_id, msg.queue_offset, phys, msg.store_size, msg.body, u))
            phys += msg.store_size
        rec.mark("ack" if mode == SYNC_FLUSH else "put", len(sent))
        if mode == ASYNC_FLUSH and step % 3 == 2:
            store.commitlog.flush()
            rec.mark("flushed", store.commitlog.flushed_where)
        if step % 7 == 6:
            store.flush()  # queues, index and checkpoint too
            rec.mark("flushed", store.commitlog.flushed_where)
        if step % 4 == 3:
            _change_metadata(rec, meta, versions, step, sent[-1])
    store.close()
    rec.mark("closed", len(sent))
    by_queue = {q: tuple(s for s in sent if (s.topic, s.queue_id) == q) for q in QUEUES}
    return Workload(mode, config, tuple(sent), by_queue, {k: tuple(v) for k, v in versions.items()})


def _change_metadata(
    rec: RecordingFileIO, meta: Metadata, versions: dict[str, list[object]], step: int, last: Sent
) -> None:
    """Commit a consumer offset, create a topic or a group (one file each, in turn)."""
    which = ("offsets", "topics", "groups")[(step // 4) % 3]
    rec.mark("meta-begin", {which: len(versions[which])})
    if which == "offsets":
        meta.offsets.commit_offset("10.0.0.9", "g1", last.topic, last.queue_id, last.queue_offset + 1)
        meta.offsets.persist()
    elif which == "topics":
        meta.topics.update_topic_config(TopicConfig(f"Topic{step}", 4, 4))
    else:
        meta.groups.update_subscription_group_config(SubscriptionGroupConfig(f"Group{step}"))
    versions[which].append(meta.view()[which])
    rec.mark("meta-done", {which: len(versions[which]) - 1})


def _check_metadata(state: CrashState, work: Workload, dest: str, fail) -> None:
    """Each file holds a whole version: the last one written or one being written at the cut."""
    begun: dict[str, int] = {}
    done: dict[str, int] = {}
    for label, value in state.marks:
        if label in ("meta-begin", "meta-done"):
            (begun if label == "meta-begin" else done).update(value)
    seen = Metadata(dest, ManualClock(START_MS)).view()
    for name, versions in work.metadata.items():
        lo = done.get(name, 0)  # version 0 is what a broker sees with no file at all
        hi = max(begun.get(name, 0), lo)
        allowed = versions[lo : hi + 1]
        if seen[name] not in allowed:
            raise fail(
                f"metadata {name}: a restart sees {seen[name]!r}, not one of the versions "
                f"{lo}..{hi} written around the cut"
            )


def _last(state: CrashState, label: str, default: int = 0) -> int:
    values = [v for lab, v in state.marks if lab == label]
    return values[-1] if values else default


def _data_past(state: CrashState, end: int, segment_size: int) -> bool:
    """Whether the state's commit log holds any non-zero byte at or past physical ``end``."""
    for name, data in state.files.items():
        if not name.startswith("commitlog/") or not name[10:].isdigit():
            continue
        start = int(name[10:])
        if start + segment_size <= end:
            continue
        if data[max(0, end - start) :].strip(b"\0"):
            return True
    return False


def _pull_all(store: DefaultMessageStore, topic: str, queue_id: int) -> list[bytes]:
    """Every body a consumer pulls from offset 0 (pulls stop at consume queue file ends)."""
    out: list[bytes] = []
    offset = 0
    for _ in range(1000):
        r = store.get_message("g", topic, queue_id, offset, 64, max_total_bytes=1 << 20)
        if r.next_begin_offset <= offset:
            return out
        out += [m.body for m in decode_records(b"".join(r.records))]
        offset = r.next_begin_offset
    raise AssertionError(f"{topic}-{queue_id}: pulls never reach the end")


class StateCheckError(AssertionError):
    pass


@dataclass(frozen=True, slots=True)
class Outcome:
    report: RecoveryReport
    present: int  # messages a consumer sees after recovery
    issued: int  # messages whose put had started before the cut
    index_misses: tuple[str, ...]  # keys of present messages a key lookup does not find


def check_state(state: CrashState, work: Workload, dest: str) -> Outcome:
    """Open the store on ``state`` (materialised at ``dest``), check it, return what was found."""

    def fail(what: str) -> StateCheckError:
        return StateCheckError(f"{work.mode}: {what}\n  state: {state.describe()}")

    state.materialize(dest)
    issued = _last(state, "putting")
    # Messages the client may count on: SYNC_FLUSH, the acknowledged ones; ASYNC_FLUSH, the ones
    # the commit log had flushed (a clean close flushes everything).
    if work.mode == SYNC_FLUSH:
        must = _last(state, "ack")
    else:
        flushed = _last(state, "flushed")
        must = sum(1 for s in work.sent if s.phys + s.size <= flushed)
    if _last(state, "closed"):
        must = len(work.sent)
    had_data_past = None
    store = DefaultMessageStore(replace(work.config, store_dir=dest), ManualClock(START_MS + 3_600_000))
    try:
        store.open()
    except Exception as exc:
        raise fail(f"the store does not open: {exc!r}") from exc
    try:
        report = store.recovery_report
        tag = tags_code(TAGS)
        present: set[int] = set()
        for (topic, queue_id), expected in work.by_queue.items():
            lo = store.get_min_offset_in_queue(topic, queue_id)
            hi = store.get_max_offset_in_queue(topic, queue_id)
            if lo != 0 or hi > len(expected):
                raise fail(f"{topic}-{queue_id}: offsets [{lo}, {hi}) but {len(expected)} were sent")
            cq = store.consume_queue(topic, queue_id, create=False)
            for off in range(lo, hi):
                s = expected[off]
                unit = cq.get_unit(off) if cq is not None else None
                if unit != (s.phys, s.size, tag):
                    raise fail(f"{topic}-{queue_id} unit {off} is {unit}, expected ({s.phys}, {s.size}, {tag})")
                record = store.look_message_by_offset(s.phys)
                msg = decode_record(record) if record is not None else None
                if msg is None or (msg.body, msg.queue_offset, msg.topic, msg.queue_id, msg.uniq_key) != (
                    s.body,
                    off,
                    topic,
                    queue_id,
                    s.uniq,
                ):
                    raise fail(f"{topic}-{queue_id} unit {off} points at {msg!r}, not message {s.seq}")
                present.add(s.seq)
            bodies = _pull_all(store, topic, queue_id)
            if bodies != [s.body for s in expected[:hi]]:
                raise fail(f"{topic}-{queue_id}: a pull returned {len(bodies)} bodies, not the first {hi} sent")
        count = len(present)
        if present != set(range(count)):
            raise fail(
                f"present messages are not a prefix of the puts: missing "
                f"{sorted(set(range(max(present) + 1)) - present)[:5]}"
            )
        if count < must:
            lost = work.sent[count]
            raise fail(
                f"{must - count} message(s) the client counted on are gone, the first is "
                f"{lost.seq} ({lost.topic}-{lost.queue_id} at physical {lost.phys})"
            )
        if count > issued:
            raise fail(f"{count} messages present but only {issued} were put")
        end = report.end_offset
        if count and end < work.sent[count - 1].phys + work.sent[count - 1].size:
            raise fail(f"recovered end {end} is before the last present message")
        if count < len(work.sent) and end > work.sent[count].phys:
            raise fail(f"recovered end {end} is past lost message {count} at {work.sent[count].phys}")
        had_data_past = _data_past(state, end, work.config.commitlog_file_size)
        if had_data_past and not (report.torn_tail and report.bytes_cleared > 0):
            raise fail(f"bytes past the recovered end {end} were cut but the report says {report}")
        misses = []
        for s in [*work.sent[max(0, count - 3) : count], *work.sent[count : count + 2]]:
            for key in (s.uniq, f"k{s.seq}"):
                got = [decode_record(r).body for r in store.query_message(s.topic, key, 8, 0, FOREVER)]
                if s.seq < count and not got:
                    misses.append(f"{key} (message {s.seq})")
                elif got != ([s.body] if s.seq < count else []):
                    raise fail(f"key {key} of message {s.seq} finds {len(got)} record(s), not its own")
        topic, queue_id = QUEUES[state.crash_at % len(QUEUES)]
        hi = store.get_max_offset_in_queue(topic, queue_id)
        after = store.put_message_sync(
            MessageExtBrokerInner(topic=topic, queue_id=queue_id, body=b"after the crash", born_host="10.0.0.5:1")
        )
        if not after.ok or after.queue_offset != hi:
            raise fail(f"a put after recovery answered {after}, expected queue offset {hi}")
        _check_metadata(state, work, dest, fail)
        return Outcome(report, count, issued, tuple(misses))
    finally:
        store.close()
