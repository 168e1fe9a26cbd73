"""MACHINE_ROOM: RocketMQ's ``AllocateMessageQueueByMachineRoom``.

Keep only the queues whose broker name reads ``<room>@<broker>`` with ``<room>`` in this
client's configured rooms (``consumeridcs``), then share those among *all* clients: each gets
a block of ``len(kept) // len(cid_all)`` queues, and the first ``len(kept) % len(cid_all)``
clients also get one leftover queue from the tail of the list. Queues of other rooms, or of
brokers not named ``room@broker``, are consumed by nobody (under this client's view).

Worked example, 9 queues, 4 clients, ``consumeridcs = {"hz"}``::

    queues   hz@broker-a 0..2, hz@broker-b 0..2, sh@broker-c 0..2
    kept     a0 a1 a2 b0 b1 b2                  (6 queues; the sh queues are dropped)
    mod = 6 // 4 = 1, rem = 6 % 4 = 2

    cid0  kept[0:1] + kept[0 + 1*4]  = a0 b1
    cid1  kept[1:2] + kept[1 + 1*4]  = a1 b2
    cid2  kept[2:3]                  = a2
    cid3  kept[3:4]                  = b0

The room test copies Java's ``brokerName.split("@")``: trailing empty pieces are dropped, and
the name qualifies only when exactly two pieces remain (so ``"hz@a@"`` counts, ``"hz@a@b"``
does not). RocketMQ 5's version runs the common argument check first (empty input raises);
4.x's did not, and returned an empty list instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.client.allocation.errors import StrategyParameterError
from brokers.engine.client.allocation.strategy import (
    Assignment,
    check_arguments,
    check_group_arguments,
    unique_cids,
)

__all__ = ["AllocateMessageQueueByMachineRoom", "machine_room_of_broker"]


def machine_room_of_broker(broker_name: str) -> str | None:
    """Return ``room`` for a broker named ``room@broker`` (Java split rules), else None."""
    pieces = broker_name.split("@")
    while pieces and pieces[-1] == "":
        pieces.pop()
    return pieces[0] if len(pieces) == 2 else None


class AllocateMessageQueueByMachineRoom:
    """Share the queues of the configured machine rooms among all clients (``MACHINE_ROOM``)."""

    name = "MACHINE_ROOM"

    def __init__(self, consumeridcs: Iterable[str]) -> None:
        if isinstance(consumeridcs, str):
            raise StrategyParameterError("consumeridcs must be a collection of room names, not a single string")
        self.consumeridcs: frozenset[str] = frozenset(consumeridcs)

    def _kept(self, mq_all: Sequence[MessageQueue]) -> list[MessageQueue]:
        rooms = self.consumeridcs
        kept = []
        for mq in mq_all:
            room = machine_room_of_broker(mq.broker_name)
            if room is not None and room in rooms:
                kept.append(mq)
        return kept

    @staticmethod
    def _share(kept: list[MessageQueue], cid_count: int, index: int) -> list[MessageQueue]:
        mod, rem = divmod(len(kept), cid_count)
        share = kept[mod * index : mod * index + mod]
        if rem > index:
            share.append(kept[index + mod * cid_count])
        return share

    def allocate(
        self,
        consumer_group: str,
        current_cid: str,
        mq_all: Sequence[MessageQueue],
        cid_all: Sequence[str],
    ) -> list[MessageQueue]:
        """Return ``current_cid``'s block of the kept queues plus its leftover, if any."""
        if not check_arguments(consumer_group, current_cid, mq_all, cid_all):
            return []
        index = list(cid_all).index(current_cid)
        return self._share(self._kept(mq_all), len(cid_all), index)

    def allocate_group(
        self,
        consumer_group: str,
        mq_all: Sequence[MessageQueue],
        cid_all: Sequence[str],
    ) -> Assignment:
        """Filter the queues once, then cut every client's share."""
        if not check_group_arguments(mq_all, cid_all):
            return {}
        kept = self._kept(mq_all)
        first_index = {cid: i for i, cid in reversed(list(enumerate(cid_all)))}
        return {cid: self._share(kept, len(cid_all), first_index[cid]) for cid in unique_cids(cid_all)}

    def __repr__(self) -> str:
        return f"AllocateMessageQueueByMachineRoom({sorted(self.consumeridcs)!r})"
