"""Reading the answer of Gantry's GANTRY_GET_QUEUE_STATS: every queue's offsets and every group's
committed offsets of one broker, at one instant of its clock.

The request is a Gantry extension (``brokers/engine/broker/processors/gantry_ext.py``,
docs/protocol.md); the metrics sampler sends it once per master per round. Named
``BrokerQueueStats`` (not ``BrokerStats``, the broker's own stats in
``brokers/engine/broker/broker_stats.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from brokers.engine.client.admin_bodies import as_dict, load_object

__all__ = ["BrokerQueueStats", "GroupOffset", "QueueStat", "parse_queue_stats"]


@dataclass(frozen=True)
class QueueStat:
    topic: str
    queue_id: int
    min_offset: int
    max_offset: int
    put_bytes: int | None  # record bytes put since the broker started; None where the broker does not say


@dataclass(frozen=True)
class GroupOffset:
    group: str
    topic: str
    queue_id: int
    committed_offset: int
    max_offset: int


@dataclass(frozen=True)
class BrokerQueueStats:
    broker_name: str
    addr: str
    timestamp_ms: int
    queues: tuple[QueueStat, ...]
    offsets: tuple[GroupOffset, ...]


def parse_queue_stats(name: str, addr: str, body: bytes) -> BrokerQueueStats:
    """The stats of broker ``name`` at ``addr`` from its GANTRY_GET_QUEUE_STATS body."""
    obj = as_dict(load_object(body))
    queues = tuple(
        QueueStat(
            str(q["topic"]),
            int(q["queueId"]),
            int(q["minOffset"]),
            int(q["maxOffset"]),
            None if q.get("putBytes") is None else int(q["putBytes"]),
        )
        for q in obj.get("queues") or ()
    )
    offsets = tuple(
        GroupOffset(str(o["group"]), str(o["topic"]), int(o["queueId"]), int(o["offset"]), int(o["maxOffset"]))
        for o in obj.get("offsets") or ()
    )
    return BrokerQueueStats(str(obj.get("brokerName") or name), addr, int(obj["timestamp"]), queues, offsets)
