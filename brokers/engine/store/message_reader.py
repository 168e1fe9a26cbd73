"""The store's read side: pulls through a consume queue, store times, search by time and key.

Functions over the store's parts (commit log, one consume queue, the index) so the facade stays
a thin dispatcher. ``read_queue`` follows RocketMQ's ``DefaultMessageStore.getMessage`` on a
master: the same statuses and ``next_begin_offset`` corrections, a pull never crossing a consume
queue file, filtered units counted as scanned, and at least one record returned whatever its size.
"""

from __future__ import annotations

from brokers.engine.common.message import KEY_SEPARATOR, PROPERTY_KEYS, PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX
from brokers.engine.common.message_codec import (
    RECORD_HEAD_MAX,
    RecordFormatError,
    decode_record,
    decode_tail_properties,
    topic_position,
)
from brokers.engine.store.commitlog import CommitLog
from brokers.engine.store.consume_queue import FILLER_SIZE, ConsumeQueue
from brokers.engine.store.index import IndexService
from brokers.engine.store.message_store import MessageFilter
from brokers.engine.store.results import GetMessageStatus

# A pull scans at most this many units for tag matches (RocketMQ: max(16000 bytes, n x 20)).
MAX_FILTER_UNITS = 800
# A property filter reads a record this size or smaller whole (it is kept if it matches); a larger
# one by its head and its topic and properties only, so a filtered-out 4 MiB body is never copied.
WHOLE_RECORD_READ_MAX = 4096

ReadOutcome = tuple[GetMessageStatus, int, int, int, list[bytes]]  # status, next, min, max, records


def _as_int32(value: int) -> int:
    return ((value + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def read_queue(
    commitlog: CommitLog,
    q: ConsumeQueue | None,
    offset: int,
    max_msg_nums: int,
    tag_codes: set[int] | None,
    max_total_bytes: int,
    message_filter: MessageFilter | None = None,
) -> ReadOutcome:
    """Pull up to ``max_msg_nums`` records from logical ``offset`` of queue ``q``.

    ``tag_codes`` None matches everything; otherwise a unit matches when its tag code, taken as
    a Java int, is in the set (RocketMQ compares ``(int) tagsCode`` with the codeSet).
    ``message_filter`` (RocketMQ's isMatchedByCommitLog) is asked next with the record's
    properties, read from the commit log; a record it refuses, or whose properties do not decode,
    is skipped and counted as scanned, like a tag mismatch.
    """
    if q is None:
        return GetMessageStatus.NO_MATCHED_LOGIC_QUEUE, 0, 0, 0, []
    min_offset, max_offset = q.min_offset, q.max_offset
    if max_offset == 0:
        return GetMessageStatus.NO_MESSAGE_IN_QUEUE, 0, min_offset, max_offset, []
    if offset < min_offset:
        return GetMessageStatus.OFFSET_TOO_SMALL, min_offset, min_offset, max_offset, []
    if offset == max_offset:
        return GetMessageStatus.OFFSET_OVERFLOW_ONE, offset, min_offset, max_offset, []
    if offset > max_offset:  # the reference's 4.9.8 behaviour: correct to max on a master
        return GetMessageStatus.OFFSET_OVERFLOW_BADLY, max_offset, min_offset, max_offset, []
    units = q.read_units(offset, max(MAX_FILTER_UNITS, max_msg_nums))
    if not units:
        return GetMessageStatus.OFFSET_FOUND_NULL, q.next_file_offset(offset), min_offset, max_offset, []
    status = GetMessageStatus.NO_MATCHED_MESSAGE
    records: list[bytes] = []
    total = scanned = 0
    read = commitlog.read
    max_record_size = commitlog.max_record_size
    for phys, size, tags in units:
        if records and (len(records) >= max_msg_nums or total + size > max_total_bytes):
            break
        scanned += 1
        if size == FILLER_SIZE:
            continue
        if tag_codes is not None and _as_int32(tags) not in tag_codes:
            continue
        if (
            message_filter is not None
            and size > WHOLE_RECORD_READ_MAX
            and _filtered_out(message_filter, commitlog, phys, size)
        ):
            continue
        record = read(phys, size) if size <= max_record_size else None  # a unit's size is read from disk too
        if record is None:
            if not records:
                status = GetMessageStatus.MESSAGE_WAS_REMOVING
            continue
        if (
            message_filter is not None
            and size <= WHOLE_RECORD_READ_MAX
            and _filtered_out(message_filter, commitlog, phys, size, record)
        ):
            continue
        records.append(record)
        total += size
        status = GetMessageStatus.FOUND
    return status, offset + scanned, min_offset, max_offset, records


def _filtered_out(
    message_filter: MessageFilter, commitlog: CommitLog, phys: int, size: int, record: bytes | None = None
) -> bool:
    """Whether ``message_filter`` refuses the record of ``size`` bytes at ``phys``: its properties are
    taken from ``record`` when it was read whole, else from its head and tail. A record whose
    properties do not decode is refused; one that cannot be read is not (the caller's read says so)."""
    tail: bytes | None
    try:
        if record is not None:
            at = topic_position(record)
            tail = record[at:]
        else:
            head = commitlog.read(phys, min(size, RECORD_HEAD_MAX))
            if head is None:
                return False
            at = topic_position(head)
            tail = commitlog.read(phys + at, size - at) if at < size else b""
            if tail is None:
                return False
        return not message_filter(decode_tail_properties(tail))
    except RecordFormatError:
        return True


def store_timestamp(commitlog: CommitLog, q: ConsumeQueue | None, offset: int) -> int:
    """Store time of the message at a logical offset of ``q``, or -1."""
    unit = q.get_unit(offset) if q is not None else None
    if unit is None or unit[1] == FILLER_SIZE:
        return -1
    return commitlog.read_store_timestamp(unit[0])


def earliest_time(commitlog: CommitLog, q: ConsumeQueue | None) -> int:
    """Store time of the first available message of ``q``, or -1."""
    if q is None:
        return -1
    for offset in range(q.min_offset, q.max_offset):
        stamp = store_timestamp(commitlog, q, offset)
        if stamp >= 0:
            return stamp
    return -1


def offset_by_time(commitlog: CommitLog, q: ConsumeQueue | None, timestamp: int) -> int:
    """Logical offset of the message stored at ``timestamp``, else the nearer of its two
    neighbours by store time (the earlier one on a tie); 0 for an unknown or empty queue.

    Binary search over the whole queue for the first unit stored at or after ``timestamp``,
    reading each probe's STORETIMESTAMP from the commit log. With store times 1000, 2000, 3000
    at offsets 0..2: 2000 -> 1, 2400 -> 1, 2600 -> 2, 500 -> 0, 9000 -> 2.
    """
    if q is None or q.max_offset <= q.min_offset:
        return 0
    lo, hi = q.min_offset, q.max_offset
    while lo < hi:
        mid = (lo + hi) // 2
        if store_timestamp(commitlog, q, mid) < timestamp:
            lo = mid + 1
        else:
            hi = mid
    if lo >= q.max_offset:
        return q.max_offset - 1
    right = store_timestamp(commitlog, q, lo)
    if right == timestamp or lo == q.min_offset:
        return lo
    left = store_timestamp(commitlog, q, lo - 1)
    return lo if timestamp - left > right - timestamp else lo - 1


def query_by_key(
    commitlog: CommitLog,
    index: IndexService,
    topic: str,
    key: str,
    max_num: int,
    begin_ts: int,
    end_ts: int,
    max_total_bytes: int | None = None,
) -> list[bytes]:
    """Raw records of ``topic`` whose UNIQ_KEY or one of whose KEYS is ``key`` (index hits
    re-checked on the record, duplicates dropped), newest first, at most ``max_num`` and, past
    the first record, at most ``max_total_bytes`` in all."""
    out: list[bytes] = []
    total = 0
    seen: set[int] = set()
    for phys in index.query(topic, key, max(max_num * 4, 64), begin_ts, end_ts):
        if phys in seen:
            continue
        seen.add(phys)
        record = commitlog.read_record(phys)
        if record is None:
            continue
        try:
            msg = decode_record(record)
        except RecordFormatError:
            continue
        props = msg.properties
        if msg.topic != topic or (
            props.get(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX) != key
            and key not in props.get(PROPERTY_KEYS, "").split(KEY_SEPARATOR)
        ):
            continue
        if out and max_total_bytes is not None and total + len(record) > max_total_bytes:
            break
        out.append(record)
        total += len(record)
        if len(out) >= max_num:
            break
    return out
