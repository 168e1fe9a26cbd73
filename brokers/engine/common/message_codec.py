"""The commit log record layout (RocketMQ's ``CommitLog``/``MessageDecoder``), offset message ids and
batch bodies.

A record is one stored message. Pull, query and view bodies are records concatenated byte for
byte, so clients decode them with :func:`decode_records`. All integers are big-endian, signed
unless noted; offsets below assume IPv4 born and store hosts (each IPv6 host adds 12 bytes and
shifts everything after it)::

    offset size  field
    0      4     TOTALSIZE                   whole record, this field included
    4      4     MAGICCODE                   0xDAA320A7 (0xCBD43194 = end-of-segment blank marker)
    8      4     BODYCRC                     zlib.crc32(stored body) & 0x7FFFFFFF
    12     4     QUEUEID
    16     4     FLAG                        the producer's user flag
    20     8     QUEUEOFFSET                 logical offset in (topic, queue id)
    28     8     PHYSICALOFFSET              commit log offset of the record's first byte
    36     4     SYSFLAG                     bit 4: born host IPv6, bit 5: store host IPv6
    40     8     BORNTIMESTAMP               producer clock, ms
    48     8/20  BORNHOST                    4 (or 16) address bytes + 4-byte int port
    56     8     STORETIMESTAMP              broker clock, ms
    64     8/20  STOREHOST                   4 (or 16) address bytes + 4-byte int port
    72     4     RECONSUMETIMES
    76     8     PREPAREDTRANSACTIONOFFSET
    84     4+n   BODY                        int length, bytes
    88+n   1+t   TOPIC                       one-byte length, UTF-8
    89+n+t 2+p   PROPERTIES                  two-byte length, UTF-8 ``k\\x01v\\x02k\\x01v``

    TOTALSIZE = 91 + n + t + p (+ 12 per IPv6 host)

An offset message id is the store host bytes (address + 4-byte port) followed by the 8-byte
physical offset, rendered as upper-case hex: 32 characters for an IPv4 store host.

A batch body (SEND_BATCH_MESSAGE) is a run of entries::

    4 total size of the entry | 4 magic (0) | 4 body CRC (0) | 4 flag | 4+n body | 2+p properties
"""
from __future__ import annotations

import ipaddress
import struct
import sys
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from operator import mul
from typing import Iterable, Iterator, Protocol

from brokers.engine.common.message import (
    MessageExt,
    properties_to_string,
    string_to_properties,
)

MESSAGE_MAGIC_CODE = 0xDAA320A7  # Java int -626843481; stored as the unsigned bit pattern
BLANK_MAGIC_CODE = 0xCBD43194  # Java int -875286124; "jump to the next segment"
END_FILE_MIN_BLANK_LENGTH = 8  # a blank marker is TOTALSIZE + MAGICCODE
MESSAGE_MAGIC_BYTES = MESSAGE_MAGIC_CODE.to_bytes(4, "big")

# SYSFLAG bits (MessageSysFlag.java).
COMPRESSED_FLAG = 0x1
MULTI_TAGS_FLAG = 0x2
TRANSACTION_NOT_TYPE = 0x0
TRANSACTION_PREPARED_TYPE = 0x4
TRANSACTION_COMMIT_TYPE = 0x8
TRANSACTION_ROLLBACK_TYPE = 0xC
TRANSACTION_TYPE_MASK = 0xC
BORNHOST_V6_FLAG = 0x10
STOREHOSTADDRESS_V6_FLAG = 0x20

MAX_TOPIC_BYTES = 127  # the topic length is one signed byte
MAX_PROPERTIES_BYTES = 32767  # the properties length is a signed short

# Fixed part of a record with IPv4 hosts: everything but the body, topic and properties bytes.
RECORD_FIXED_SIZE_V4 = 91
HOST_V4_SIZE = 8  # 4 address bytes + 4-byte port
HOST_V6_SIZE = 20  # 16 address bytes + 4-byte port

# Up to and including SYSFLAG and BORNTIMESTAMP: the part every record shares.
_HEAD = struct.Struct(">iIiiiqqiq")
assert _HEAD.size == 48
_PREFIX = struct.Struct(">iI")  # TOTALSIZE, MAGICCODE (also the blank marker)
assert _PREFIX.size == END_FILE_MIN_BLANK_LENGTH
_I16 = struct.Struct(">h")
_I64 = struct.Struct(">q")


def _record_struct(born_v6: bool, store_v6: bool) -> struct.Struct:
    """The fixed header from BODYCRC (offset 8) to the body length, for one host combination.

    A host is packed as one bytes field: address bytes followed by the 4-byte port, exactly
    as :func:`host_to_bytes` returns it.
    """
    born = HOST_V6_SIZE if born_v6 else HOST_V4_SIZE
    store = HOST_V6_SIZE if store_v6 else HOST_V4_SIZE
    return struct.Struct(f">iiiqqiq{born}sq{store}siqi")


# Indexed by (born_v6 << 1) | store_v6. Packed at record offset 8, ends after the body length.
_BODY_HEADERS = tuple(_record_struct(bool(i & 2), bool(i & 1)) for i in range(4))
assert _BODY_HEADERS[0].size == 88 - 8
assert _BODY_HEADERS[3].size == 88 + 24 - 8

_BATCH_ENTRY_HEAD = struct.Struct(">iiiii")  # size, magic, crc, flag, body length
assert _BATCH_ENTRY_HEAD.size == 20


class RecordFormatError(ValueError):
    """Bytes that do not form a message record (or batch entry); the message says where."""


# --- small helpers ----------------------------------------------------------------------------


def body_crc(body: bytes | bytearray | memoryview) -> int:
    """Return the stored body CRC: CRC-32 of the stored bytes with the top bit cleared.

    >>> body_crc(b"hello")
    907060870
    """
    return zlib.crc32(body) & 0x7FFFFFFF


_POW_TABLE = 256
# _COEFFS[k] == (31**(k-1), ..., 31, 1) mod 2**32; _POW[k] == 31**k mod 2**32.
_COEFFS = [tuple(pow(31, k - 1 - i, 1 << 32) for i in range(k)) for k in range(_POW_TABLE + 1)]
_POW = [pow(31, k, 1 << 32) for k in range(_POW_TABLE + 1)]
_UTF16_NATIVE = "utf-16-le" if sys.byteorder == "little" else "utf-16-be"


def java_hash_extend(h: int, text: str) -> int:
    """Continue an unsigned 32-bit Java string hash ``h`` over ``text``.

    ``java_hash_extend(java_hash_extend(0, a), b)`` equals the hash of ``a + b``, which lets
    callers cache the hash of a common prefix. Sums code-unit products in C
    (``sum(map(mul, ...))``) rather than looping in Python.
    """
    if text.isascii():
        units: bytes | memoryview = text.encode("ascii")
    else:
        units = memoryview(text.encode(_UTF16_NATIVE)).cast("H")
    n = len(units)
    if n <= _POW_TABLE:
        return (h * _POW[n] + sum(map(mul, units, _COEFFS[n]))) & 0xFFFFFFFF
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


@lru_cache(maxsize=4096)
def host_to_bytes(host: str) -> bytes:
    """Encode ``"ip:port"`` as address bytes + 4-byte port (8 bytes IPv4, 20 bytes IPv6).

    Accepts ``"[::1]:10911"`` and ``"::1:10911"`` (last colon separates the port) and a leading
    ``/`` as Java prints socket addresses. IPv4-mapped IPv6 addresses become 4-byte IPv4.
    """
    text = host.strip().lstrip("/")
    addr_text, sep, port_text = text.rpartition(":")
    if not sep:
        raise ValueError(f"host {host!r} is not 'ip:port'")
    if addr_text.startswith("[") and addr_text.endswith("]"):
        addr_text = addr_text[1:-1]
    try:
        addr = ipaddress.ip_address(addr_text)
        port = int(port_text)
    except ValueError as exc:
        raise ValueError(f"host {host!r} is not 'ip:port' with a literal IP address") from exc
    if not 0 <= port <= 0xFFFF:
        raise ValueError(f"host {host!r} has a port out of range")
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    return addr.packed + port.to_bytes(4, "big")


def bytes_to_host(data: bytes | bytearray | memoryview) -> str:
    """Decode address bytes + 4-byte port (8 or 20 bytes) to ``"ip:port"`` (``"[v6]:port"``)."""
    data = bytes(data)
    if len(data) == HOST_V4_SIZE:
        return f"{ipaddress.IPv4Address(data[:4])}:{int.from_bytes(data[4:], 'big', signed=True)}"
    if len(data) == HOST_V6_SIZE:
        addr = ipaddress.IPv6Address(data[:16])
        port = int.from_bytes(data[16:], "big", signed=True)
        if addr.ipv4_mapped is not None:
            return f"{addr.ipv4_mapped}:{port}"
        return f"[{addr.compressed}]:{port}"
    raise ValueError(f"a host is 8 or 20 bytes, got {len(data)}")


def record_size(body_len: int, topic_len: int, properties_len: int, born_v6: bool = False,
                store_v6: bool = False) -> int:
    """Return TOTALSIZE for the given byte lengths and host kinds."""
    return (RECORD_FIXED_SIZE_V4 + body_len + topic_len + properties_len
            + (12 if born_v6 else 0) + (12 if store_v6 else 0))


# --- records ----------------------------------------------------------------------------------


def encode_record_into(
    buf: bytearray | memoryview,
    pos: int,
    topic: bytes,
    queue_id: int,
    body: bytes,
    properties: bytes,
    flag: int,
    queue_offset: int,
    physical_offset: int,
    sys_flag: int,
    born_timestamp: int,
    born_host: bytes,
    store_timestamp: int,
    store_host: bytes,
    reconsume_times: int,
    prepared_transaction_offset: int,
    crc: int,
    write_prefix: bool = True,
) -> int:
    """Write one record at ``buf[pos:]`` from already-encoded parts; return its TOTALSIZE.

    The store's hot path: call it positionally. ``topic`` and ``properties`` are UTF-8 bytes,
    ``born_host``/``store_host`` are :func:`host_to_bytes` values (the IPv6 SYSFLAG bits are
    set from their lengths). With ``write_prefix=False`` TOTALSIZE and MAGICCODE are left for
    the caller to write last (:func:`write_record_prefix`), so a torn write never looks like a
    record.
    """
    born_v6 = len(born_host) == HOST_V6_SIZE
    store_v6 = len(store_host) == HOST_V6_SIZE
    if born_v6 or store_v6 or sys_flag & (BORNHOST_V6_FLAG | STOREHOSTADDRESS_V6_FLAG):
        sys_flag = (sys_flag & ~(BORNHOST_V6_FLAG | STOREHOSTADDRESS_V6_FLAG)) | (
            BORNHOST_V6_FLAG if born_v6 else 0) | (STOREHOSTADDRESS_V6_FLAG if store_v6 else 0)
    header = _BODY_HEADERS[(born_v6 << 1) | store_v6]
    n, t, p = len(body), len(topic), len(properties)
    size = RECORD_FIXED_SIZE_V4 + n + t + p + (12 if born_v6 else 0) + (12 if store_v6 else 0)
    header.pack_into(buf, pos + 8, crc, queue_id, flag, queue_offset, physical_offset, sys_flag,
                     born_timestamp, born_host, store_timestamp, store_host, reconsume_times,
                     prepared_transaction_offset, n)
    at = pos + 8 + header.size
    buf[at : at + n] = body
    at += n
    buf[at] = t
    buf[at + 1 : at + 1 + t] = topic
    at += 1 + t
    buf[at : at + 2 + p] = p.to_bytes(2, "big") + properties
    if write_prefix:
        _PREFIX.pack_into(buf, pos, size, MESSAGE_MAGIC_CODE)
    return size


def write_record_prefix(buf: bytearray | memoryview, pos: int, size: int) -> None:
    """Write TOTALSIZE and MAGICCODE at ``pos``: the step that makes a record visible."""
    _PREFIX.pack_into(buf, pos, size, MESSAGE_MAGIC_CODE)


def write_blank_marker(buf: bytearray | memoryview, pos: int, size: int) -> None:
    """Write the 8-byte end-of-segment marker claiming the ``size`` bytes left in the segment."""
    _PREFIX.pack_into(buf, pos, size, BLANK_MAGIC_CODE)


def encode_record(
    *,
    topic: str,
    queue_id: int,
    body: bytes,
    properties: str | dict[str, str] = "",
    flag: int = 0,
    queue_offset: int = 0,
    physical_offset: int = 0,
    sys_flag: int = 0,
    born_timestamp: int = 0,
    born_host: str = "127.0.0.1:0",
    store_timestamp: int = 0,
    store_host: str = "127.0.0.1:0",
    reconsume_times: int = 0,
    prepared_transaction_offset: int = 0,
) -> bytes:
    """Return one complete record; the body CRC is computed here.

    Raises ValueError when the topic or properties do not fit their length fields.
    """
    topic_b = topic.encode("utf-8")
    props_text = properties if isinstance(properties, str) else properties_to_string(properties)
    props_b = props_text.encode("utf-8")
    if len(topic_b) > MAX_TOPIC_BYTES:
        raise ValueError(f"topic is {len(topic_b)} bytes, the record allows {MAX_TOPIC_BYTES}")
    if len(props_b) > MAX_PROPERTIES_BYTES:
        raise ValueError(f"properties are {len(props_b)} bytes, the record allows {MAX_PROPERTIES_BYTES}")
    born_b = host_to_bytes(born_host)
    store_b = host_to_bytes(store_host)
    size = record_size(len(body), len(topic_b), len(props_b),
                       len(born_b) == HOST_V6_SIZE, len(store_b) == HOST_V6_SIZE)
    buf = bytearray(size)
    encode_record_into(buf, 0, topic_b, queue_id, body, props_b, flag, queue_offset, physical_offset,
                       sys_flag, born_timestamp, born_b, store_timestamp, store_b, reconsume_times,
                       prepared_transaction_offset, body_crc(body))
    return bytes(buf)


def decode_record(buf: bytes | bytearray | memoryview, pos: int = 0) -> MessageExt:
    """Decode the record at ``buf[pos:]`` into a MessageExt (``msg_id`` = offset message id).

    Raises RecordFormatError when the bytes are not a whole message record.
    """
    end_of_buf = len(buf)
    if pos + 48 > end_of_buf:
        raise RecordFormatError(f"truncated record header at position {pos}")
    (size, magic, crc, queue_id, flag, queue_offset, physical_offset, sys_flag,
     born_ts) = _HEAD.unpack_from(buf, pos)
    if magic != MESSAGE_MAGIC_CODE:
        raise RecordFormatError(f"bad magic code 0x{magic:08X} at position {pos}")
    end = pos + size
    if size < RECORD_FIXED_SIZE_V4 or end > end_of_buf:
        raise RecordFormatError(f"record size {size} at position {pos} does not fit the buffer")
    at = pos + 48
    born_len = 16 if sys_flag & BORNHOST_V6_FLAG else 4
    store_len = 16 if sys_flag & STOREHOSTADDRESS_V6_FLAG else 4
    try:
        born_host = bytes(buf[at : at + born_len + 4])
        at += born_len + 4
        (store_ts,) = _I64.unpack_from(buf, at)
        at += 8
        store_host = bytes(buf[at : at + store_len + 4])
        at += store_len + 4
        reconsume_times, prepared_offset, body_len = struct.unpack_from(">iqi", buf, at)
        at += 16
        body = bytes(buf[at : at + body_len])
        at += body_len
        topic_len = buf[at]
        topic = bytes(buf[at + 1 : at + 1 + topic_len]).decode("utf-8")
        at += 1 + topic_len
        (props_len,) = _I16.unpack_from(buf, at)
        props = bytes(buf[at + 2 : at + 2 + props_len]).decode("utf-8")
        at += 2 + props_len
    except (struct.error, IndexError, UnicodeDecodeError) as exc:
        raise RecordFormatError(f"malformed record at position {pos}: {exc}") from exc
    if body_len < 0 or props_len < 0 or at != end:
        raise RecordFormatError(
            f"record at position {pos}: field lengths add up to {at - pos}, TOTALSIZE says {size}"
        )
    return MessageExt(
        topic=topic,
        body=body,
        queue_id=queue_id,
        queue_offset=queue_offset,
        commit_log_offset=physical_offset,
        properties=string_to_properties(props),
        flag=flag,
        sys_flag=sys_flag,
        born_timestamp=born_ts,
        born_host=bytes_to_host(born_host),
        store_timestamp=store_ts,
        store_host=bytes_to_host(store_host),
        reconsume_times=reconsume_times,
        prepared_transaction_offset=prepared_offset,
        body_crc=crc,
        store_size=size,
        msg_id=(store_host + physical_offset.to_bytes(8, "big", signed=True)).hex().upper(),
    )


def decode_records(buf: bytes | bytearray | memoryview) -> list[MessageExt]:
    """Decode concatenated records (a pull, query or view body) until the buffer ends."""
    out: list[MessageExt] = []
    pos = 0
    n = len(buf)
    while pos < n:
        msg = decode_record(buf, pos)
        out.append(msg)
        pos += msg.store_size
    return out


def iter_record_spans(buf: bytes | bytearray | memoryview) -> Iterator[tuple[int, int]]:
    """Yield (position, size) of each record in concatenated records, without decoding them."""
    pos = 0
    n = len(buf)
    while pos < n:
        if pos + 8 > n:
            raise RecordFormatError(f"truncated record header at position {pos}")
        size, magic = _PREFIX.unpack_from(buf, pos)
        if magic != MESSAGE_MAGIC_CODE or size < RECORD_FIXED_SIZE_V4 or pos + size > n:
            raise RecordFormatError(f"no record at position {pos}")
        yield pos, size
        pos += size


# --- offset message ids -----------------------------------------------------------------------


def create_offset_msg_id(store_host: str | bytes, physical_offset: int) -> str:
    """Return the offset message id: store host bytes + 8-byte offset, upper-case hex.

    >>> create_offset_msg_id("192.168.1.10:10911", 123456)
    'C0A8010A00002A9F000000000001E240'
    """
    host_b = host_to_bytes(store_host) if isinstance(store_host, str) else store_host
    return (host_b + physical_offset.to_bytes(8, "big", signed=True)).hex().upper()


def parse_offset_msg_id(msg_id: str) -> tuple[str, int]:
    """Return (store host ``"ip:port"``, physical offset) from an offset message id.

    32 hex characters mean an IPv4 store host, 56 an IPv6 one; anything else is a ValueError.
    """
    text = msg_id.strip()
    if len(text) not in (32, 56):
        raise ValueError(f"an offset message id has 32 or 56 hex characters, got {len(text)}")
    try:
        raw = bytes.fromhex(text)
    except ValueError as exc:
        raise ValueError(f"offset message id {msg_id!r} is not hex") from exc
    host_len = HOST_V4_SIZE if len(raw) == 16 else HOST_V6_SIZE
    return bytes_to_host(raw[:host_len]), int.from_bytes(raw[host_len:], "big", signed=True)


# --- batch bodies -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BatchEntry:
    """One message inside a batch body: flag, body and its own properties."""

    flag: int
    body: bytes
    properties: dict[str, str] = field(default_factory=dict)


class _BatchMessage(Protocol):
    flag: int
    body: bytes


def encode_batch_body(messages: Iterable[_BatchMessage]) -> bytes:
    """Encode messages (Message or BatchEntry) as a SEND_BATCH_MESSAGE body.

    A Message contributes ``all_properties()`` (its TAGS and KEYS included).
    """
    out = bytearray()
    for msg in messages:
        props = msg.all_properties() if hasattr(msg, "all_properties") else msg.properties  # type: ignore[attr-defined]
        props_b = properties_to_string(props).encode("utf-8")
        if len(props_b) > MAX_PROPERTIES_BYTES:
            raise ValueError(f"properties are {len(props_b)} bytes, the limit is {MAX_PROPERTIES_BYTES}")
        body = bytes(msg.body)
        size = _BATCH_ENTRY_HEAD.size + len(body) + 2 + len(props_b)
        out += _BATCH_ENTRY_HEAD.pack(size, 0, 0, msg.flag, len(body))
        out += body
        out += _I16.pack(len(props_b))
        out += props_b
    return bytes(out)


def iter_batch_body(data: bytes | bytearray | memoryview) -> Iterator[tuple[int, bytes, str]]:
    """Yield (flag, body, properties string) per entry of a batch body.

    Raises RecordFormatError when an entry's lengths do not add up.
    """
    pos = 0
    n = len(data)
    while pos < n:
        if pos + _BATCH_ENTRY_HEAD.size > n:
            raise RecordFormatError(f"truncated batch entry at position {pos}")
        size, _magic, _crc, flag, body_len = _BATCH_ENTRY_HEAD.unpack_from(data, pos)
        at = pos + _BATCH_ENTRY_HEAD.size
        if body_len < 0 or at + body_len + 2 > n:
            raise RecordFormatError(f"batch entry at position {pos} has a bad body length {body_len}")
        body = bytes(data[at : at + body_len])
        at += body_len
        (props_len,) = _I16.unpack_from(data, at)
        at += 2
        if props_len < 0 or at + props_len > n or at + props_len - pos != size:
            raise RecordFormatError(f"batch entry at position {pos}: lengths do not add up to {size}")
        try:
            props = bytes(data[at : at + props_len]).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RecordFormatError(f"batch entry at position {pos}: properties are not UTF-8") from exc
        yield flag, body, props
        pos += size


def decode_batch_body(data: bytes | bytearray | memoryview) -> list[BatchEntry]:
    """Decode a SEND_BATCH_MESSAGE body into its entries."""
    return [BatchEntry(flag, body, string_to_properties(props)) for flag, body, props in iter_batch_body(data)]
