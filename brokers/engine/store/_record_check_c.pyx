# cython: language_level=3, boundscheck=False, wraparound=False
"""Compiled twin of :mod:`brokers.engine.store.record_check` (see :mod:`brokers.engine.speedups`).

``check_record`` answers the common case, a whole record (VALID) inside the buffer — which may
be shorter than the segment, as a slave's stream buffer is — in C; every other outcome (the
end-of-segment marker, zeros, any damage) and any argument it does not expect go to the pure
function, so the kind, the size and the reason are the pure module's word for word.
``parse_for_dispatch`` reads a record's dispatch fields in C; a record whose fields run past the
buffer goes to the pure function (which raises as it does).
"""
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int64_t, uint8_t, uint32_t
from libc.string cimport memchr

from brokers.engine._byteorder cimport get16, get32, get64

import zlib

from brokers.engine import speedups
from brokers.engine.common.message_codec import (
    BORNHOST_V6_FLAG,
    MESSAGE_MAGIC_CODE,
    RECORD_FIXED_SIZE_V4,
    STOREHOSTADDRESS_V6_FLAG,
)

_PURE = "brokers.engine.store.record_check."
_pure_check = speedups.PURE[_PURE + "check_record"]
_pure_parse = speedups.PURE[_PURE + "parse_for_dispatch"]
cdef uint32_t _MAGIC = MESSAGE_MAGIC_CODE
cdef int64_t _BORN_V6 = BORNHOST_V6_FLAG, _STORE_V6 = STOREHOSTADDRESS_V6_FLAG, _FIXED = RECORD_FIXED_SIZE_V4
_crc32 = zlib.crc32


def check_record(mm, pos, file_from, file_size, check_crc):
    if type(pos) is not int or type(file_from) is not int or type(file_size) is not int:
        return _pure_check(mm, pos, file_from, file_size, check_crc)
    cdef const uint8_t[::1] v
    try:
        v = mm
    except (TypeError, ValueError, BufferError):
        return _pure_check(mm, pos, file_from, file_size, check_crc)
    cdef Py_ssize_t n = v.shape[0], p, fs, end, at, body_at, topic_at, props_at, topic_len
    cdef int64_t size, body_len, props_len, sys_flag, base
    try:
        p = pos
        fs = file_size
        base = file_from
    except OverflowError:
        return _pure_check(mm, pos, file_from, file_size, check_crc)
    if p < 0 or p + 8 > fs or p + 8 > n:  # the segment may go on past the buffer (a slave's stream)
        return _pure_check(mm, pos, file_from, file_size, check_crc)
    cdef const uint8_t* r = &v[0] + p
    size = get32(r)
    end = p + size
    if <uint32_t>get32(r + 4) != _MAGIC or size < _FIXED or end > fs or end > n or get64(r + 28) != base + p:
        return _pure_check(mm, pos, file_from, file_size, check_crc)
    sys_flag = get32(r + 36)
    if sys_flag & (_BORN_V6 | _STORE_V6):
        at = p + 48 + (20 if sys_flag & _BORN_V6 else 8) + 8 + (20 if sys_flag & _STORE_V6 else 8) + 12
        if at + 4 > end:
            return _pure_check(mm, pos, file_from, file_size, check_crc)
        body_len = get32(&v[0] + at)
        body_at = at + 4
    else:
        body_len = get32(r + 84)
        body_at = p + 88
    topic_at = body_at + body_len
    if body_len < 0 or topic_at + 1 > end:
        return _pure_check(mm, pos, file_from, file_size, check_crc)
    topic_len = v[topic_at]
    props_at = topic_at + 1 + topic_len
    if topic_len == 0 or props_at + 2 > end:
        return _pure_check(mm, pos, file_from, file_size, check_crc)
    props_len = get16(&v[0] + props_at)
    if props_len < 0 or props_at + 2 + props_len != end:
        return _pure_check(mm, pos, file_from, file_size, check_crc)
    if memchr(&v[0] + topic_at + 1, 0, topic_len) != NULL or (props_len and v[end - 1] == 0):
        return _pure_check(mm, pos, file_from, file_size, check_crc)
    if check_crc and _crc32(memoryview(mm)[body_at:topic_at]) & 0x7FFFFFFF != <uint32_t>get32(r + 8):
        return _pure_check(mm, pos, file_from, file_size, check_crc)
    return 0, size, ""


def parse_for_dispatch(mm, pos):
    if type(pos) is not int:
        return _pure_parse(mm, pos)
    cdef const uint8_t[::1] v
    try:
        v = mm
    except (TypeError, ValueError, BufferError):
        return _pure_parse(mm, pos)
    cdef Py_ssize_t n = v.shape[0], p, at, topic_len
    cdef int64_t sys_flag, body_len, props_len
    try:
        p = pos
    except OverflowError:
        return _pure_parse(mm, pos)
    if p < 0 or p + 48 > n:
        return _pure_parse(mm, pos)
    cdef const uint8_t* r = &v[0] + p
    sys_flag = get32(r + 36)
    at = p + 48 + (20 if sys_flag & _BORN_V6 else 8)
    if at + 8 > n:
        return _pure_parse(mm, pos)
    store_ts = get64(&v[0] + at)
    at += 8 + (20 if sys_flag & _STORE_V6 else 8) + 12
    if at + 4 > n:
        return _pure_parse(mm, pos)
    body_len = get32(&v[0] + at)
    if body_len < 0 or at + 4 + body_len + 1 > n:
        return _pure_parse(mm, pos)
    at += 4 + body_len
    topic_len = v[at]
    if at + 1 + topic_len + 2 > n:
        return _pure_parse(mm, pos)
    props_len = get16(&v[0] + at + 1 + topic_len)
    if props_len < 0 or at + 3 + topic_len + props_len > n:
        return _pure_parse(mm, pos)
    topic = PyUnicode_DecodeUTF8(<const char*>&v[0] + at + 1, topic_len, "replace")
    props = PyUnicode_DecodeUTF8(<const char*>&v[0] + at + 3 + topic_len, props_len, "replace")
    return topic, get32(r + 12), get64(r + 20), sys_flag, store_ts, props
