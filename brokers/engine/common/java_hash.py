"""Java's ``String.hashCode()``: the tag code of a consume queue unit and the index key hash.

Sums code-unit products in C (``sum(map(mul, ...))``) with precomputed powers of 31 rather
than looping in Python, and lets callers continue a hash over a cached prefix.
"""

from __future__ import annotations

import sys
from functools import lru_cache
from operator import mul

from brokers.engine import speedups

_POW_TABLE = 256
# _COEFFS[k] == (31**(k-1), ..., 31, 1) mod 2**32; _POW[k] == 31**k mod 2**32.
_COEFFS = [tuple(pow(31, k - 1 - i, 1 << 32) for i in range(k)) for k in range(_POW_TABLE + 1)]
_POW = [pow(31, k, 1 << 32) for k in range(_POW_TABLE + 1)]
_UTF16_NATIVE = "utf-16-le" if sys.byteorder == "little" else "utf-16-be"


def java_hash_extend(h: int, text: str) -> int:
    """Continue an unsigned 32-bit Java string hash ``h`` over ``text``.

    ``java_hash_extend(java_hash_extend(0, a), b)`` equals the hash of ``a + b``, which lets
    callers cache the hash of a common prefix.
    """
    if text.isascii():
        units: bytes | memoryview = text.encode("ascii")
    else:
        units = memoryview(text.encode(_UTF16_NATIVE)).cast("H")
    n = len(units)
    if n <= _POW_TABLE:
        hashed: int = (h * _POW[n] + sum(map(mul, units, _COEFFS[n]))) & 0xFFFFFFFF
        return hashed
    for start in range(0, n, _POW_TABLE):
        chunk = units[start : start + _POW_TABLE]
        k = len(chunk)
        h = (h * _POW[k] + sum(map(mul, chunk, _COEFFS[k]))) & 0xFFFFFFFF
    return h


def java_string_hash(text: str) -> int:
    """Return Java's ``String.hashCode()`` (UTF-16 code units, 32-bit wrap-around, signed).

    >>> java_string_hash("TagA")
    2598919
    >>> java_string_hash("TopicTest#KEY1")
    -1656969516
    """
    h = java_hash_extend(0, text)
    return h - (1 << 32) if h & 0x80000000 else h


@lru_cache(maxsize=4096)
def tags_code(tags: str | None) -> int:
    """Return the consume-queue tag code: the tag's Java hash sign-extended to a long; 0 without."""
    return java_string_hash(tags) if tags else 0


# The compiled twin (brokers.engine.speedups), when built and not switched off.
speedups.install(globals(), "brokers.engine.common._java_hash_c", ("java_hash_extend",))
