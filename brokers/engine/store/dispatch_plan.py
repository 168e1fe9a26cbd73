"""plan_dispatch: the dispatcher calls for a run of records already in the commit log.

A slave appends the master's bytes as they are and then derives, record by record, what each
contributes to its consume queue and to the index (``replica_appender.py``), as the master's put
path did when it stored them. This module is that derivation for a whole chunk at once, in one
function, so that its compiled twin (``_dispatch_plan_c.pyx``, see :mod:`brokers.engine.speedups`)
can do the common case without a Python call per record. The values come from ``dispatch.py``
(the functions recovery and the put path use), so every path derives the same units and keys.

Consecutive records of one queue with one store time (a producer's batch on the master) make one
batch, as the master's put path dispatched them::

    (topic, queue_id, first_queue_offset, store_timestamp, units, index_items)
        units        [(commit log offset, size, tag code), ...]  consecutive queue offsets
        index_items  [(key hash, commit log offset), ...]

A record that gets no consume queue unit (a prepared or rolled back transaction) is a batch of
its own, with ``units`` None and ``(commit log offset, size, key hashes or None)`` last; it goes
to the dispatcher's one-record call. ``arrivals`` lists ``(topic, queue_id, queue_offset + 1,
tag code)`` of every unit, for the long-polling listeners.
"""

from __future__ import annotations

from brokers.engine import speedups
from brokers.engine.common.message import (
    PROPERTY_KEYS,
    PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX,
    string_to_properties,
)
from brokers.engine.store.dispatch import (
    consume_queue_tags_code,
    goes_to_consume_queue,
    goes_to_index,
    index_key_hashes,
)
from brokers.engine.store.record_check import parse_for_dispatch

__all__ = ["plan_dispatch", "record_keys"]

Unit = tuple[int, int, int]
# (topic, queueId, first queue offset, store timestamp, units, index items): a run of consecutive units
# with the (hash, phys) index items of their keys, or a record without a unit (None) with (phys, size, hashes).
UnitsBatch = tuple[str, int, int, int, list[Unit], list[tuple[int, int]]]
KeysOnly = tuple[str, int, int, int, None, tuple[int, int, "list[int] | None"]]
Batch = UnitsBatch | KeysOnly
Arrival = tuple[str, int, int, int]


def record_keys(
    topic: str, sys_flag: int, store_timestamp: int, properties: str
) -> tuple[int | None, list[int] | None]:
    """(tag code or None without a consume queue unit, index key hashes or None) of one record."""
    props = string_to_properties(properties)
    tags = consume_queue_tags_code(topic, props, store_timestamp) if goes_to_consume_queue(sys_flag) else None
    hashes = None
    if goes_to_index(sys_flag) and (PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX in props or PROPERTY_KEYS in props):
        hashes = index_key_hashes(topic, props)
    return tags, hashes


def plan_dispatch(chunk: bytes, base: int, records: list[tuple[int, int]]) -> tuple[list[Batch], list[Arrival]]:
    """(batches, arrivals) of the records at ``(position, size)`` in ``chunk``, whose first byte is
    at commit log offset ``base`` (see the module docstring)."""
    batches: list[Batch] = []
    arrivals: list[Arrival] = []
    units: list[Unit] | None = None
    items: list[tuple[int, int]] = []
    run_topic, run_queue, run_next, run_ts = "", -1, -1, 0
    for pos, size in records:
        phys = base + pos
        topic, queue_id, queue_offset, sys_flag, store_ts, props = parse_for_dispatch(chunk, pos)
        tags, hashes = record_keys(topic, sys_flag, store_ts, props)
        if tags is None:  # no unit: its keys only, on its own
            batches.append((topic, queue_id, queue_offset, store_ts, None, (phys, size, hashes)))
            units = None
            continue
        if (
            units is None
            or queue_offset != run_next
            or queue_id != run_queue
            or store_ts != run_ts
            or topic != run_topic
        ):
            units, items = [], []
            batches.append((topic, queue_id, queue_offset, store_ts, units, items))
            run_topic, run_queue, run_ts = topic, queue_id, store_ts
        run_next = queue_offset + 1
        units.append((phys, size, tags))
        if hashes:
            for h in hashes:
                items.append((h, phys))
        arrivals.append((topic, queue_id, queue_offset + 1, tags))
    return batches, arrivals


# The compiled twin (brokers.engine.speedups), when built and not switched off.
speedups.install(globals(), "brokers.engine.store._dispatch_plan_c", ("plan_dispatch",))
