# cython: language_level=3, boundscheck=False, wraparound=False
"""Compiled twin of :mod:`brokers.engine.common.java_hash` (see :mod:`brokers.engine.speedups`).

Walks the string's own code points (Latin-1, UCS-2 or UCS-4 storage) and folds them as Java's
UTF-16 code units, a character above U+FFFF as its surrogate pair. A lone surrogate (which the
pure function cannot encode), a hash that is not an int in [0, 2**32) or text that is not a str
goes to the pure function, so its result or its error is the pure module's.
"""
from libc.stdint cimport uint8_t, uint16_t, uint32_t

from brokers.engine import speedups

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void* PyUnicode_DATA(object)
    Py_ssize_t PyUnicode_GET_LENGTH(object)
    int PyUnicode_1BYTE_KIND
    int PyUnicode_2BYTE_KIND

_pure = speedups.PURE["brokers.engine.common.java_hash.java_hash_extend"]


def java_hash_extend(h, text):
    if type(text) is not str or type(h) is not int or not (0 <= h <= 0xFFFFFFFF):
        return _pure(h, text)
    cdef uint32_t acc = <uint32_t>(<unsigned long long>h)
    cdef Py_ssize_t i, n = PyUnicode_GET_LENGTH(text)
    cdef int kind = PyUnicode_KIND(text)
    cdef const uint8_t* p1
    cdef const uint16_t* p2
    cdef const uint32_t* p4
    cdef uint32_t c
    if kind == PyUnicode_1BYTE_KIND:
        p1 = <const uint8_t*>PyUnicode_DATA(text)
        for i in range(n):
            acc = acc * 31 + p1[i]
    elif kind == PyUnicode_2BYTE_KIND:
        p2 = <const uint16_t*>PyUnicode_DATA(text)
        for i in range(n):
            c = p2[i]
            if 0xD800 <= c <= 0xDFFF:
                return _pure(h, text)
            acc = acc * 31 + c
    else:
        p4 = <const uint32_t*>PyUnicode_DATA(text)
        for i in range(n):
            c = p4[i]
            if c > 0xFFFF:
                c -= 0x10000
                acc = acc * 31 + (0xD800 + (c >> 10))
                acc = acc * 31 + (0xDC00 + (c & 0x3FF))
            elif 0xD800 <= c <= 0xDFFF:
                return _pure(h, text)
            else:
                acc = acc * 31 + c
    return acc
