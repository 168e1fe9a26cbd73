"""REGISTER_BROKER bodies: RegisterBrokerBody in its JSON and compressed forms.

JSON form (``compressed=false``)::

    {"filterServerList": [...],
     "topicConfigSerializeWrapper": {"dataVersion": {"counter": n, "timestamp": ms},
                                     "topicConfigTable": {"<topic>": {TopicConfig}, ...}}}

Brokers older than V3_0_11 send the bare TopicConfigSerializeWrapper; both are accepted.

Compressed form (``compressed=true``): a zlib stream holding, with 4-byte big-endian ints::

    int len, DataVersion JSON | int topic count | per topic: int len, "name read write perm filterType"
    | int len, JSON array of filter server addresses

The text form of a topic carries no topicSysFlag and no order flag (they decode as 0 / false). RocketMQ 5.x
appends a sixth field to it (the topic's attributes as JSON) and, after the filter servers, ``int count | per
entry: int len, TopicQueueMappingInfo JSON`` (static topics); both are read past and ignored.

A 5.x broker with ``compressedRegister=true`` sends the compressed form under a header that says
``compressed=false`` (``BrokerOuterAPI.registerBrokerAll`` sets the flag false whatever it encodes), so a body
that starts with a zlib header (RFC 1950: CM 8, a check value divisible by 31; a JSON body starts with ``{``)
is read as the compressed form whatever the header says.
"""

from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass, field
from typing import Any

from brokers.engine.common import json_compat
from brokers.engine.common.topic_config import TopicConfig

_INT = struct.Struct(">i")
assert _INT.size == 4
MAX_DECOMPRESSED_SIZE = 64 * 1024 * 1024  # refuse zlib bombs; 64 MiB is ~500k topics
MAX_TOPICS_PER_REGISTRATION = 65_536  # a broker with more topics than this is no deployment we serve


class RegisterBodyError(ValueError):
    """A registration body that cannot be decoded; the message says why."""


@dataclass(slots=True)
class RegisterBrokerBody:
    """The decoded body: the TopicConfigSerializeWrapper JSON form and the filter servers."""

    topic_config_wrapper: dict[str, Any] = field(
        default_factory=lambda: {"dataVersion": {"counter": 0, "timestamp": 0}, "topicConfigTable": {}}
    )
    filter_server_list: list[str] = field(default_factory=list)


def decode_register_body(body: bytes, compressed: bool = False) -> RegisterBrokerBody:
    """Decode a REGISTER_BROKER body; an empty body is an empty registration (counter 0, no topics)."""
    if not body:
        return RegisterBrokerBody()
    if compressed or is_zlib_stream(body):
        try:
            return _decode_compressed(body)
        except RegisterBodyError:
            raise
        except (ValueError, UnicodeDecodeError, RecursionError, TypeError) as exc:  # JSON or text inside the stream
            raise RegisterBodyError(f"compressed register body is malformed: {exc}") from None
    try:
        data = json_compat.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise RegisterBodyError(f"register body is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise RegisterBodyError("register body is not a JSON object")
    if "topicConfigSerializeWrapper" in data:
        wrapper = data.get("topicConfigSerializeWrapper") or {}
        filters = data.get("filterServerList") or []
    else:  # pre-V3_0_11 brokers send the wrapper alone
        wrapper, filters = data, []
    if not isinstance(wrapper, dict) or not isinstance(wrapper.get("topicConfigTable", {}), dict):
        raise RegisterBodyError("topicConfigSerializeWrapper.topicConfigTable is not an object")
    if not isinstance(filters, list):
        raise RegisterBodyError("filterServerList is not an array")
    wrapper = {"dataVersion": wrapper.get("dataVersion"), "topicConfigTable": wrapper.get("topicConfigTable") or {}}
    return RegisterBrokerBody(wrapper, [str(f) for f in filters])


def is_zlib_stream(body: bytes) -> bool:
    """Whether ``body`` opens with a zlib header: CMF says deflate (CM 8, a window of at most 32 KiB), and the
    two header bytes, big-endian, are a multiple of 31 (RFC 1950). No JSON text starts so."""
    return len(body) >= 2 and body[0] & 0x0F == 8 and body[0] >> 4 <= 7 and ((body[0] << 8) | body[1]) % 31 == 0


def _decode_compressed(body: bytes) -> RegisterBrokerBody:
    try:
        inflater = zlib.decompressobj()
        raw = inflater.decompress(body, MAX_DECOMPRESSED_SIZE)
        if inflater.unconsumed_tail:
            raise RegisterBodyError(f"compressed register body inflates beyond {MAX_DECOMPRESSED_SIZE} bytes")
    except zlib.error as exc:
        raise RegisterBodyError(f"compressed register body is not a zlib stream: {exc}") from None
    pos = 0

    def chunk() -> bytes:
        nonlocal pos
        if pos + 4 > len(raw):
            raise RegisterBodyError("compressed register body is truncated")
        (length,) = _INT.unpack_from(raw, pos)
        pos += 4
        if length < 0 or pos + length > len(raw):
            raise RegisterBodyError("compressed register body is truncated")
        pos += length
        return raw[pos - length : pos]

    data_version = json_compat.loads(chunk())
    if pos + 4 > len(raw):
        raise RegisterBodyError("compressed register body is truncated")
    (count,) = _INT.unpack_from(raw, pos)
    pos += 4
    if not 0 <= count <= MAX_TOPICS_PER_REGISTRATION:
        raise RegisterBodyError(f"the registration lists {count} topics, not within 0..{MAX_TOPICS_PER_REGISTRATION}")
    table: dict[str, dict[str, Any]] = {}
    for _ in range(count):
        parts = chunk().decode("utf-8").split(" ")
        if len(parts) < 5:
            raise RegisterBodyError(f"topic config text {' '.join(parts)[:200]!r} has fewer than 5 fields")
        try:
            config = TopicConfig(parts[0], int(parts[1]), int(parts[2]), int(parts[3]), parts[4])
        except ValueError:
            raise RegisterBodyError(f"topic config text {' '.join(parts)[:200]!r} holds a non-integer") from None
        table[config.topic_name] = config.to_json()
    filters = json_compat.loads(chunk()) if pos < len(raw) else []
    return RegisterBrokerBody({"dataVersion": data_version, "topicConfigTable": table}, [str(f) for f in filters or []])


def encode_register_body(
    topic_configs: list[TopicConfig] | dict[str, TopicConfig],
    data_version: dict[str, Any],
    filter_server_list: list[str] | None = None,
    *,
    compressed: bool = False,
) -> bytes:
    """Build a REGISTER_BROKER body (what a broker sends; used by our broker and by tests)."""
    configs = list(topic_configs.values()) if isinstance(topic_configs, dict) else list(topic_configs)
    filters = list(filter_server_list or [])
    if not compressed:
        body = {
            "filterServerList": filters,
            "topicConfigSerializeWrapper": {
                "dataVersion": data_version,
                "topicConfigTable": {c.topic_name: c.to_json() for c in configs},
            },
        }
        return json.dumps(body, separators=(",", ":"), sort_keys=True).encode("utf-8")
    out = bytearray()

    def put(data: bytes) -> None:
        out.extend(_INT.pack(len(data)))
        out.extend(data)

    put(json.dumps(data_version, separators=(",", ":"), sort_keys=True).encode("utf-8"))
    out.extend(_INT.pack(len(configs)))
    for c in configs:
        put(f"{c.topic_name} {c.read_queue_nums} {c.write_queue_nums} {c.perm} {c.topic_filter_type}".encode("utf-8"))
    put(json.dumps(filters).encode("utf-8"))
    return zlib.compress(bytes(out), 9)


def body_crc32(body: bytes) -> int:
    """The masked CRC32 RocketMQ puts in ``bodyCrc32`` (top bit cleared)."""
    return zlib.crc32(body) & 0x7FFFFFFF
