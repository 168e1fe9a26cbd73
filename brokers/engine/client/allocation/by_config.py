"""CONFIG: RocketMQ's ``AllocateMessageQueueByConfig``.

Return a fixed, configured queue list whatever the input: no argument check, no look at the
topic's queues or the group's clients. It is meant for one process pinned to chosen queues,
each process configured differently. A group whose members all share one configuration
therefore consumes those queues once per member and the other queues never.

Worked example, 9 queues on 3 brokers, 4 clients, configured with ``[a0, b0]``::

    cid0  a0 b0      cid1  a0 b0      cid2  a0 b0      cid3  a0 b0
    a0 and b0 have four owners each; a1 a2 b1 b2 c0 c1 c2 have none.

Java does not validate its inputs here: empty client ids or queue lists do not raise, and a
configured queue need not exist in the topic. This module keeps those semantics.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.client.allocation.errors import StrategyParameterError
from brokers.engine.client.allocation.strategy import Assignment, unique_cids

__all__ = ["AllocateMessageQueueByConfig"]


class AllocateMessageQueueByConfig:
    """Return the configured queues for every client (``CONFIG``)."""

    name = "CONFIG"

    def __init__(self, message_queue_list: Iterable[MessageQueue]) -> None:
        queues = tuple(message_queue_list)
        for mq in queues:
            if not isinstance(mq, MessageQueue):
                raise StrategyParameterError(f"message_queue_list must hold MessageQueue values, got {mq!r}")
        self.message_queue_list: tuple[MessageQueue, ...] = queues

    def allocate(
        self,
        consumer_group: str,
        current_cid: str,
        mq_all: Sequence[MessageQueue],
        cid_all: Sequence[str],
    ) -> list[MessageQueue]:
        """Return a copy of the configured list, in configured order."""
        return list(self.message_queue_list)

    def allocate_group(
        self,
        consumer_group: str,
        mq_all: Sequence[MessageQueue],
        cid_all: Sequence[str],
    ) -> Assignment:
        """Return the configured list for every distinct client."""
        return {cid: list(self.message_queue_list) for cid in unique_cids(cid_all)}

    def __repr__(self) -> str:
        return f"AllocateMessageQueueByConfig({list(self.message_queue_list)!r})"
