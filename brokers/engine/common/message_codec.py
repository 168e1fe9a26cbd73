"""The commit log record layout (RocketMQ's ``CommitLog``/``MessageDecoder``).

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

Offset message ids and host bytes live in :mod:`brokers.engine.common.message_id`, batch bodies
(SEND_BATCH_MESSAGE) in :mod:`brokers.engine.common.batch_body`, Java string hashes in
:mod:`brokers.engine.common.java_hash`; this module re-exports their names, so
``from brokers.engine.common.message_codec import ...`` reaches all of them.

Decoding is the consumer's per-message cost, so :func:`decode_record` unpacks the whole fixed
header (TOTALSIZE to the body length) with one precompiled struct per host combination and
looks host texts, topics and message ids up in small caches.
"""

from __future__ import annotations

import struct
import zlib
from typing import Iterator

from brokers.engine import speedups
from brokers.engine.common.batch_body import (  # noqa: F401 (re-exported)
    MAX_PROPERTIES_BYTES,
    BatchEntry,
    decode_batch_body,
    encode_batch_body,
    encode_batch_entry,
    iter_batch_body,
)
from brokers.engine.common.errors import RecordFormatError
from brokers.engine.common.java_hash import java_hash_extend, java_string_hash, tags_code  # noqa: F401 (re-exported)
from brokers.engine.common.message import MessageExt, properties_to_string, string_to_properties
from brokers.engine.common.message_id import (  # noqa: F401 (re-exported)
    HOST_V4_SIZE,
    HOST_V6_SIZE,
    bytes_to_host,
    create_offset_msg_id,
    host_to_bytes,
    offset_msg_id_of,
    parse_offset_msg_id,
)

__all__ = [
    "BLANK_MAGIC_CODE",
    "BORNHOST_V6_FLAG",
    "COMPRESSED_FLAG",
    "END_FILE_MIN_BLANK_LENGTH",
    "HOST_V4_SIZE",
    "HOST_V6_SIZE",
    "MAX_PROPERTIES_BYTES",
    "MAX_TOPIC_BYTES",
    "MESSAGE_MAGIC_BYTES",
    "MESSAGE_MAGIC_CODE",
    "MULTI_TAGS_FLAG",
    "RECORD_FIXED_SIZE_V4",
    "RECORD_HEAD_MAX",
    "STOREHOSTADDRESS_V6_FLAG",
    "TRANSACTION_COMMIT_TYPE",
    "TRANSACTION_NOT_TYPE",
    "TRANSACTION_PREPARED_TYPE",
    "TRANSACTION_ROLLBACK_TYPE",
    "TRANSACTION_TYPE_MASK",
    "BatchEntry",
    "RecordFormatError",
    "body_crc",
    "bytes_to_host",
    "create_offset_msg_id",
    "decode_batch_body",
    "decode_record",
    "decode_records",
    "decode_tail_properties",
    "encode_batch_body",
    "encode_batch_entry",
    "encode_record",
    "encode_record_into",
    "encode_record_tail",
    "host_to_bytes",
    "iter_batch_body",
    "iter_record_spans",
    "java_hash_extend",
    "java_string_hash",
    "offset_msg_id_of",
    "parse_offset_msg_id",
    "record_size",
    "tags_code",
    "topic_position",
    "write_blank_marker",
    "write_record_prefix",
]

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
_V6_FLAGS = BORNHOST_V6_FLAG | STOREHOSTADDRESS_V6_FLAG

MAX_TOPIC_BYTES = 127  # the topic length is one signed byte

# Fixed part of a record with IPv4 hosts: everything but the body, topic and properties bytes.
RECORD_FIXED_SIZE_V4 = 91

_PREFIX = struct.Struct(">iI")  # TOTALSIZE, MAGICCODE (also the blank marker)
_I32 = struct.Struct(">i")
assert _PREFIX.size == END_FILE_MIN_BLANK_LENGTH


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
# The same with TOTALSIZE and MAGICCODE in front: what decode_record unpacks in one call.
_RECORD_HEADERS = tuple(struct.Struct(">iI" + h.format[1:]) for h in _BODY_HEADERS)
assert _RECORD_HEADERS[0].size == 88 and _RECORD_HEADERS[3].size == 88 + 24

_CACHE_MAX = 4096  # distinct topics remembered by decode_record
_topic_texts: dict[bytes, str] = {}


def body_crc(body: bytes | bytearray | memoryview) -> int:
    """Return the stored body CRC: CRC-32 of the stored bytes with the top bit cleared.

    >>> body_crc(b"hello")
    907060870
    """
    return zlib.crc32(body) & 0x7FFFFFFF


def record_size(
    body_len: int, topic_len: int, properties_len: int, born_v6: bool = False, store_v6: bool = False
) -> int:
    """Return TOTALSIZE for the given byte lengths and host kinds."""
    return (
        RECORD_FIXED_SIZE_V4 + body_len + topic_len + properties_len + (12 if born_v6 else 0) + (12 if store_v6 else 0)
    )


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
    tail, size = encode_record_tail(
        topic,
        queue_id,
        body,
        properties,
        flag,
        queue_offset,
        physical_offset,
        sys_flag,
        born_timestamp,
        born_host,
        store_timestamp,
        store_host,
        reconsume_times,
        prepared_transaction_offset,
        crc,
    )
    buf[pos + 8 : pos + size] = tail
    if write_prefix:
        _PREFIX.pack_into(buf, pos, size, MESSAGE_MAGIC_CODE)
    return size


def encode_record_tail(
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
) -> tuple[bytes, int]:
    """Return (the record from BODYCRC on, its TOTALSIZE): everything :func:`write_record_prefix`
    does not write, from the same already-encoded parts as :func:`encode_record_into`."""
    born_v6 = len(born_host) == HOST_V6_SIZE
    store_v6 = len(store_host) == HOST_V6_SIZE
    if born_v6 or store_v6 or sys_flag & _V6_FLAGS:
        sys_flag = (
            (sys_flag & ~_V6_FLAGS)
            | (BORNHOST_V6_FLAG if born_v6 else 0)
            | (STOREHOSTADDRESS_V6_FLAG if store_v6 else 0)
        )
    header = _BODY_HEADERS[(born_v6 << 1) | store_v6]
    n, t, p = len(body), len(topic), len(properties)
    size = RECORD_FIXED_SIZE_V4 + n + t + p + (12 if born_v6 else 0) + (12 if store_v6 else 0)
    tail = b"".join(
        (
            header.pack(
                crc,
                queue_id,
                flag,
                queue_offset,
                physical_offset,
                sys_flag,
                born_timestamp,
                born_host,
                store_timestamp,
                store_host,
                reconsume_times,
                prepared_transaction_offset,
                n,
            ),
            body,
            t.to_bytes(1, "big"),
            topic,
            p.to_bytes(2, "big"),
            properties,
        )
    )
    return tail, size


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
    size = record_size(len(body), len(topic_b), len(props_b), len(born_b) == HOST_V6_SIZE, len(store_b) == HOST_V6_SIZE)
    buf = bytearray(size)
    encode_record_into(
        buf,
        0,
        topic_b,
        queue_id,
        body,
        props_b,
        flag,
        queue_offset,
        physical_offset,
        sys_flag,
        born_timestamp,
        born_b,
        store_timestamp,
        store_b,
        reconsume_times,
        prepared_transaction_offset,
        body_crc(body),
    )
    return bytes(buf)


def _topic_text(raw: bytes) -> str:
    text = _topic_texts.get(raw)
    if text is None:
        text = raw.decode("utf-8")
        if len(_topic_texts) >= _CACHE_MAX:
            _topic_texts.clear()
        _topic_texts[raw] = text
    return text


def decode_record(buf: bytes | bytearray | memoryview, pos: int = 0) -> MessageExt:
    """Decode the record at ``buf[pos:]`` into a MessageExt (``msg_id`` = offset message id).

    Raises RecordFormatError when the bytes are not a whole message record.
    """
    if type(buf) is not bytes:
        return _decode_copy(buf, pos)
    header = _RECORD_HEADERS[0]
    try:
        (
            size,
            magic,
            crc,
            queue_id,
            flag,
            queue_offset,
            physical_offset,
            sys_flag,
            born_ts,
            born_host,
            store_ts,
            store_host,
            reconsume_times,
            prepared_offset,
            body_len,
        ) = header.unpack_from(buf, pos)
        if magic == MESSAGE_MAGIC_CODE and sys_flag & _V6_FLAGS:
            header = _RECORD_HEADERS[
                (2 if sys_flag & BORNHOST_V6_FLAG else 0) | (1 if sys_flag & STOREHOSTADDRESS_V6_FLAG else 0)
            ]
            (
                size,
                magic,
                crc,
                queue_id,
                flag,
                queue_offset,
                physical_offset,
                sys_flag,
                born_ts,
                born_host,
                store_ts,
                store_host,
                reconsume_times,
                prepared_offset,
                body_len,
            ) = header.unpack_from(buf, pos)
    except struct.error:
        raise RecordFormatError(f"truncated record at position {pos}") from None
    if magic != MESSAGE_MAGIC_CODE:
        raise RecordFormatError(f"bad magic code 0x{magic:08X} at position {pos}")
    end = pos + size
    if size < RECORD_FIXED_SIZE_V4 or end > len(buf):
        raise RecordFormatError(f"record size {size} at position {pos} does not fit the buffer")
    at = pos + header.size
    topic_at = at + body_len
    if body_len < 0 or topic_at + 3 > end:
        raise RecordFormatError(f"record at position {pos}: a body of {body_len} bytes does not fit TOTALSIZE {size}")
    props_at = topic_at + 1 + buf[topic_at]
    if props_at + 2 > end or buf[props_at] & 0x80 or props_at + 2 + (buf[props_at] << 8 | buf[props_at + 1]) != end:
        raise RecordFormatError(f"record at position {pos}: field lengths do not add up to TOTALSIZE {size}")
    try:
        topic = _topic_text(buf[topic_at + 1 : props_at])
        properties = string_to_properties(buf[props_at + 2 : end].decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise RecordFormatError(f"malformed record at position {pos}: {exc}") from None
    return MessageExt(
        topic,
        buf[at:topic_at],
        queue_id,
        queue_offset,
        physical_offset,
        properties,
        flag,
        sys_flag,
        born_ts,
        bytes_to_host(born_host),
        store_ts,
        bytes_to_host(store_host),
        reconsume_times,
        prepared_offset,
        crc,
        size,
        offset_msg_id_of(store_host, physical_offset),
    )


def _decode_copy(buf: bytes | bytearray | memoryview, pos: int) -> MessageExt:
    """Decode a record of a buffer that is not ``bytes`` (a segment's mmap, a bytearray)."""
    if pos + END_FILE_MIN_BLANK_LENGTH > len(buf):
        raise RecordFormatError(f"truncated record header at position {pos}")
    size, magic = _PREFIX.unpack_from(buf, pos)
    if magic != MESSAGE_MAGIC_CODE:
        raise RecordFormatError(f"bad magic code 0x{magic:08X} at position {pos}")
    if size < RECORD_FIXED_SIZE_V4 or pos + size > len(buf):
        raise RecordFormatError(f"record size {size} at position {pos} does not fit the buffer")
    try:
        return decode_record(bytes(buf[pos : pos + size]))
    except RecordFormatError as exc:
        raise RecordFormatError(f"record at position {pos}: {exc}") from None


def decode_records(buf: bytes | bytearray | memoryview) -> list[MessageExt]:
    """Decode concatenated records (a pull, query or view body) until the buffer ends."""
    if type(buf) is not bytes:
        buf = bytes(buf)
    out: list[MessageExt] = []
    append = out.append
    pos = 0
    n = len(buf)
    while pos < n:
        msg = decode_record(buf, pos)
        append(msg)
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


RECORD_HEAD_MAX = 88 + 2 * (HOST_V6_SIZE - HOST_V4_SIZE)  # a record's bytes through BODY's length, two IPv6 hosts


def topic_position(head: bytes | memoryview) -> int:
    """Where TOPIC starts in a record, from its first bytes (at least through BODY's length: 88, 12
    more per IPv6 host, RECORD_HEAD_MAX at most); what follows it is TOPIC and PROPERTIES alone."""
    if len(head) < RECORD_FIXED_SIZE_V4:
        raise RecordFormatError(f"a record head of {len(head)} bytes is shorter than any record")
    (sys_flag,) = _I32.unpack_from(head, 36)
    at = 84 + (12 if sys_flag & BORNHOST_V6_FLAG else 0) + (12 if sys_flag & STOREHOSTADDRESS_V6_FLAG else 0)
    if at + 4 > len(head):
        raise RecordFormatError(f"a record head of {len(head)} bytes ends before BODY's length")
    body_len: int
    (body_len,) = _I32.unpack_from(head, at)
    if body_len < 0:
        raise RecordFormatError(f"a record with a body of {body_len} bytes")
    return at + 4 + body_len


def decode_tail_properties(tail: bytes | memoryview) -> dict[str, str]:
    """The properties of a record from its TOPIC field on (RocketMQ's MessageDecoder.decodeProperties):
    what the SQL92 filter reads of a message, without its body."""
    if not tail:
        raise RecordFormatError("a record tail with no TOPIC")
    at = 1 + tail[0]
    if at + 2 > len(tail):
        raise RecordFormatError("a record tail shorter than its TOPIC and PROPERTIES lengths")
    end = at + 2 + (tail[at] << 8 | tail[at + 1])
    if end > len(tail):
        raise RecordFormatError("a record tail shorter than its PROPERTIES")
    try:
        return string_to_properties(bytes(tail[at + 2 : end]).decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise RecordFormatError(f"PROPERTIES are not UTF-8: {exc}") from None


# The compiled twins (brokers.engine.speedups), when built and not switched off.
speedups.install(
    globals(), "brokers.engine.common._message_codec_c", ("decode_record", "decode_records", "encode_record_tail")
)
