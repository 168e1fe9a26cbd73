# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled twin of :mod:`brokers.engine.common.batch_body` (see :mod:`brokers.engine.speedups`).

A well-formed batch body is split here in one pass; a body with any entry the pure codec would
refuse goes to the pure generator from the start, so the entries yielded before the error and
the error itself are the pure module's.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int64_t, uint8_t, uint32_t
from libc.string cimport memcpy

from brokers.engine._byteorder cimport get32, put32

from brokers.engine import speedups
from brokers.engine.common.batch_body import MAX_PROPERTIES_BYTES

_PURE = "brokers.engine.common.batch_body."
_pure_iter = speedups.PURE[_PURE + "iter_batch_body"]
_pure_encode_entry = speedups.PURE[_PURE + "encode_batch_entry"]
cdef Py_ssize_t _MAX_PROPS = MAX_PROPERTIES_BYTES


def iter_batch_body(data):
    if type(data) is not bytes:
        data = bytes(data)
    cdef const uint8_t* base = <const uint8_t*>PyBytes_AS_STRING(data)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(data), pos = 0, at, size, body_len, props_len
    cdef list out = []
    try:
        while pos < n:
            if pos + 20 > n:
                return _pure_iter(data)
            size = get32(base + pos)
            body_len = get32(base + pos + 16)
            at = pos + 20
            if body_len < 0 or at + body_len + 2 > n:
                return _pure_iter(data)
            props_len = (<int>base[at + body_len] << 8) | base[at + body_len + 1]
            if props_len & 0x8000:  # a negative short
                return _pure_iter(data)
            if at + body_len + 2 + props_len > n or at + body_len + 2 + props_len - pos != size:
                return _pure_iter(data)
            out.append((
                get32(base + pos + 12),
                PyBytes_FromStringAndSize(<const char*>base + at, body_len),
                PyUnicode_DecodeUTF8(<const char*>base + at + body_len + 2, props_len, NULL),
            ))
            pos += size
    except UnicodeDecodeError:
        return _pure_iter(data)
    return iter(out)


def encode_batch_entry(flag, body, properties):
    if not (type(flag) is int and type(body) is bytes and type(properties) is str):
        return _pure_encode_entry(flag, body, properties)
    try:
        if not -0x80000000 <= <int64_t>flag <= 0x7FFFFFFF:
            return _pure_encode_entry(flag, body, properties)
        props_b = (<str>properties).encode("utf-8")
    except (OverflowError, UnicodeEncodeError):
        return _pure_encode_entry(flag, body, properties)
    cdef Py_ssize_t p = PyBytes_GET_SIZE(props_b), b = PyBytes_GET_SIZE(body)
    if p > _MAX_PROPS or 20 + b + 2 + p > 0x7FFFFFFF:
        return _pure_encode_entry(flag, body, properties)
    cdef bytes out = PyBytes_FromStringAndSize(NULL, 20 + b + 2 + p)
    cdef uint8_t* q = <uint8_t*>PyBytes_AS_STRING(out)
    put32(q, 20 + b + 2 + p)
    put32(q + 4, 0)
    put32(q + 8, 0)
    put32(q + 12, <int64_t>flag)
    put32(q + 16, b)
    memcpy(q + 20, PyBytes_AS_STRING(body), b)
    q[20 + b] = (p >> 8) & 0xFF
    q[21 + b] = p & 0xFF
    memcpy(q + 22 + b, PyBytes_AS_STRING(props_b), p)
    return out
