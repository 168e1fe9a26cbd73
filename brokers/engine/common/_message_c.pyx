# cython: language_level=3, boundscheck=False, wraparound=False
"""Compiled twin of :mod:`brokers.engine.common.message` (see :mod:`brokers.engine.speedups`).

``string_to_properties`` in one scan: items split at ``\\x02``, each at its first ``\\x01``, an
item with an empty name or value (or without a separator) skipped, a later name winning — what
the pure function's fast and tolerant paths give between them. Anything but a str goes to the
pure function.
"""
from brokers.engine import speedups

cdef extern from "Python.h":
    int PyUnicode_KIND(object)
    void* PyUnicode_DATA(object)
    Py_ssize_t PyUnicode_GET_LENGTH(object)
    Py_UCS4 PyUnicode_READ(int kind, void* data, Py_ssize_t index)
    object PyUnicode_Substring(object, Py_ssize_t start, Py_ssize_t end)

_pure = speedups.PURE["brokers.engine.common.message.string_to_properties"]


def string_to_properties(text):
    if type(text) is not str:
        return _pure(text)
    cdef dict out = {}
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i, start = 0, sep = -1
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    cdef Py_UCS4 c
    for i in range(n + 1):
        c = PyUnicode_READ(kind, data, i) if i < n else 2
        if c == 1:
            if sep < 0:
                sep = i
        elif c == 2:
            if start < sep < i - 1:
                out[PyUnicode_Substring(text, start, sep)] = PyUnicode_Substring(text, sep + 1, i)
            start = i + 1
            sep = -1
    return out
