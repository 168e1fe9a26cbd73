"""CONSISTENT_HASH: RocketMQ's ``AllocateMessageQueueConsistentHash`` and ``ConsistentHashRouter``.

Every client owns ``virtual_node_cnt`` points on a 32-bit ring; a queue belongs to the client
of the first point at or after the queue's own hash, wrapping to the lowest point. Adding or
removing one client moves only the queues next to that client's points.

Hash (``ConsistentHashRouter.MD5Hash``): MD5 of the key's bytes; the first four digest bytes,
each masked to ``0..255``, are shifted into a ``long`` big-endian, so the hash is an unsigned
32-bit integer in ``[0, 2**32)``. Keys: a queue hashes ``MessageQueue.toString()``, e.g.
``"MessageQueue [topic=T, brokerName=broker-a, queueId=0]"``; client ``cid``'s virtual node
``i`` hashes ``f"{cid}-{i}"``. Java encodes keys with the JVM's default charset; we use UTF-8
(the default from JDK 18 on and on usual Linux locales). A character that cannot be encoded
becomes ``?``, as in Java.

Ring building follows ``TreeMap.put`` exactly: clients are added in ``cid_all`` order, each
point in ``i`` order; when two points collide the later one takes the slot. A client listed
twice gets its second batch numbered after the points it still holds (``getExistingReplicas``).
With ``virtual_node_cnt == 0`` the ring is empty and nobody gets any queue.

Worked example, 9 queues ``T``/broker_a..c/0..2, clients ``cid0..cid3``, 10 virtual nodes
(values checked against the JDK's ``MessageDigest``/``TreeMap`` and ``md5sum``)::

    md5("MessageQueue [topic=T, brokerName=broker_a, queueId=0]") = 33 ee ba 64 ...
    md5_hash(...) = 0x33eeba64 = 871283300
    ring points nearby: 800361095 (cid0-5), 912269600 (cid2-5)  -> a0 goes to cid2

    cid0  (none)     cid1  b1 b2     cid2  a0 b0 c1 c2     cid3  a1 a2 c0

Forty points for four clients still leave ``cid0`` idle: consistent hashing trades balance
for stability (adding or removing a client moves only that client's queues).
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.client.allocation.errors import StrategyParameterError
from brokers.engine.client.allocation.strategy import (
    Assignment,
    check_arguments,
    check_group_arguments,
    unique_cids,
)

__all__ = ["AllocateMessageQueueConsistentHash", "ConsistentHashRouter", "md5_hash", "md5_hashes"]

HashFunction = Callable[[str], int]

# RocketMQ's default: ten points per client is its compromise between balance and ring size.
DEFAULT_VIRTUAL_NODE_CNT = 10


def md5_hash(key: str, _md5: Callable[[bytes], Any] = hashlib.md5) -> int:
    """Return RocketMQ's default ring hash: the first 4 MD5 bytes as an unsigned big-endian int.

    The first 8 hex digits of the digest are those 4 bytes, most significant first, which is
    what Java's ``h <<= 8; h |= digest[i] & 0xFF`` builds. (Parsing hex allocates no tuple, so
    hashing 10,000 keys does not wake the cyclic garbage collector.)
    """
    try:
        data = key.encode()
    except UnicodeEncodeError:  # a lone surrogate: Java's encoder writes '?'
        data = key.encode("utf-8", "replace")
    return int(_md5(data).hexdigest()[:8], 16)


def md5_hashes(
    keys: Iterable[str], _md5: Callable[[bytes], Any] = hashlib.md5, _from_bytes: Callable[..., int] = int.from_bytes
) -> list[int]:
    """Return :func:`md5_hash` of each key, in one tight loop (whole-group rings hash 10,000s).

    The first four digest bytes read big-endian are the same unsigned int the hex digits give.
    """
    try:
        return [_from_bytes(_md5(key.encode()).digest()[:4], "big") for key in keys]
    except UnicodeEncodeError:  # rare: a lone surrogate somewhere; hash key by key
        return [md5_hash(key) for key in keys]


class ConsistentHashRouter:
    """A hash ring of client ids, built exactly as RocketMQ's ``ConsistentHashRouter``."""

    def __init__(
        self,
        cids: Iterable[str],
        virtual_node_cnt: int,
        hash_function: HashFunction = md5_hash,
    ) -> None:
        if virtual_node_cnt < 0:
            raise StrategyParameterError(f"illegal virtual node counts :{virtual_node_cnt}")
        self._hash = hash_function
        cid_list = list(cids)
        ring: dict[int, str] = {}
        if len(set(cid_list)) == len(cid_list):
            # Distinct clients: every batch is numbered from 0, later puts win collisions
            # (dict(zip()) keeps the last owner of a repeated point, as TreeMap.put does).
            keys = [f"{cid}-{i}" for cid in cid_list for i in range(virtual_node_cnt)]
            owners = [cid for cid in cid_list for _ in range(virtual_node_cnt)]
            ring = dict(zip(self._hash_all(keys), owners))
        else:
            replicas: dict[str, int] = {}  # points each client holds on the ring right now
            for cid in cid_list:
                existing = replicas.get(cid, 0)
                for i in range(virtual_node_cnt):
                    point = hash_function(f"{cid}-{i + existing}")
                    previous = ring.get(point)
                    if previous is not None:
                        replicas[previous] -= 1
                    ring[point] = cid
                    replicas[cid] = replicas.get(cid, 0) + 1
        self._points = sorted(ring)
        self._owners = [ring[p] for p in self._points]

    def __len__(self) -> int:
        return len(self._points)

    def route_node(self, object_key: str) -> str | None:
        """Return the client owning ``object_key``, or None on an empty ring."""
        if not self._points:
            return None
        slot = bisect_left(self._points, self._hash(object_key))
        return self._owners[slot if slot < len(self._points) else 0]

    def route_nodes(self, object_keys: Iterable[str]) -> list[str | None]:
        """Return :meth:`route_node` for each key (one tight loop for whole-group use)."""
        points = self._points
        if not points:
            return [None for _ in object_keys]
        wrapped = self._owners + self._owners[:1]  # past the highest point: the lowest's owner
        return [wrapped[bisect_left(points, h)] for h in self._hash_all(object_keys)]

    def _hash_all(self, keys: Iterable[str]) -> list[int]:
        if self._hash is md5_hash:
            return md5_hashes(keys)
        return [self._hash(key) for key in keys]


class AllocateMessageQueueConsistentHash:
    """Route each queue to a client on a consistent-hash ring (``CONSISTENT_HASH``)."""

    name = "CONSISTENT_HASH"

    def __init__(
        self,
        virtual_node_cnt: int = DEFAULT_VIRTUAL_NODE_CNT,
        hash_function: HashFunction | None = None,
    ) -> None:
        if isinstance(virtual_node_cnt, bool) or not isinstance(virtual_node_cnt, int):
            raise StrategyParameterError(f"virtual_node_cnt must be an int, got {virtual_node_cnt!r}")
        if virtual_node_cnt < 0:
            raise StrategyParameterError(f"illegal virtualNodeCnt :{virtual_node_cnt}")
        self.virtual_node_cnt = virtual_node_cnt
        self.hash_function: HashFunction = hash_function or md5_hash

    def router(self, cid_all: Iterable[str]) -> ConsistentHashRouter:
        """Build the ring for ``cid_all``."""
        return ConsistentHashRouter(cid_all, self.virtual_node_cnt, self.hash_function)

    def allocate(
        self,
        consumer_group: str,
        current_cid: str,
        mq_all: Sequence[MessageQueue],
        cid_all: Sequence[str],
    ) -> list[MessageQueue]:
        """Build the ring and keep the queues that route to ``current_cid`` (Java's way)."""
        if not check_arguments(consumer_group, current_cid, mq_all, cid_all):
            return []
        router = self.router(cid_all)
        return [mq for mq in mq_all if router.route_node(str(mq)) == current_cid]

    def allocate_group(
        self,
        consumer_group: str,
        mq_all: Sequence[MessageQueue],
        cid_all: Sequence[str],
    ) -> Assignment:
        """Build the ring once and route every queue once."""
        if not check_group_arguments(mq_all, cid_all):
            return {}
        result: Assignment = {cid: [] for cid in unique_cids(cid_all)}
        router = self.router(cid_all)
        for mq, owner in zip(mq_all, router.route_nodes(str(mq) for mq in mq_all)):
            if owner is not None:
                result[owner].append(mq)
        return result

    def __repr__(self) -> str:
        return f"AllocateMessageQueueConsistentHash(virtual_node_cnt={self.virtual_node_cnt})"
