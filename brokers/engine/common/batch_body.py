"""The body of a SEND_BATCH_MESSAGE request: the batch's messages, one entry after another.

Each entry (all integers big-endian, RocketMQ's ``MessageDecoder.encodeMessage``)::

    offset size  field
    0      4     TOTALSIZE    the entry, this field included: 20 + n + 2 + p
    4      4     MAGICCODE    0 (unused)
    8      4     BODYCRC      0 (unused; the broker computes it)
    12     4     FLAG         the producer's user flag
    16     4+n   BODY         int length, bytes
    20+n   2+p   PROPERTIES   short length, UTF-8 ``k\\x01v\\x02k\\x01v`` (TAGS, KEYS, UNIQ_KEY, ...)
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Protocol

from brokers.engine import speedups
from brokers.engine.common.errors import RecordFormatError
from brokers.engine.common.message import properties_to_string, string_to_properties

MAX_PROPERTIES_BYTES = 32767  # the properties length is a signed short

_ENTRY_HEAD = struct.Struct(">iiiii")  # size, magic, crc, flag, body length
assert _ENTRY_HEAD.size == 20
_I16 = struct.Struct(">h")
assert _I16.size == 2


@dataclass(frozen=True, slots=True)
class BatchEntry:
    """One message inside a batch body: flag, body and its own properties."""

    flag: int
    body: bytes
    properties: dict[str, str] = field(default_factory=dict)


class _BatchMessage(Protocol):
    flag: int
    body: bytes


def encode_batch_entry(flag: int, body: bytes, properties: str) -> bytes:
    """Encode one entry from its flag, body and properties string.

    Raises ValueError when the properties do not fit their two-byte length.
    """
    props_b = properties.encode("utf-8")
    p = len(props_b)
    if p > MAX_PROPERTIES_BYTES:
        raise ValueError(f"properties are {p} bytes, the limit is {MAX_PROPERTIES_BYTES}")
    n = len(body)
    return b"".join((_ENTRY_HEAD.pack(_ENTRY_HEAD.size + n + 2 + p, 0, 0, flag, n), body, _I16.pack(p), props_b))


def encode_batch_body(messages: Iterable[_BatchMessage]) -> bytes:
    """Encode messages (Message or BatchEntry) as a SEND_BATCH_MESSAGE body.

    A Message contributes ``all_properties()`` (its TAGS and KEYS included).
    """
    parts = []
    for msg in messages:
        props = msg.all_properties() if hasattr(msg, "all_properties") else msg.properties  # type: ignore[attr-defined]
        parts.append(encode_batch_entry(msg.flag, bytes(msg.body), properties_to_string(props)))
    return b"".join(parts)


def iter_batch_body(data: bytes | bytearray | memoryview) -> Iterator[tuple[int, bytes, str]]:
    """Yield (flag, body, properties string) per entry of a batch body.

    Raises RecordFormatError when an entry's lengths do not add up.
    """
    if type(data) is not bytes:
        data = bytes(data)
    unpack_head, unpack_i16 = _ENTRY_HEAD.unpack_from, _I16.unpack_from
    head_size = _ENTRY_HEAD.size
    pos = 0
    n = len(data)
    while pos < n:
        if pos + head_size > n:
            raise RecordFormatError(f"truncated batch entry at position {pos}")
        size, _magic, _crc, flag, body_len = unpack_head(data, pos)
        at = pos + head_size
        if body_len < 0 or at + body_len + 2 > n:
            raise RecordFormatError(f"batch entry at position {pos} has a bad body length {body_len}")
        body = data[at : at + body_len]
        at += body_len
        (props_len,) = unpack_i16(data, at)
        at += 2
        if props_len < 0 or at + props_len > n or at + props_len - pos != size:
            raise RecordFormatError(f"batch entry at position {pos}: lengths do not add up to {size}")
        try:
            props = data[at : at + props_len].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RecordFormatError(f"batch entry at position {pos}: properties are not UTF-8") from exc
        yield flag, body, props
        pos += size


def decode_batch_body(data: bytes | bytearray | memoryview) -> list[BatchEntry]:
    """Decode a SEND_BATCH_MESSAGE body into its entries."""
    return [BatchEntry(flag, body, string_to_properties(props)) for flag, body, props in iter_batch_body(data)]


# The compiled twins (brokers.engine.speedups), when built and not switched off.
speedups.install(globals(), "brokers.engine.common._batch_body_c", ("iter_batch_body", "encode_batch_entry"))
