"""AVG_BY_CIRCLE: RocketMQ's ``AllocateMessageQueueAveragelyByCircle``.

Deal the sorted queues round-robin, like cards: the client at ``index`` takes every queue
whose position ``i`` satisfies ``i % len(cid_all) == index``. Neighbouring queues (often the
same broker) land on different clients.

Worked example, 9 queues on 3 brokers, 4 clients::

    position  0  1  2  3  4  5  6  7  8
    queue     a0 a1 a2 b0 b1 b2 c0 c1 c2
    client    0  1  2  3  0  1  2  3  0

    cid0  a0 b1 c2      cid1  a1 b2      cid2  a2 c0      cid3  b0 c1
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

__all__ = ["AllocateMessageQueueAveragelyByCircle"]


class AllocateMessageQueueAveragelyByCircle:
    """Deal queues to clients round-robin (``AVG_BY_CIRCLE``)."""

    name = "AVG_BY_CIRCLE"

    def allocate(
        self,
        consumer_group: str,
        current_cid: str,
        mq_all: Sequence[MessageQueue],
        cid_all: Sequence[str],
    ) -> list[MessageQueue]:
        """Return the queues at positions ``index, index + c, index + 2c, ...``."""
        if not check_arguments(consumer_group, current_cid, mq_all, cid_all):
            return []
        index = list(cid_all).index(current_cid)
        return list(mq_all)[index :: len(cid_all)]

    def allocate_group(
        self,
        consumer_group: str,
        mq_all: Sequence[MessageQueue],
        cid_all: Sequence[str],
    ) -> Assignment:
        """Return every client's stride slice in one pass."""
        if not check_group_arguments(mq_all, cid_all):
            return {}
        queues = list(mq_all)
        step = len(cid_all)
        first_index = {cid: i for i, cid in reversed(list(enumerate(cid_all)))}
        return {cid: queues[first_index[cid] :: step] for cid in unique_cids(cid_all)}

    def __repr__(self) -> str:
        return "AllocateMessageQueueAveragelyByCircle()"
