"""Recovery at open: find the true end of the commit log and make the queues and index agree.

Both kinds scan records forward from a start point, checking each one (magic, TOTALSIZE within
the segment, PHYSICALOFFSET equal to its position, field lengths adding up to TOTALSIZE, a
non-empty topic, and the body CRC when ``check_crc_on_recover``). Where the scan starts:

* when the checkpoint records offsets (``checkpoint.py``: everything before min(physicOffset,
  logicsOffset) was synced to the log, the queues and the index), from the first record at or
  after :data:`RECHECK_WINDOW` bytes before that offset, mid-segment. After a clean close (no
  ``abort`` file) the offsets are the end of the log, so only the last few MiB are re-checked;
  after a crash, only what was written since the last checkpoint (about a second of appends) and
  the window before it. The cost does not grow with the size of the log;
* otherwise (a checkpoint without offsets, or a torn one), as RocketMQ does: normal (no
  ``abort``) from the start of the third-last segment (recoverNormally); abnormal (``abort``
  present: a crash) from the last segment whose first record was stored at least 3 s before the
  checkpoint's min(physic, logics, index) timestamp, or earlier if a consume queue or the index
  ends before that (everything later might not have reached them).

Either way a consume queue that load found damaged (a hole after a crash) moves the start back
to the segment holding its last good unit.

The first record that fails the checks ends the log, but only if nothing valid follows it: the
rest of its segment and all later segments are searched for a record header (magic plus a
PHYSICALOFFSET matching its position, then the full check). Finding one means the damage is in
the middle of the log, which recovery must not paper over by truncating acknowledged messages:
:class:`StoreCorruptionError` names the file and offset. (Except after a crash when the bad
record is followed by records stored after what the checkpoint vouches was flushed: a power cut persists unflushed blocks
in any order, so that is the unflushed tail.) Otherwise it is a torn tail (a record cut short,
zeros, garbage): the log is cut there, the rest of the segment zeroed and later segments deleted.
Damage before the scan start is not looked for (it was synced and checked when it was the
tail); the window keeps finding damage close to the end.

Then consume queue units and index files pointing past the end (or unwritten) are dropped, and
a second pass over the scanned records re-dispatches every record a consume queue or the index
does not hold yet; after a crash it also checks each unit a queue holds against its record and
rewrites one a power cut lost or tore. Writers store TOTALSIZE and MAGICCODE last, so a record cut short by a kill never passes
the checks.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Iterable

from brokers.engine.common.message import string_to_properties
from brokers.engine.common.message_codec import MESSAGE_MAGIC_BYTES
from brokers.engine.store.checkpoint import StoreCheckpoint
from brokers.engine.store.commitlog import CommitLog
from brokers.engine.store.consume_queue import ConsumeQueue
from brokers.engine.store.dispatch import (
    consume_queue_tags_code,
    goes_to_consume_queue,
    goes_to_index,
    index_key_hashes,
)
from brokers.engine.store.errors import StoreCorruptionError
from brokers.engine.store.index import IndexService
from brokers.engine.store.record_check import (
    BLANK,
    EMPTY,
    INVALID,
    VALID,
    check_record,
    iter_records,
    parse_for_dispatch,
)

log = logging.getLogger(__name__)

# Store times are not strictly monotonic; RocketMQ backs off 3 s from the checkpoint.
CHECKPOINT_SAFETY_MS = 3000
# Both recoveries re-check at least the last three segments, as RocketMQ's recoverNormally does.
NORMAL_RECOVERY_SEGMENTS = 3
# Bytes before what the checkpoint vouches for that are re-checked anyway: damage near the end is
# still found, for a fixed cost (about 4,000 records of 1 KB, tens of milliseconds).
RECHECK_WINDOW = 4 << 20


@dataclass(frozen=True, slots=True)
class RecoveryReport:
    abnormal: bool
    scan_from: int  # commit log offset the scan started at
    end_offset: int  # recovered end of the commit log
    records_checked: int
    torn_tail: bool  # something that was not a record was cut off the end
    torn_reason: str  # why the first record past the end failed the checks
    bytes_cleared: int  # bytes zeroed or deleted past the end
    consume_queue_units_removed: int
    consume_queue_units_rebuilt: int
    messages_reindexed: int
    vouched_offset: int = -1  # where the checkpoint said everything was on disk (-1: it did not say)


def find_valid_record_after(commitlog: CommitLog, offset: int, check_crc: bool, until: int | None = None) -> int | None:
    """Return the physical offset of the first valid record starting at or after ``offset``
    (and before ``until`` when given)."""
    fs = commitlog.file_size
    for mf in commitlog.files:
        if mf.file_end_offset <= offset:
            continue
        if until is not None and mf.file_from_offset >= until:
            break
        mm = mf.mm
        limit = fs if until is None else min(fs, until - mf.file_from_offset)
        for start, stop in mf.data_ranges(max(0, offset - mf.file_from_offset), limit):
            pos = start
            while True:
                hit = mm.find(MESSAGE_MAGIC_BYTES, pos + 4, stop)
                if hit < 0:
                    break
                q = hit - 4
                if check_record(mm, q, mf.file_from_offset, fs, check_crc)[0] == VALID:
                    return mf.file_from_offset + q
                pos = q + 1
    return None


def scan_commitlog(
    commitlog: CommitLog, start: int, check_crc: bool, clean_end: int = -1, flushed_timestamp: int | None = None
) -> tuple[int, int, int, int, str]:
    """Check records from ``start``; return (end, records, last record offset, kind, reason).

    ``kind`` is EMPTY or INVALID for what stopped the scan (BLANK when the log ends exactly at
    a segment boundary). Raises StoreCorruptionError when valid records follow a bad one, unless
    ``flushed_timestamp`` (after a crash: the checkpoint's physicMsgTimestamp) shows the first
    valid record after it was stored after everything the last run had flushed:
    a power cut persists unflushed blocks in any order (a segment's end-of-file marker lost while
    the next segment's first record reached the disk), so past that point it is a torn tail,
    never acknowledged (with SYNC_FLUSH) and within what ASYNC_FLUSH may lose.
    Zeros exactly at ``clean_end`` (the end a clean shutdown recorded: nothing was written past
    it) end the log without searching the rest of the segment for records.
    """
    files = commitlog.files
    fs = commitlog.file_size
    if not files:
        return start, 0, -1, EMPTY, ""
    idx = (start - files[0].file_from_offset) // fs
    pos = start - files[idx].file_from_offset
    records = 0
    last = -1
    while idx < len(files):
        mf = files[idx]
        mm = mf.mm
        base = mf.file_from_offset
        while True:
            kind, size, reason = check_record(mm, pos, base, fs, check_crc)
            if kind == VALID:
                last = base + pos
                pos += size
                records += 1
                continue
            if kind == BLANK:
                break
            end = base + pos
            if kind == EMPTY and end == clean_end:
                return end, records, last, kind, reason
            later = find_valid_record_after(commitlog, end + 1, check_crc)
            if later is not None and _unflushed_after(commitlog, later, flushed_timestamp):
                log.warning(
                    "commit log: a bad record at physical offset %d (%s) is followed by valid "
                    "ones at %d, all after the last flush: a torn tail",
                    end,
                    reason,
                    later,
                )
                return end, records, last, kind, f"{reason}; unflushed records after it dropped"
            if later is not None:
                later_file = commitlog.find_file(later)
                raise StoreCorruptionError(
                    f"commit log corruption in {mf.path} at physical offset {end} (position "
                    f"{pos} of the segment): {reason}; a valid record follows at physical offset "
                    f"{later} in {later_file.path if later_file else '?'}. Refusing to start: this "
                    "is damage in the middle of the log, not a torn tail. Restore the segment from "
                    "a replica or backup, or move the damaged segments aside by hand.",
                    path=mf.path,
                    offset=end,
                )
            return end, records, last, kind, reason
        idx += 1
        pos = 0
    return files[-1].file_end_offset, records, last, BLANK, ""


def checkpoint_scan_start(
    commitlog: CommitLog, checkpoint: StoreCheckpoint, queues: list[ConsumeQueue], check_crc: bool
) -> int | None:
    """Return the record boundary recovery scans from when the checkpoint records offsets, else
    None (see the module docstring)."""
    files = commitlog.files
    vouched = checkpoint.min_offset()
    if vouched < 0 or not files:
        return None
    first = files[0].file_from_offset
    vouched = max(first, min(vouched, files[-1].file_end_offset))
    want = vouched - RECHECK_WINDOW
    for q in queues:
        if q.damaged:
            want = min(want, commitlog.segment_start(q.max_phys_end))
    if want <= first:
        return first
    segment = commitlog.segment_start(want)
    if want == segment:
        return segment
    # The first valid record in the window (magic, PHYSICALOFFSET equal to its position, field
    # lengths and CRC): a record boundary, as the scan from it re-checks.
    found = find_valid_record_after(commitlog, want, check_crc, until=vouched + 1)
    return found if found is not None else segment


def _unflushed_after(commitlog: CommitLog, later: int, flushed_timestamp: int | None) -> bool:
    """Whether the valid record at ``later`` (the first after a bad one) was stored after the
    last record the checkpoint vouches was flushed, so it and everything from the bad record on
    can only be a torn, unflushed tail. Without a checkpoint (0), or a store time that does not
    say (equal, or a clock that went back), the answer is False: the safe one. (Not the recorded
    flushed offset: the checkpoint lags the flush, and damage the page cache survived — a kill,
    not a power cut — must still be refused.)"""
    if not flushed_timestamp or later < 0:
        return False
    return commitlog.read_store_timestamp(later) > flushed_timestamp


def choose_scan_start(
    commitlog: CommitLog,
    checkpoint: StoreCheckpoint,
    queues: Iterable[ConsumeQueue],
    index: IndexService,
    abnormal: bool,
) -> int:
    """Return the segment start recovery scans from without checkpoint offsets (see the module
    docstring)."""
    files = commitlog.files
    if not files:
        return commitlog.max_offset
    first, last = files[0].file_from_offset, files[-1].file_from_offset
    queues = list(queues)
    candidates = [files[max(0, len(files) - NORMAL_RECOVERY_SEGMENTS)].file_from_offset]
    candidates += [commitlog.segment_start(q.max_phys_end) for q in queues if q.damaged]
    if abnormal:
        safe = checkpoint.min_timestamp() - CHECKPOINT_SAFETY_MS
        cp_start = first
        if safe > 0:
            for mf in reversed(files):
                if check_record(mf.mm, 0, mf.file_from_offset, commitlog.file_size, False)[0] != VALID:
                    continue
                stamp = commitlog.read_store_timestamp(mf.file_from_offset)
                if 0 <= stamp <= safe:
                    cp_start = mf.file_from_offset
                    break
        candidates.append(cp_start)
        ends = [q.max_phys_end for q in queues if q.max_offset > q.min_offset]
        if ends:
            candidates.append(commitlog.segment_start(max(ends)))
        if index.end_phy_offset >= 0:
            candidates.append(commitlog.segment_start(index.end_phy_offset))
    return max(first, min(min(candidates), last))


def redispatch(
    commitlog: CommitLog,
    start: int,
    end: int,
    queue_for: Callable[[str, int, bool], ConsumeQueue | None],
    index: IndexService,
    verify: bool = False,
    verify_from: int = -1,
) -> tuple[int, int]:
    """Rebuild missing consume queue units and index entries for records in [start, end).

    ``queue_for(topic, queue_id, create)`` returns the queue (None for an unusable topic name).
    The index header is written once per message after all its keys, so records up to its
    endPhyOffset are fully indexed. With ``verify`` (after a crash) a unit the queue already
    holds is checked against its record and rewritten when a power cut lost or tore it, for
    records at or past ``verify_from`` (units of earlier ones were synced before the checkpoint
    vouched for them). Returns (units written or repaired, messages indexed).
    """
    index_end = index.end_phy_offset
    units = indexed = 0
    for mm, pos, size, phys in iter_records(commitlog, start, end):
        topic, queue_id, queue_offset, sys_flag, store_ts, props_text = parse_for_dispatch(mm, pos)
        cq = held = None
        if goes_to_consume_queue(sys_flag):
            cq = queue_for(topic, queue_id, False)
            if cq is not None and (phys < cq.max_phys_end or queue_offset < cq.max_offset):
                held, cq = (cq if verify and phys >= verify_from else None), None  # the queue already has it
            elif cq is None:
                cq = queue_for(topic, queue_id, True)
        need_index = goes_to_index(sys_flag) and phys > index_end
        if cq is None and held is None and not need_index:
            continue
        props = string_to_properties(props_text)
        if held is not None:
            if held.repair_unit(queue_offset, phys, size, consume_queue_tags_code(topic, props, store_ts)):
                units += 1
        if cq is not None:
            tags = consume_queue_tags_code(topic, props, store_ts)
            if cq.put_recovered(phys, size, tags, queue_offset):
                units += 1
        if need_index:
            hashes = index_key_hashes(topic, props)
            if hashes:
                index.build_index(hashes, phys, store_ts)
                indexed += 1
    return units, indexed


def recover(
    *,
    commitlog: CommitLog,
    checkpoint: StoreCheckpoint,
    queues: Iterable[ConsumeQueue],
    queue_for: Callable[[str, int, bool], ConsumeQueue | None],
    index: IndexService,
    abnormal: bool,
    check_crc: bool,
) -> RecoveryReport:
    """Run recovery over loaded parts; see the module docstring."""
    queues = list(queues)
    trusted = checkpoint_scan_start(commitlog, checkpoint, queues, check_crc)
    start = trusted if trusted is not None else choose_scan_start(commitlog, checkpoint, queues, index, abnormal)
    clean_end = checkpoint.physic_offset if not abnormal and checkpoint.offsets_known else -1
    flushed = checkpoint.physic_msg_timestamp if abnormal else None
    end, records, last, kind, reason = scan_commitlog(commitlog, start, check_crc, clean_end, flushed)
    cleared = commitlog.set_end(end)
    torn = kind == INVALID or cleared > 0
    if torn:
        log.warning(
            "commit log: torn tail at physical offset %d (%s); %d bytes cleared",
            end,
            reason or "garbage after the last record",
            cleared,
        )
    if last >= 0:
        commitlog.last_store_timestamp = commitlog.read_store_timestamp(last)
    else:
        commitlog.last_store_timestamp = checkpoint.physic_msg_timestamp
    commitlog.flushed_store_timestamp = commitlog.last_store_timestamp
    # A queue whose units all point before what the checkpoint vouches for was synced before it
    # was written: after a crash only the others may hold holes, and are synced again.
    vouched = checkpoint.logics_offset if abnormal and trusted is not None else -1
    removed = sum(
        q.truncate_dirty(end, holes_possible=abnormal and (q.max_phys_end > vouched or q.damaged)) for q in queues
    )
    index.truncate(end)
    if abnormal:  # what the dead process wrote may still be only in the page cache
        commitlog.mark_unflushed_from(start)
        for q in queues:
            if q.max_phys_end > vouched or q.damaged:
                q.mark_unflushed()
        index.mark_unflushed()
    if not abnormal and checkpoint.offsets_known and end != checkpoint.physic_offset:
        log.warning(
            "commit log: the clean shutdown recorded its end at %d, recovery found %d", checkpoint.physic_offset, end
        )
    dispatch_from = start
    if not abnormal:
        # After a clean close everything was dispatched; only re-check past the furthest record
        # any queue or the index holds (a queue or index directory removed by hand, say).
        cq_end = max((q.max_phys_end for q in queues), default=0)
        index_end = index.end_phy_offset
        dispatch_from = max(start, min(cq_end, index_end) if index_end >= 0 else cq_end)
    units, indexed = redispatch(commitlog, dispatch_from, end, queue_for, index, verify=abnormal, verify_from=vouched)
    report = RecoveryReport(
        abnormal=abnormal,
        scan_from=start,
        end_offset=end,
        records_checked=records,
        torn_tail=torn,
        torn_reason=reason if torn else "",
        bytes_cleared=cleared,
        consume_queue_units_removed=removed,
        consume_queue_units_rebuilt=units,
        messages_reindexed=indexed,
        vouched_offset=checkpoint.min_offset(),
    )
    log.info("store recovery: %s", report)
    return report
