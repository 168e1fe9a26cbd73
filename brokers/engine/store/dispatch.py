"""What a stored record contributes to its consume queue and to the index.

Used when a put dispatches a record it just wrote and when recovery rebuilds units and index
entries from the commit log, so both derive the same values.
"""

from __future__ import annotations

from brokers.engine.common.constants import SCHEDULE_TOPIC
from brokers.engine.common.message import (
    KEY_SEPARATOR,
    PROPERTY_DELAY_TIME_LEVEL,
    PROPERTY_KEYS,
    PROPERTY_TAGS,
    PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX,
)
from brokers.engine.common.message_codec import (
    TRANSACTION_PREPARED_TYPE,
    TRANSACTION_ROLLBACK_TYPE,
    TRANSACTION_TYPE_MASK,
    tags_code,
)
from brokers.engine.store.index_file import key_hash

# messageDelayLevel "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h" (reference §7.5).
DELAY_LEVELS_MS = (
    1_000,
    5_000,
    10_000,
    30_000,
    60_000,
    120_000,
    180_000,
    240_000,
    300_000,
    360_000,
    420_000,
    480_000,
    540_000,
    600_000,
    1_200_000,
    1_800_000,
    3_600_000,
    7_200_000,
)


def goes_to_consume_queue(sys_flag: int) -> bool:
    """Prepared and rollback transaction records get no consume queue unit."""
    return (sys_flag & TRANSACTION_TYPE_MASK) not in (TRANSACTION_PREPARED_TYPE, TRANSACTION_ROLLBACK_TYPE)


def goes_to_index(sys_flag: int) -> bool:
    """Rollback transaction records are not indexed."""
    return (sys_flag & TRANSACTION_TYPE_MASK) != TRANSACTION_ROLLBACK_TYPE


def delivery_timestamp(properties: dict[str, str], store_timestamp: int) -> int | None:
    """For a SCHEDULE_TOPIC_XXXX record: store time + the DELAY level's delay (None without one)."""
    try:
        level = int(properties.get(PROPERTY_DELAY_TIME_LEVEL, "0"))
    except ValueError:
        return None
    if level <= 0:
        return None
    return store_timestamp + DELAY_LEVELS_MS[min(level, len(DELAY_LEVELS_MS)) - 1]


def consume_queue_tags_code(
    topic: str, properties: dict[str, str], store_timestamp: int, given: int | None = None
) -> int:
    """Return the unit's tag slot: the delivery time for delayed messages, else the tag hash."""
    if topic == SCHEDULE_TOPIC:
        when = delivery_timestamp(properties, store_timestamp)
        if when is not None:
            return when
    if given is not None:
        return given
    return tags_code(properties.get(PROPERTY_TAGS))


def index_key_hashes(topic: str, properties: dict[str, str]) -> list[int]:
    """Return the index hashes of a message: its UNIQ_KEY, then each non-empty KEYS entry."""
    hashes = []
    uniq = properties.get(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX)
    if uniq:
        hashes.append(key_hash(topic, uniq))
    keys = properties.get(PROPERTY_KEYS)
    if keys:
        hashes.extend(key_hash(topic, k) for k in keys.split(KEY_SEPARATOR) if k)
    return hashes
