"""The fields of a stored record a pop reads and rewrites (the layout: ``common/message_codec.py``).

A pop answer carries each record as stored, except RECONSUMETIMES, which says the delivery's
reconsume times (the 5.x delivery attempt - 1): the copy in the commit log keeps its own.
"""

from __future__ import annotations

import struct

_OFFSETS = struct.Struct(">qq")  # QUEUEOFFSET, PHYSICALOFFSET at record offset 20
_SYSFLAG = struct.Struct(">i")  # at record offset 36
_RECONSUME = struct.Struct(">i")  # at 72, + 12 per IPv6 host (sysflag bits 0x10, 0x20)


def record_offsets(record: bytes) -> tuple[int, int]:
    """(queue offset, commit log offset) of a stored record."""
    return _OFFSETS.unpack_from(record, 20)


def with_reconsume_times(record: bytes, times: int) -> bytes:
    """A copy of ``record`` whose RECONSUMETIMES field says ``times``."""
    (sys_flag,) = _SYSFLAG.unpack_from(record, 36)
    pos = 72 + (12 if sys_flag & 0x10 else 0) + (12 if sys_flag & 0x20 else 0)
    out = bytearray(record)
    _RECONSUME.pack_into(out, pos, times)
    return bytes(out)
