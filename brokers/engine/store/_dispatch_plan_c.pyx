# cython: language_level=3, boundscheck=False, wraparound=False
"""Compiled twin of :mod:`brokers.engine.store.dispatch_plan` (see :mod:`brokers.engine.speedups`).

Reads each record's dispatch fields in place, finds TAGS, KEYS and UNIQ_KEY in its properties
bytes without building the properties dict (the same tolerant rule as ``string_to_properties``:
items split on 0x02, name and value on the first 0x01, an item with an empty name or value
ignored, the last of a name kept), and hashes tags and keys over the bytes, which for ASCII text
is Java's hash over the characters. A record whose topic or wanted values are not ASCII, or
whose topic is the delay topic, takes the pure ``record_keys``; a record whose fields run past
the buffer, or an argument of a type it does not expect, sends the whole call to the pure
function (which raises as it does), so results and errors are the pure module's.
"""
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport INT64_MAX, int64_t, uint8_t, uint32_t
from libc.string cimport memcmp

from brokers.engine._byteorder cimport get16, get32, get64

from brokers.engine import speedups
from brokers.engine.common.constants import SCHEDULE_TOPIC
from brokers.engine.common.message import PROPERTY_KEYS, PROPERTY_TAGS, PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX
from brokers.engine.common.message_codec import (
    BORNHOST_V6_FLAG,
    STOREHOSTADDRESS_V6_FLAG,
    TRANSACTION_PREPARED_TYPE,
    TRANSACTION_ROLLBACK_TYPE,
    TRANSACTION_TYPE_MASK,
)
from brokers.engine.store.dispatch_plan import record_keys

_pure = speedups.PURE["brokers.engine.store.dispatch_plan.plan_dispatch"]
cdef int64_t _BORN_V6 = BORNHOST_V6_FLAG, _STORE_V6 = STOREHOSTADDRESS_V6_FLAG
cdef int64_t _TX_MASK = TRANSACTION_TYPE_MASK, _TX_PREPARED = TRANSACTION_PREPARED_TYPE
cdef int64_t _TX_ROLLBACK = TRANSACTION_ROLLBACK_TYPE
cdef bytes _TAGS = PROPERTY_TAGS.encode(), _KEYS = PROPERTY_KEYS.encode()
cdef bytes _UNIQ = PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX.encode(), _SCHEDULE = SCHEDULE_TOPIC.encode()


cdef inline uint32_t _hash(uint32_t acc, const uint8_t* p, Py_ssize_t n) noexcept:
    cdef Py_ssize_t i
    for i in range(n):
        acc = acc * 31 + p[i]
    return acc


cdef inline Py_ssize_t _find(const uint8_t* d, Py_ssize_t i, Py_ssize_t stop, uint8_t byte) noexcept:
    """The position of the first ``byte`` in d[i:stop], or ``stop``."""
    while i < stop and d[i] != byte:
        i += 1
    return i


cdef inline bint _ascii(const uint8_t* p, Py_ssize_t n) noexcept:
    cdef Py_ssize_t i
    for i in range(n):
        if p[i] >= 0x80:
            return False
    return True


cdef inline bint _is(const uint8_t* p, Py_ssize_t n, bytes name) noexcept:
    return n == len(name) and memcmp(p, <const char*>name, n) == 0


cdef inline object _key_hash(uint32_t prefix, const uint8_t* p, Py_ssize_t n):
    cdef uint32_t h = _hash(prefix, p, n)
    cdef int64_t r = h
    if h & 0x80000000u:
        r = (<int64_t>1 << 32) - h
        if r == (<int64_t>1 << 31):
            return 0
    return r


def plan_dispatch(chunk, base, records):
    if type(base) is not int or type(records) is not list or not records:
        return _pure(chunk, base, records)
    cdef const uint8_t[::1] v
    try:
        v = chunk
    except (TypeError, ValueError, BufferError):
        return _pure(chunk, base, records)
    cdef Py_ssize_t n = v.shape[0]
    if n == 0:
        return _pure(chunk, base, records)
    cdef const uint8_t* d = &v[0]
    cdef int64_t b, sys_flag, body_len, queue_offset, store_ts, run_queue = -1, run_next = -1, run_ts = 0
    cdef Py_ssize_t p, at, topic_at, topic_len, props_at, props_len, prev_at = -1, prev_len = -1
    cdef Py_ssize_t i, item, stop, sep, tags_at = 0, tags_len = 0, keys_at = 0, keys_len = 0, uniq_at = 0, uniq_len = 0
    cdef int queue_id, tx
    cdef uint32_t prefix, h
    try:
        b = base
    except OverflowError:
        return _pure(chunk, base, records)
    if b < 0 or b > INT64_MAX - n:
        return _pure(chunk, base, records)
    batches = []
    arrivals = []
    units = None
    items = None
    run_topic = None
    topic = None
    for rec in records:
        if type(rec) is not tuple or len(<tuple>rec) != 2:
            return _pure(chunk, base, records)
        pos_o, size_o = <tuple>rec
        if type(pos_o) is not int or type(size_o) is not int:
            return _pure(chunk, base, records)
        try:
            p = pos_o
        except OverflowError:
            return _pure(chunk, base, records)
        if p < 0 or p + 48 > n:
            return _pure(chunk, base, records)
        sys_flag = get32(d + p + 36)
        at = p + 48 + (20 if sys_flag & _BORN_V6 else 8)
        if at + 8 > n:
            return _pure(chunk, base, records)
        store_ts = get64(d + at)
        at += 8 + (20 if sys_flag & _STORE_V6 else 8) + 12
        if at + 4 > n:
            return _pure(chunk, base, records)
        body_len = get32(d + at)
        if body_len < 0 or at + 4 + body_len + 1 > n:
            return _pure(chunk, base, records)
        topic_at = at + 4 + body_len + 1
        topic_len = d[topic_at - 1]
        if topic_at + topic_len + 2 > n:
            return _pure(chunk, base, records)
        props_len = get16(d + topic_at + topic_len)
        props_at = topic_at + topic_len + 2
        if props_len < 0 or props_at + props_len > n:
            return _pure(chunk, base, records)
        queue_id = <int>get32(d + p + 12)
        queue_offset = get64(d + p + 20)
        if queue_offset == INT64_MAX:  # its next offset is not an int64
            return _pure(chunk, base, records)
        if topic is None or topic_len != prev_len or memcmp(d + topic_at, d + prev_at, topic_len) != 0:
            topic = PyUnicode_DecodeUTF8(<const char*>d + topic_at, topic_len, "replace")
            prev_at, prev_len = topic_at, topic_len
        # TAGS, KEYS and UNIQ_KEY of the properties: the tolerant rule of string_to_properties
        tags_len = keys_len = uniq_len = 0
        item = props_at
        stop = props_at + props_len
        while item < stop:
            i = _find(d, item, stop, 2)  # the item's end
            sep = _find(d, item, i, 1)  # its name's end
            if item < sep < i - 1:
                if _is(d + item, sep - item, _TAGS):
                    tags_at, tags_len = sep + 1, i - sep - 1
                elif _is(d + item, sep - item, _KEYS):
                    keys_at, keys_len = sep + 1, i - sep - 1
                elif _is(d + item, sep - item, _UNIQ):
                    uniq_at, uniq_len = sep + 1, i - sep - 1
            item = i + 1
        tx = sys_flag & _TX_MASK
        if (not _ascii(d + topic_at, topic_len) or not _ascii(d + tags_at, tags_len)
                or not _ascii(d + keys_at, keys_len) or not _ascii(d + uniq_at, uniq_len)
                or _is(d + topic_at, topic_len, _SCHEDULE)):
            tags, hashes = record_keys(topic, sys_flag, store_ts,
                                       PyUnicode_DecodeUTF8(<const char*>d + props_at, props_len, "replace"))
        else:
            if tx == _TX_PREPARED or tx == _TX_ROLLBACK:
                tags = None
            elif tags_len:
                h = _hash(0, d + tags_at, tags_len)
                tags = <int64_t>h - (<int64_t>1 << 32) if h & 0x80000000u else <int64_t>h
            else:
                tags = 0
            hashes = None
            if tx != _TX_ROLLBACK and (uniq_len or keys_len):
                hashes = []
                prefix = _hash(0, d + topic_at, topic_len) * 31 + 35  # "<topic>#"
                if uniq_len:
                    hashes.append(_key_hash(prefix, d + uniq_at, uniq_len))
                i = keys_at
                stop = keys_at + keys_len
                while i < stop:
                    sep = _find(d, i, stop, 32)  # KEY_SEPARATOR
                    if sep > i:
                        hashes.append(_key_hash(prefix, d + i, sep - i))
                    i = sep + 1
        phys = b + p
        if tags is None:
            batches.append((topic, queue_id, queue_offset, store_ts, None, (phys, size_o, hashes)))
            units = None
            continue
        if (units is None or queue_offset != run_next or queue_id != run_queue or store_ts != run_ts
                or not (topic is run_topic or topic == run_topic)):
            units = []
            items = []
            batches.append((topic, queue_id, queue_offset, store_ts, units, items))
            run_topic, run_queue, run_ts = topic, queue_id, store_ts
        run_next = queue_offset + 1
        units.append((phys, size_o, tags))
        if hashes:
            for h_o in hashes:
                items.append((h_o, phys))
        arrivals.append((topic, queue_id, queue_offset + 1, tags))
    return batches, arrivals
