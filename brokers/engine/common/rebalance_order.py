"""The order a consumer sorts a topic's queues and its group's client ids in before it allocates.

Every RocketMQ consumer sorts ``mqAll`` and ``cidAll`` (``RebalanceImpl.rebalanceByTopic``:
``Collections.sort``) and then asks its strategy for its own share; the group stays whole only
because every member sorts alike. Java sorts strings with ``String.compareTo``, which compares
UTF-16 code units, and queues with ``MessageQueue.compareTo``: topic, then broker name, then queue
id. Python compares code points; the two differ only for characters beyond U+FFFF (a supplementary
character is a surrogate pair, 0xD800-0xDBFF, which sorts below U+E000-U+FFFF in Java), so the
Java key is used only when such a character is present.

The one implementation, used by the engine's client (``client/rebalance.py`` and the strategies of
``client/allocation/``) and by ``consumers.allocation`` (previews, what-if).
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import attrgetter

from brokers.engine.common.message_queue import MessageQueue

__all__ = ["java_string_key", "sort_cids", "sort_for_rebalance", "sort_message_queues"]


def java_string_key(text: str) -> bytes:
    """Return a key that orders strings as Java's ``String.compareTo`` does.

    Java compares UTF-16 code units, Python compares code points; they disagree only for
    characters beyond U+FFFF. Big-endian UTF-16 bytes compare exactly like code units.
    """
    return text.encode("utf-16-be", "surrogatepass")


def _beyond_bmp(texts: Iterable[str]) -> bool:
    return any(not t.isascii() and max(t) > "\uffff" for t in texts)


_topic_of = attrgetter("topic")
_broker_name_of = attrgetter("broker_name")
_queue_id_of = attrgetter("queue_id")


def _java_topic_key(mq: MessageQueue) -> bytes:
    return java_string_key(mq.topic)


def _java_broker_name_key(mq: MessageQueue) -> bytes:
    return java_string_key(mq.broker_name)


def sort_cids(cid_all: Iterable[str]) -> list[str]:
    """Sort client ids as ``Collections.sort(cidAll)`` does (duplicates are kept)."""
    cids = list(cid_all)
    if _beyond_bmp(cids):
        return sorted(cids, key=java_string_key)
    return sorted(cids)


def sort_message_queues(mq_all: Iterable[MessageQueue]) -> list[MessageQueue]:
    """Sort queues as ``Collections.sort(mqAll)`` does: topic, broker name, queue id.

    Three stable sorts, least significant field first, give the same order as one sort on
    ``(topic, broker_name, queue_id)`` at half the cost: no key tuples to build and compare.
    """
    queues = list(mq_all)
    java_order = _beyond_bmp(set(map(_topic_of, queues))) or _beyond_bmp(set(map(_broker_name_of, queues)))
    queues.sort(key=_queue_id_of)
    queues.sort(key=_java_broker_name_key if java_order else _broker_name_of)
    queues.sort(key=_java_topic_key if java_order else _topic_of)
    return queues


def sort_for_rebalance(mq_all: Iterable[MessageQueue], cid_all: Iterable[str]) -> tuple[list[MessageQueue], list[str]]:
    """Return ``(mq_all, cid_all)`` sorted the way ``rebalanceByTopic`` sorts them.

    The client builds ``mqAll`` from a set, so a queue listed twice appears once.
    """
    return sort_message_queues(dict.fromkeys(mq_all)), sort_cids(cid_all)
