"""Helpers shared by the store tests: small configs, messages, simulated crashes."""

from __future__ import annotations

import os

from brokers.engine.common.message_codec import decode_records
from brokers.engine.store import DefaultMessageStore, MessageExtBrokerInner, StoreConfig

SMALL = dict(
    commitlog_file_size=4096,  # a few dozen small records per segment: roll-overs happen
    consume_queue_units_per_file=16,
    max_index_hash_slots=64,
    max_index_count=200,
    flush_interval_commitlog_ms=50,
    flush_interval_consume_queue_ms=50,
)


def make_config(path, **overrides) -> StoreConfig:
    return StoreConfig(store_dir=str(path), **{**SMALL, **overrides})


def inner(
    topic: str = "TopicTest",
    queue_id: int = 0,
    body: bytes = b"hello",
    *,
    tags: str | None = None,
    keys: str | None = None,
    uniq: str | None = None,
    **kw,
) -> MessageExtBrokerInner:
    props: dict[str, str] = dict(kw.pop("properties", {}))
    if tags:
        props["TAGS"] = tags
    if keys:
        props["KEYS"] = keys
    if uniq:
        props["UNIQ_KEY"] = uniq
    return MessageExtBrokerInner(
        topic=topic,
        queue_id=queue_id,
        body=body,
        properties=props,
        born_timestamp=1_700_000_000_000,
        born_host="10.0.0.5:51000",
        **kw,
    )


def crash(store: DefaultMessageStore) -> None:
    """Abandon an open store the way a killed process does: no final checkpoint, the abort file
    stays; written bytes are already in the files (shared maps), and the OS lock is dropped."""
    store._flags.running = False
    store._flush_commitlog.shutdown()
    store._flush_logics_service.shutdown()
    store._close_parts()
    store._lock_file.release()
    assert os.path.exists(store.config.abort_path)


def bodies(store: DefaultMessageStore, topic: str = "TopicTest", queue_id: int = 0) -> list[bytes]:
    """Every body of a queue, pulled from its min offset to its end."""
    out: list[bytes] = []
    offset = store.get_min_offset_in_queue(topic, queue_id)
    while True:
        r = store.get_message("g", topic, queue_id, offset, 32)
        if not r.records:
            return out
        out += [m.body for m in decode_records(b"".join(r.records))]
        offset = r.next_begin_offset
