"""AVG: RocketMQ's ``AllocateMessageQueueAveragely``, the default strategy.

Cut the sorted queue list into one contiguous block per client, in client order. With ``n``
queues and ``c`` clients, the first ``n % c`` clients get ``n // c + 1`` queues, the rest
``n // c``; when ``n <= c`` the first ``n`` clients get one queue each and the rest none.

Worked example, 9 queues on 3 brokers, 4 clients (the seed articles' case)::

    queues  a0 a1 a2 b0 b1 b2 c0 c1 c2      (broker_a..c, queue ids 0..2)
    mod = 9 % 4 = 1, so client 0 takes 9 // 4 + 1 = 3 and the others 2 each

    client  index  averageSize  startIndex           queues
    cid0    0      3            0 * 3 = 0            a0 a1 a2
    cid1    1      2            1 * 2 + 1 = 3        b0 b1
    cid2    2      2            2 * 2 + 1 = 5        b2 c0
    cid3    3      2            3 * 2 + 1 = 7        c1 c2
"""

from __future__ import annotations

from collections.abc import Sequence

from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.client.allocation.strategy import (
    Assignment,
    check_arguments,
    check_group_arguments,
    unique_cids,
)

__all__ = ["AllocateMessageQueueAveragely", "averagely_block"]


def averagely_block(queue_count: int, cid_count: int, index: int) -> tuple[int, int]:
    """Return ``(start, length)`` of the block AVG gives the client at ``index``.

    Java: ``averageSize = n <= c ? 1 : (mod > 0 && index < mod ? n / c + 1 : n / c)``,
    ``startIndex = mod > 0 && index < mod ? index * averageSize : index * averageSize + mod``,
    ``range = min(averageSize, n - startIndex)`` (a negative range means no queue).
    """
    mod = queue_count % cid_count
    if queue_count <= cid_count:
        average_size = 1
    elif mod > 0 and index < mod:
        average_size = queue_count // cid_count + 1
    else:
        average_size = queue_count // cid_count
    if mod > 0 and index < mod:
        start = index * average_size
    else:
        start = index * average_size + mod
    return start, max(0, min(average_size, queue_count - start))


class AllocateMessageQueueAveragely:
    """Give each client one contiguous block of the sorted queues (``AVG``)."""

    name = "AVG"

    def allocate(
        self,
        consumer_group: str,
        current_cid: str,
        mq_all: Sequence[MessageQueue],
        cid_all: Sequence[str],
    ) -> list[MessageQueue]:
        """Return ``current_cid``'s block; see the module docstring for the arithmetic."""
        if not check_arguments(consumer_group, current_cid, mq_all, cid_all):
            return []
        start, length = averagely_block(len(mq_all), len(cid_all), list(cid_all).index(current_cid))
        return list(mq_all[start : start + length])

    def allocate_group(
        self,
        consumer_group: str,
        mq_all: Sequence[MessageQueue],
        cid_all: Sequence[str],
    ) -> Assignment:
        """Return every client's block in one pass (pure arithmetic, no per-cid search)."""
        if not check_group_arguments(mq_all, cid_all):
            return {}
        queues = list(mq_all)
        n, c = len(queues), len(cid_all)
        result: Assignment = {}
        first_index = {cid: i for i, cid in reversed(list(enumerate(cid_all)))}
        for cid in unique_cids(cid_all):
            start, length = averagely_block(n, c, first_index[cid])
            result[cid] = queues[start : start + length]
        return result

    def __repr__(self) -> str:
        return "AllocateMessageQueueAveragely()"
