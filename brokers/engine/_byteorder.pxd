# cython: language_level=3
# Big-endian reads and writes of raw bytes, shared by the compiled codecs (brokers/engine/speedups.py).
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t


cdef inline int get16(const uint8_t* p) noexcept:
    cdef int v = (p[0] << 8) | p[1]
    return v - 0x10000 if v & 0x8000 else v


cdef inline int64_t get32(const uint8_t* p) noexcept:
    cdef uint32_t u = (<uint32_t>p[0] << 24) | (<uint32_t>p[1] << 16) | (<uint32_t>p[2] << 8) | p[3]
    return <int64_t>(<int>u)


cdef inline int64_t get64(const uint8_t* p) noexcept:
    cdef uint64_t u = 0
    cdef int i
    for i in range(8):
        u = (u << 8) | p[i]
    return <int64_t>u


cdef inline void put16(uint8_t* p, int v) noexcept:
    p[0] = (v >> 8) & 0xFF
    p[1] = v & 0xFF


cdef inline void put32(uint8_t* p, int64_t v) noexcept:
    cdef uint32_t u = <uint32_t>v
    p[0] = (u >> 24) & 0xFF
    p[1] = (u >> 16) & 0xFF
    p[2] = (u >> 8) & 0xFF
    p[3] = u & 0xFF


cdef inline void put64(uint8_t* p, int64_t v) noexcept:
    cdef uint64_t u = <uint64_t>v
    cdef int i
    for i in range(7, -1, -1):
        p[i] = u & 0xFF
        u >>= 8
