"""Messages as producers send them and as the store hands them back.

Properties travel as one string: ``name\\x01value\\x02name\\x01value`` (RocketMQ's
MessageDecoder.messageProperties2String); the well-known keys are RocketMQ's MessageConst.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import methodcaller

from brokers.engine import speedups

NAME_VALUE_SEPARATOR = "\x01"
PROPERTY_SEPARATOR = "\x02"

PROPERTY_KEYS = "KEYS"
PROPERTY_TAGS = "TAGS"
PROPERTY_WAIT_STORE_MSG_OK = "WAIT"
PROPERTY_DELAY_TIME_LEVEL = "DELAY"
PROPERTY_RETRY_TOPIC = "RETRY_TOPIC"
PROPERTY_REAL_TOPIC = "REAL_TOPIC"
PROPERTY_REAL_QUEUE_ID = "REAL_QID"
PROPERTY_TRANSACTION_PREPARED = "TRAN_MSG"
PROPERTY_PRODUCER_GROUP = "PGROUP"
PROPERTY_MIN_OFFSET = "MIN_OFFSET"
PROPERTY_MAX_OFFSET = "MAX_OFFSET"
PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX = "UNIQ_KEY"
PROPERTY_ORIGIN_MESSAGE_ID = "ORIGIN_MESSAGE_ID"
PROPERTY_RECONSUME_TIME = "RECONSUME_TIME"
PROPERTY_MAX_RECONSUME_TIMES = "MAX_RECONSUME_TIMES"
PROPERTY_CLUSTER = "CLUSTER"
PROPERTY_MSG_REGION = "MSG_REGION"
PROPERTY_TRACE_SWITCH = "TRACE_ON"
PROPERTY_CONSUME_START_TIMESTAMP = "CONSUME_START_TIME"
PROPERTY_LAST_ERROR = "GANTRY_LAST_ERROR"  # Gantry: why the consumer sent the message back (its listener's exception)
MAX_LAST_ERROR = 512  # characters kept of it


def last_error_text(text: str) -> str:
    """``text`` fit for a property value: control characters (the property separators among them)
    become spaces, at most MAX_LAST_ERROR characters."""
    clean = "".join(" " if ord(c) < 32 or ord(c) == 127 else c for c in text[: MAX_LAST_ERROR * 2])
    return clean.strip()[:MAX_LAST_ERROR]


KEY_SEPARATOR = " "


def properties_to_string(properties: dict[str, str]) -> str:
    """Encode properties as Java 4.9.1+ does: no trailing separator, empty values skipped."""
    return PROPERTY_SEPARATOR.join(
        [f"{k}{NAME_VALUE_SEPARATOR}{v}" for k, v in properties.items() if k and v is not None and v != ""]
    )


_split_pair = methodcaller("split", NAME_VALUE_SEPARATOR, 1)


def string_to_properties(text: str) -> dict[str, str]:
    """Decode a properties string tolerantly (trailing separators, empty keys or values dropped).

    Well-formed strings (every item ``name\x01value``, none empty) take one pass in C; anything
    else falls back to checking item by item.
    """
    if not text:
        return {}
    try:
        out = dict(map(_split_pair, text.rstrip(PROPERTY_SEPARATOR).split(PROPERTY_SEPARATOR)))
    except ValueError:  # an item without a separator
        return _string_to_properties_tolerant(text)
    if "" in out or "" in out.values():
        return _string_to_properties_tolerant(text)
    return out


def _string_to_properties_tolerant(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in text.split(PROPERTY_SEPARATOR):
        pos = item.find(NAME_VALUE_SEPARATOR)
        if 0 < pos < len(item) - 1:
            out[item[:pos]] = item[pos + 1 :]
    return out


def tag_hash(tags: str | None) -> int:
    """Java ``String.hashCode()`` of the tag, sign-extended to a long; 0 without a tag.

    >>> tag_hash("TagA")
    2598919
    >>> tag_hash("payment")
    -786681338
    """
    if not tags:
        return 0
    h = 0
    if tags.isascii():  # one UTF-16 unit per byte: iterate the bytes (ints) directly
        for unit in tags.encode("ascii"):
            h = (31 * h + unit) & 0xFFFFFFFF
    else:
        data = tags.encode("utf-16-be")
        for unit in _utf16_units(data):
            h = (31 * h + unit) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def _utf16_units(data: bytes) -> list[int]:
    """The big-endian UTF-16 code units of ``data`` as ints."""
    return [(data[i] << 8) | data[i + 1] for i in range(0, len(data), 2)]


@dataclass(slots=True)
class Message:
    """A message a producer sends: topic, body, and string properties (tags, keys among them)."""

    topic: str
    body: bytes
    tags: str | None = None
    keys: str | list[str] | None = None
    properties: dict[str, str] = field(default_factory=dict)
    flag: int = 0

    def all_properties(self) -> dict[str, str]:
        """The properties to put on the wire: user properties plus TAGS and KEYS."""
        props = dict(self.properties)
        if self.tags:
            props[PROPERTY_TAGS] = self.tags
        if self.keys:
            props[PROPERTY_KEYS] = self.keys if isinstance(self.keys, str) else KEY_SEPARATOR.join(self.keys)
        return props


@dataclass(slots=True)
class MessageExt:
    """A stored message as a record decodes to (see ``brokers.engine.common.message_codec``)."""

    topic: str
    body: bytes
    queue_id: int
    queue_offset: int
    commit_log_offset: int
    properties: dict[str, str]
    flag: int = 0
    sys_flag: int = 0
    born_timestamp: int = 0
    born_host: str = "127.0.0.1:0"
    store_timestamp: int = 0
    store_host: str = "127.0.0.1:0"
    reconsume_times: int = 0
    prepared_transaction_offset: int = 0
    body_crc: int = 0
    store_size: int = 0
    msg_id: str = ""  # offset message id (upper-case hex of store host + physical offset)

    @property
    def tags(self) -> str | None:
        return self.properties.get(PROPERTY_TAGS)

    @property
    def keys(self) -> str | None:
        return self.properties.get(PROPERTY_KEYS)

    @property
    def uniq_key(self) -> str | None:
        return self.properties.get(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)


# The compiled twin (brokers.engine.speedups), when built and not switched off.
speedups.install(globals(), "brokers.engine.common._message_c", ("string_to_properties",))
