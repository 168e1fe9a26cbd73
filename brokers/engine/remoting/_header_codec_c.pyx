# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled twin of :mod:`brokers.engine.remoting.header_codec` (see :mod:`brokers.engine.speedups`).

The well-formed common case runs here; anything else goes to the pure function, which gives the
answer or the error. Every output is byte for byte the pure module's.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int64_t, uint8_t, uint32_t
from libc.stdio cimport snprintf
from libc.stdlib cimport free, realloc
from libc.string cimport memcpy

from brokers.engine._byteorder cimport get16, get32, put16, put32

from brokers.engine import speedups
from brokers.engine.remoting.header_codec import LANGUAGE_CODES, _LANGUAGE_INDEX, _json_string

_PURE = "brokers.engine.remoting.header_codec."
_pure_encode_binary = speedups.PURE[_PURE + "encode_binary_header"]
_pure_decode_binary = speedups.PURE[_PURE + "decode_binary_header"]
_pure_encode_json = speedups.PURE[_PURE + "encode_json_header"]
_pure_encode_frame = speedups.PURE[_PURE + "encode_frame"]

cdef tuple _LANGUAGES = tuple(LANGUAGE_CODES)
cdef dict _LANG_INDEX = dict(_LANGUAGE_INDEX)
cdef int _OTHER = _LANGUAGE_INDEX["OTHER"]


cdef inline bint _fits(object value, int64_t lo, int64_t hi):
    """``value`` is exactly an int within [lo, hi]."""
    if type(value) is not int:
        return False
    try:
        v = <int64_t>value
    except OverflowError:
        return False
    return lo <= v <= hi


# -- ROCKETMQ binary --------------------------------------------------------------------------


def encode_binary_header(code, language, version, opaque, flag, remark, ext):
    if not (_fits(code, -0x8000, 0x7FFF) and _fits(version, -0x8000, 0x7FFF)
            and _fits(opaque, -0x80000000, 0x7FFFFFFF) and _fits(flag, -0x80000000, 0x7FFFFFFF)
            and type(language) is str and (remark is None or type(remark) is str) and type(ext) is dict):
        return _pure_encode_binary(code, language, version, opaque, flag, remark, ext)
    cdef list parts = []
    cdef Py_ssize_t total = 13 + 4 + 4
    cdef bytes remark_b = b""
    cdef bytes kb, vb
    try:
        if remark:
            remark_b = (<str>remark).encode("utf-8")
        total += PyBytes_GET_SIZE(remark_b)
        for key, value in (<dict>ext).items():
            if value is None:
                continue
            if type(key) is not str or type(value) is not str:
                return _pure_encode_binary(code, language, version, opaque, flag, remark, ext)
            kb = (<str>key).encode("utf-8")
            vb = (<str>value).encode("utf-8")
            if PyBytes_GET_SIZE(kb) > 0x7FFF:
                return _pure_encode_binary(code, language, version, opaque, flag, remark, ext)
            parts.append(kb)
            parts.append(vb)
            total += 6 + PyBytes_GET_SIZE(kb) + PyBytes_GET_SIZE(vb)
    except UnicodeEncodeError:
        return _pure_encode_binary(code, language, version, opaque, flag, remark, ext)
    cdef bytes out = PyBytes_FromStringAndSize(NULL, total)
    cdef uint8_t* p = <uint8_t*>PyBytes_AS_STRING(out)
    cdef Py_ssize_t n
    put16(p, <int>code)
    p[2] = <uint8_t>(<int>_LANG_INDEX.get(language, _OTHER))
    put16(p + 3, <int>version)
    put32(p + 5, <int64_t>opaque)
    put32(p + 9, <int64_t>flag)
    p += 13
    n = PyBytes_GET_SIZE(remark_b)
    put32(p, n)
    memcpy(p + 4, PyBytes_AS_STRING(remark_b), n)
    p += 4 + n
    put32(p, total - (p - <uint8_t*>PyBytes_AS_STRING(out)) - 4)
    p += 4
    cdef Py_ssize_t i
    for i in range(0, len(parts), 2):
        kb = <bytes>parts[i]
        vb = <bytes>parts[i + 1]
        n = PyBytes_GET_SIZE(kb)
        put16(p, <int>n)
        memcpy(p + 2, PyBytes_AS_STRING(kb), n)
        p += 2 + n
        n = PyBytes_GET_SIZE(vb)
        put32(p, n)
        memcpy(p + 4, PyBytes_AS_STRING(vb), n)
        p += 4 + n
    return out


def decode_binary_header(header):
    if type(header) is not bytes:
        return _pure_decode_binary(header)
    cdef const uint8_t* base = <const uint8_t*>PyBytes_AS_STRING(header)
    cdef Py_ssize_t size = PyBytes_GET_SIZE(header)
    cdef Py_ssize_t pos, end, remark_len, ext_len, key_len, val_len
    if size < 21:
        return _pure_decode_binary(header)
    remark_len = get32(base + 13)
    pos = 17
    if remark_len < 0 or pos + remark_len + 4 > size:
        return _pure_decode_binary(header)
    cdef dict ext = {}
    try:
        remark = PyUnicode_DecodeUTF8(<const char*>base + pos, remark_len, NULL) if remark_len else None
        pos += remark_len
        ext_len = get32(base + pos)
        pos += 4
        if ext_len < 0 or pos + ext_len > size:
            return _pure_decode_binary(header)
        end = pos + ext_len
        while pos < end:
            if pos + 2 > size:
                return _pure_decode_binary(header)
            key_len = get16(base + pos)
            pos += 2
            if key_len < 0 or pos + key_len + 4 > size:
                return _pure_decode_binary(header)
            key = PyUnicode_DecodeUTF8(<const char*>base + pos, key_len, NULL)
            pos += key_len
            val_len = get32(base + pos)
            pos += 4
            if val_len < 0 or pos + val_len > end:
                return _pure_decode_binary(header)
            if val_len:
                ext[key] = PyUnicode_DecodeUTF8(<const char*>base + pos, val_len, NULL)
            pos += val_len
    except UnicodeDecodeError:
        return _pure_decode_binary(header)
    cdef int lang = <signed char>base[2]
    name = _LANGUAGES[lang] if 0 <= lang < len(_LANGUAGES) else "OTHER"
    return get16(base), name, get16(base + 3), get32(base + 5), get32(base + 9), remark, ext


# -- JSON -------------------------------------------------------------------------------------

cdef struct _Buf:
    char* data
    Py_ssize_t length
    Py_ssize_t capacity


cdef int _grow(_Buf* buf, Py_ssize_t more) except -1:
    cdef Py_ssize_t want = buf.length + more
    cdef char* data
    if want <= buf.capacity:
        return 0
    want = max(want, buf.capacity * 2, 256)
    data = <char*>realloc(buf.data, want)
    if data == NULL:
        raise MemoryError()
    buf.data = data
    buf.capacity = want
    return 0


cdef int _raw(_Buf* buf, const char* text, Py_ssize_t n) except -1:
    _grow(buf, n)
    memcpy(buf.data + buf.length, text, n)
    buf.length += n
    return 0


cdef int _int(_Buf* buf, long long value) except -1:
    _grow(buf, 24)
    buf.length += snprintf(buf.data + buf.length, 24, "%lld", value)
    return 0


cdef int _string(_Buf* buf, str text) except -1:
    """A JSON string literal of an ASCII ``text`` (the caller checked it is ASCII)."""
    cdef bytes raw = text.encode("ascii")
    cdef const uint8_t* p = <const uint8_t*>PyBytes_AS_STRING(raw)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(raw), i
    for i in range(n):
        if p[i] < 0x20 or p[i] == 0x22 or p[i] == 0x5C:  # a control character, '"' or '\\': json escapes it
            raw = (<str>_json_string(text)).encode("ascii")
            return _raw(buf, PyBytes_AS_STRING(raw), PyBytes_GET_SIZE(raw))
    _grow(buf, n + 2)
    buf.data[buf.length] = 0x22
    memcpy(buf.data + buf.length + 1, p, n)
    buf.data[buf.length + 1 + n] = 0x22
    buf.length += n + 2
    return 0


cdef inline bint _ascii(object text):
    return type(text) is str and (<str>text).isascii()


def encode_json_header(code, language, version, opaque, flag, remark, ext):
    cdef int64_t lo = -0x80000000, hi = 0x7FFFFFFF  # Java ints; the pure function refuses the rest
    if not (_fits(code, lo, hi) and _fits(version, lo, hi) and _fits(opaque, lo, hi) and _fits(flag, lo, hi)
            and _ascii(language) and (remark is None or _ascii(remark)) and type(ext) is dict):
        return _pure_encode_json(code, language, version, opaque, flag, remark, ext)
    for key, value in (<dict>ext).items():
        if not (_ascii(key) and _ascii(value)):
            return _pure_encode_json(code, language, version, opaque, flag, remark, ext)
    cdef _Buf buf
    buf.data = NULL
    buf.length = 0
    buf.capacity = 0
    cdef bint first = True
    try:
        _raw(&buf, b'{"code":', 8)
        _int(&buf, <long long>code)
        _raw(&buf, b",", 1)
        if ext:
            _raw(&buf, b'"extFields":{', 13)
            for key, value in (<dict>ext).items():
                if not first:
                    _raw(&buf, b",", 1)
                first = False
                _string(&buf, <str>key)
                _raw(&buf, b":", 1)
                _string(&buf, <str>value)
            _raw(&buf, b"},", 2)
        _raw(&buf, b'"flag":', 7)
        _int(&buf, <long long>flag)
        _raw(&buf, b',"language":', 12)
        _string(&buf, <str>language)
        _raw(&buf, b',"opaque":', 10)
        _int(&buf, <long long>opaque)
        _raw(&buf, b",", 1)
        if remark is not None:
            _raw(&buf, b'"remark":', 9)
            _string(&buf, <str>remark)
            _raw(&buf, b",", 1)
        _raw(&buf, b'"serializeTypeCurrentRPC":"JSON","version":', 43)
        _int(&buf, <long long>version)
        _raw(&buf, b"}", 1)
        return PyBytes_FromStringAndSize(buf.data, buf.length)
    finally:
        free(buf.data)


# -- the frame --------------------------------------------------------------------------------


def encode_frame(serialize_type, header, body):
    """The whole frame: total length, header word, header, body (``bytes``; else the pure join)."""
    if not (type(header) is bytes and type(body) is bytes and _fits(serialize_type, 0, 0x7F)
            and PyBytes_GET_SIZE(header) <= 0xFFFFFF):
        return _pure_encode_frame(serialize_type, header, body)
    cdef Py_ssize_t h = PyBytes_GET_SIZE(header), b = PyBytes_GET_SIZE(body)
    cdef bytes out = PyBytes_FromStringAndSize(NULL, 8 + h + b)
    cdef uint8_t* p = <uint8_t*>PyBytes_AS_STRING(out)
    put32(p, 4 + h + b)
    put32(p + 4, (<int64_t>serialize_type << 24) | h)
    memcpy(p + 8, PyBytes_AS_STRING(header), h)
    memcpy(p + 8 + h, PyBytes_AS_STRING(body), b)
    return out

