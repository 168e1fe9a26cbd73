# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled twin of :mod:`brokers.engine.common.message_codec` (see :mod:`brokers.engine.speedups`).

Records are encoded and decoded here when they are well formed and every value fits its field;
anything else goes to the pure function, which gives the answer or the error.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy

from brokers.engine._byteorder cimport get32, get64, put32, put64

from brokers.engine import speedups
from brokers.engine.common.message import MessageExt, string_to_properties
from brokers.engine.common.message_codec import _topic_text, bytes_to_host, offset_msg_id_of

_PURE = "brokers.engine.common.message_codec."
_pure_decode_record = speedups.PURE[_PURE + "decode_record"]
_pure_decode_records = speedups.PURE[_PURE + "decode_records"]
_pure_encode_tail = speedups.PURE[_PURE + "encode_record_tail"]

cdef uint32_t _MAGIC = 0xDAA320A7
cdef enum:
    _BORN_V6 = 0x10
    _STORE_V6 = 0x20
    _FIXED_V4 = 91


cdef inline bint _int32(object v):
    if type(v) is not int:
        return False
    try:
        return -0x80000000 <= <int64_t>v <= 0x7FFFFFFF
    except OverflowError:
        return False


cdef inline bint _int64(object v):
    if type(v) is not int:
        return False
    try:
        <int64_t>v
    except OverflowError:
        return False
    return True


# -- decode -----------------------------------------------------------------------------------


cdef object _decode(bytes buf, Py_ssize_t pos):
    """The record at ``pos`` as a MessageExt, or None when the pure decoder must judge it."""
    cdef const uint8_t* base = <const uint8_t*>PyBytes_AS_STRING(buf)
    cdef const uint8_t* r = base + pos
    cdef Py_ssize_t n = PyBytes_GET_SIZE(buf), size, end, hsize, born, store, at, body_len, topic_at, props_at
    cdef int64_t sys_flag
    if pos < 0 or pos + 88 > n:
        return None
    if <uint32_t>get32(r + 4) != _MAGIC:
        return None
    sys_flag = get32(r + 36)
    born = 20 if sys_flag & _BORN_V6 else 8
    store = 20 if sys_flag & _STORE_V6 else 8
    hsize = 72 + born + store
    size = get32(r)
    end = pos + size
    if pos + hsize > n or size < _FIXED_V4 or end > n:
        return None
    body_len = get32(r + hsize - 4)
    at = pos + hsize
    topic_at = at + body_len
    if body_len < 0 or topic_at + 3 > end:
        return None
    props_at = topic_at + 1 + base[topic_at]
    if props_at + 2 > end or base[props_at] & 0x80 or props_at + 2 + ((base[props_at] << 8) | base[props_at + 1]) != end:
        return None
    born_host = PyBytes_FromStringAndSize(<const char*>r + 48, born)
    store_host = PyBytes_FromStringAndSize(<const char*>r + 56 + born, store)
    physical_offset = get64(r + 28)
    try:
        topic = _topic_text(PyBytes_FromStringAndSize(<const char*>base + topic_at + 1, props_at - topic_at - 1))
        properties = string_to_properties(PyUnicode_DecodeUTF8(<const char*>base + props_at + 2, end - props_at - 2, NULL))
    except UnicodeDecodeError:
        return None
    return MessageExt(
        topic, PyBytes_FromStringAndSize(<const char*>base + at, body_len), get32(r + 12), get64(r + 20),
        physical_offset, properties, get32(r + 16), sys_flag, get64(r + 40), bytes_to_host(born_host),
        get64(r + 48 + born), bytes_to_host(store_host), get32(r + 56 + born + store), get64(r + 60 + born + store),
        get32(r + 8), size, offset_msg_id_of(store_host, physical_offset))


def decode_record(buf, pos=0):
    if type(buf) is bytes and type(pos) is int and 0 <= pos <= PyBytes_GET_SIZE(buf):
        msg = _decode(<bytes>buf, pos)
        if msg is not None:
            return msg
    return _pure_decode_record(buf, pos)


def decode_records(buf):
    if type(buf) is not bytes:
        buf = bytes(buf)
    cdef list out = []
    cdef Py_ssize_t pos = 0, n = PyBytes_GET_SIZE(buf)
    while pos < n:
        msg = _decode(<bytes>buf, pos)
        if msg is None:
            return _pure_decode_records(buf)  # the pure loop raises at the same record
        out.append(msg)
        pos += (<object>msg).store_size
    return out


# -- encode -----------------------------------------------------------------------------------


def encode_record_tail(topic, queue_id, body, properties, flag, queue_offset, physical_offset, sys_flag,
                       born_timestamp, born_host, store_timestamp, store_host, reconsume_times,
                       prepared_transaction_offset, crc):
    args = (topic, queue_id, body, properties, flag, queue_offset, physical_offset, sys_flag, born_timestamp,
            born_host, store_timestamp, store_host, reconsume_times, prepared_transaction_offset, crc)
    if not (type(topic) is bytes and type(body) is bytes and type(properties) is bytes
            and type(born_host) is bytes and type(store_host) is bytes
            and _int32(queue_id) and _int32(flag) and _int32(sys_flag) and _int32(reconsume_times) and _int32(crc)
            and _int64(queue_offset) and _int64(physical_offset) and _int64(born_timestamp)
            and _int64(store_timestamp) and _int64(prepared_transaction_offset)):
        return _pure_encode_tail(*args)
    cdef Py_ssize_t born = PyBytes_GET_SIZE(born_host), store = PyBytes_GET_SIZE(store_host)
    cdef Py_ssize_t nb = PyBytes_GET_SIZE(body), t = PyBytes_GET_SIZE(topic), p = PyBytes_GET_SIZE(properties)
    if (born != 8 and born != 20) or (store != 8 and store != 20) or t > 0xFF or p > 0xFFFF or nb > 0x7FFFFFFF - 0x20000:
        return _pure_encode_tail(*args)
    cdef int64_t flags = <int64_t>sys_flag
    if born == 20 or store == 20 or flags & (_BORN_V6 | _STORE_V6):
        flags = (flags & ~(_BORN_V6 | _STORE_V6)) | (_BORN_V6 if born == 20 else 0) | (_STORE_V6 if store == 20 else 0)
    cdef Py_ssize_t size = _FIXED_V4 + nb + t + p + (12 if born == 20 else 0) + (12 if store == 20 else 0)
    cdef bytes out = PyBytes_FromStringAndSize(NULL, size - 8)
    cdef uint8_t* q = <uint8_t*>PyBytes_AS_STRING(out)
    put32(q, <int64_t>crc)
    put32(q + 4, <int64_t>queue_id)
    put32(q + 8, <int64_t>flag)
    put64(q + 12, <int64_t>queue_offset)
    put64(q + 20, <int64_t>physical_offset)
    put32(q + 28, flags)
    put64(q + 32, <int64_t>born_timestamp)
    memcpy(q + 40, PyBytes_AS_STRING(born_host), born)
    q += 40 + born
    put64(q, <int64_t>store_timestamp)
    memcpy(q + 8, PyBytes_AS_STRING(store_host), store)
    q += 8 + store
    put32(q, <int64_t>reconsume_times)
    put64(q + 4, <int64_t>prepared_transaction_offset)
    put32(q + 12, nb)
    memcpy(q + 16, PyBytes_AS_STRING(body), nb)
    q += 16 + nb
    q[0] = <uint8_t>t
    memcpy(q + 1, PyBytes_AS_STRING(topic), t)
    q += 1 + t
    q[0] = (p >> 8) & 0xFF
    q[1] = p & 0xFF
    memcpy(q + 2, PyBytes_AS_STRING(properties), p)
    return out, size
