"""Reading commit log records in place: is the record at a position whole, and what a dispatch
needs from one (recovery's scans and a slave's replica appender share these).

:func:`check_record` classifies the bytes at a position of a segment (VALID, BLANK — the
end-of-segment marker, or a record ending the segment exactly —, EMPTY zeros, INVALID with the
reason): magic, TOTALSIZE within the segment, PHYSICALOFFSET equal to its position, field lengths
adding up to TOTALSIZE, a non-empty topic, and the body CRC when asked.
"""

from __future__ import annotations

import logging
import mmap
import struct
import zlib
from typing import Iterator

from brokers.engine import speedups
from brokers.engine.common.message_codec import (
    BLANK_MAGIC_CODE,
    BORNHOST_V6_FLAG,
    MESSAGE_MAGIC_CODE,
    RECORD_FIXED_SIZE_V4,
    STOREHOSTADDRESS_V6_FLAG,
)
from brokers.engine.store.commitlog import CommitLog

log = logging.getLogger(__name__)

VALID, BLANK, EMPTY, INVALID = range(4)

Segment = bytes | bytearray | mmap.mmap  # a segment's bytes: its map, or a chunk read or received

_PREFIX = struct.Struct(">iI")
_HEAD = struct.Struct(">iIiiiqqiq")  # TOTALSIZE .. BORNTIMESTAMP
assert _HEAD.size == 48
_HEADER_V4 = struct.Struct(">iIiiiqqiq8sq8siqi")  # TOTALSIZE .. body length, IPv4 hosts
assert _HEADER_V4.size == 88
_I32 = struct.Struct(">i")
_I16 = struct.Struct(">h")
_I64 = struct.Struct(">q")


def check_record(mm: Segment, pos: int, file_from: int, file_size: int, check_crc: bool) -> tuple[int, int, str]:
    """Classify the bytes at ``pos`` of a segment: (VALID|BLANK|EMPTY|INVALID, size, reason)."""
    if pos == file_size:  # a record filled the segment exactly: nothing to skip
        return BLANK, 0, ""
    if pos + 8 > file_size:
        return INVALID, 0, f"only {file_size - pos} bytes left at the end of the segment"
    size, magic = _PREFIX.unpack_from(mm, pos)
    if magic == BLANK_MAGIC_CODE:
        if size == file_size - pos:
            return BLANK, size, ""
        return INVALID, 0, f"end-of-segment marker claims {size} bytes but {file_size - pos} are left"
    if magic != MESSAGE_MAGIC_CODE:
        if size == 0 and magic == 0:
            return EMPTY, 0, "no record (zero bytes)"
        return INVALID, 0, f"bad magic code 0x{magic:08X}"
    end = pos + size
    if size < RECORD_FIXED_SIZE_V4 or end > file_size:
        return INVALID, 0, f"TOTALSIZE {size} does not fit the segment"
    # One unpack for the usual IPv4/IPv4 header; IPv6 hosts take the longer way.
    (_size, _magic, crc, _qid, _flag, _qoff, phys, sys_flag, _born, _bh, _sts, _sh, _rt, _pto, body_len) = (
        _HEADER_V4.unpack_from(mm, pos)
    )
    if phys != file_from + pos:
        return INVALID, 0, f"PHYSICALOFFSET field says {phys}"
    if sys_flag & (BORNHOST_V6_FLAG | STOREHOSTADDRESS_V6_FLAG):
        at = (
            pos
            + 48
            + (20 if sys_flag & BORNHOST_V6_FLAG else 8)
            + 8
            + (20 if sys_flag & STOREHOSTADDRESS_V6_FLAG else 8)
            + 12
        )
        if at + 4 > end:
            return INVALID, 0, "record shorter than its header"
        (body_len,) = _I32.unpack_from(mm, at)
        body_at = at + 4
    else:
        body_at = pos + _HEADER_V4.size
    topic_at = body_at + body_len
    if body_len < 0 or topic_at + 1 > end:
        return INVALID, 0, f"body length {body_len} does not fit TOTALSIZE {size}"
    topic_len = mm[topic_at]
    props_at = topic_at + 1 + topic_len
    if topic_len == 0 or props_at + 2 > end:
        return INVALID, 0, f"topic length {topic_len} does not fit TOTALSIZE {size}"
    (props_len,) = _I16.unpack_from(mm, props_at)
    if props_len < 0 or props_at + 2 + props_len != end:
        return INVALID, 0, f"field lengths do not add up to TOTALSIZE {size}"
    if mm.find(b"\x00", topic_at + 1, props_at) != -1:
        return INVALID, 0, "topic contains zero bytes"
    if props_len and mm[end - 1] == 0:
        return INVALID, 0, "properties end in a zero byte (cut short)"
    if check_crc and zlib.crc32(mm[body_at:topic_at]) & 0x7FFFFFFF != crc:
        return INVALID, 0, "body CRC mismatch"
    return VALID, size, ""


def iter_records(commitlog: CommitLog, start: int, end: int) -> Iterator[tuple[Segment, int, int, int]]:
    """Yield (map, position, size, physical offset) for the records in [start, end), which a
    scan has already checked."""
    offset = start
    while offset < end:
        mf = commitlog.find_file(offset)
        if mf is None:
            return
        pos = offset - mf.file_from_offset
        size, magic = _PREFIX.unpack_from(mf.mm, pos)
        if magic == BLANK_MAGIC_CODE or pos == mf.file_size:
            offset = mf.file_end_offset
            continue
        if magic != MESSAGE_MAGIC_CODE or size <= 0:  # not a record boundary: nothing to trust
            log.warning("re-dispatch stopped at commit log offset %d: no record starts there", offset)
            return
        yield mf.mm, pos, size, offset
        offset += size


def parse_for_dispatch(mm: Segment, pos: int) -> tuple[str, int, int, int, int, str]:
    """Return (topic, queue id, queue offset, sys flag, store timestamp, properties string)."""
    _size, _magic, _crc, queue_id, _flag, queue_offset, _phys, sys_flag, _born = _HEAD.unpack_from(mm, pos)
    at = pos + 48 + (20 if sys_flag & BORNHOST_V6_FLAG else 8)
    (store_ts,) = _I64.unpack_from(mm, at)
    at += 8 + (20 if sys_flag & STOREHOSTADDRESS_V6_FLAG else 8) + 12
    (body_len,) = _I32.unpack_from(mm, at)
    at += 4 + body_len
    topic_len = mm[at]
    topic = mm[at + 1 : at + 1 + topic_len].decode("utf-8", "replace")
    at += 1 + topic_len
    (props_len,) = _I16.unpack_from(mm, at)
    props = mm[at + 2 : at + 2 + props_len].decode("utf-8", "replace")
    return topic, queue_id, queue_offset, sys_flag, store_ts, props


# The compiled twins (brokers.engine.speedups), when built and not switched off.
speedups.install(globals(), "brokers.engine.store._record_check_c", ("check_record", "parse_for_dispatch"))
