"""MACHINE_ROOM_NEARBY: RocketMQ's ``AllocateMachineRoomNearby``, a proxy over another strategy.

A resolver names the machine room of each queue's broker and of each client. Queues of a room
that has live clients go only to that room's clients (the inner strategy runs on that room's
queues and that room's clients). Queues of a room with no live client are shared by every
client (the inner strategy runs on those queues and the whole group), room by room in room
name order. A client's list is its own room's share followed by those orphan shares.

Worked example, inner AVG, 9 queues, 4 clients, rooms before the ``-``::

    queues   hz-broker-a 0..2, hz-broker-b 0..2, gz-broker-c 0..2
    clients  hz-c0, hz-c1, sh-c2, sh-c3

    room hz: 6 queues, AVG over [hz-c0, hz-c1]  -> hz-c0: a0 a1 a2   hz-c1: b0 b1 b2
    room sh: clients but no queues              -> nothing
    room gz: queues but no client, AVG over all -> hz-c0: c0  hz-c1: c1  sh-c2: c2  sh-c3: -

    hz-c0  a0 a1 a2 c0    hz-c1  b0 b1 b2 c1    sh-c2  c2    sh-c3  (none)

The name is ``"MACHINE_ROOM_NEARBY-" + inner.name``. A resolver answer of ``None`` or ``""``
raises :class:`AllocationError`, as Java's ``IllegalArgumentException`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.client.allocation.errors import AllocationError, StrategyParameterError
from brokers.engine.client.allocation.strategy import (
    AllocateMessageQueueStrategy,
    Assignment,
    check_arguments,
    check_group_arguments,
    group_allocate,
    java_string_key,
    unique_cids,
)

__all__ = ["AllocateMachineRoomNearby", "MachineRoomResolver"]


@runtime_checkable
class MachineRoomResolver(Protocol):
    """Say where brokers and clients run; mirror of RocketMQ's ``MachineRoomResolver``."""

    def broker_deploy_in(self, mq: MessageQueue) -> str:
        """Return the machine room of ``mq``'s broker (never empty)."""
        ...

    def consumer_deploy_in(self, cid: str) -> str:
        """Return the machine room of client ``cid`` (never empty)."""
        ...


class AllocateMachineRoomNearby:
    """Prefer same-room clients; share orphan rooms' queues with everyone."""

    def __init__(self, inner: AllocateMessageQueueStrategy, resolver: MachineRoomResolver) -> None:
        if inner is None:
            raise StrategyParameterError("allocateMessageQueueStrategy (inner) is required")
        if resolver is None:
            raise StrategyParameterError("machineRoomResolver (resolver) is required")
        for method in ("broker_deploy_in", "consumer_deploy_in"):
            if not callable(getattr(resolver, method, None)):
                raise StrategyParameterError(f"resolver has no {method}() method")
        self.inner = inner
        self.resolver = resolver

    @property
    def name(self) -> str:
        """Return ``MACHINE_ROOM_NEARBY-<inner name>``."""
        return f"MACHINE_ROOM_NEARBY-{self.inner.name}"

    def _group_by_room(
        self, mq_all: Sequence[MessageQueue], cid_all: Sequence[str]
    ) -> tuple[dict[str, list[MessageQueue]], dict[str, list[str]]]:
        # Java resolves every queue first, then every client, failing on the first empty room.
        mq_by_room: dict[str, list[MessageQueue]] = {}
        for mq in mq_all:
            room = self.resolver.broker_deploy_in(mq)
            if not room:
                raise AllocationError(f"Machine room is null for mq {mq}")
            mq_by_room.setdefault(room, []).append(mq)
        cid_by_room: dict[str, list[str]] = {}
        for cid in cid_all:
            room = self.resolver.consumer_deploy_in(cid)
            if not room:
                raise AllocationError(f"Machine room is null for consumer id {cid}")
            cid_by_room.setdefault(room, []).append(cid)
        return mq_by_room, cid_by_room

    @staticmethod
    def _orphan_rooms(mq_by_room: dict[str, list[MessageQueue]], cid_by_room: dict[str, list[str]]) -> list[str]:
        # Java walks a TreeMap: room names in String.compareTo order.
        return sorted((r for r in mq_by_room if r not in cid_by_room), key=java_string_key)

    def allocate(
        self,
        consumer_group: str,
        current_cid: str,
        mq_all: Sequence[MessageQueue],
        cid_all: Sequence[str],
    ) -> list[MessageQueue]:
        """Return the current client's own-room share, then its share of each orphan room."""
        if not check_arguments(consumer_group, current_cid, mq_all, cid_all):
            return []
        mq_by_room, cid_by_room = self._group_by_room(mq_all, cid_all)
        result: list[MessageQueue] = []
        current_room = self.resolver.consumer_deploy_in(current_cid)
        own_queues = mq_by_room.pop(current_room, None)
        if own_queues:
            result.extend(
                self.inner.allocate(consumer_group, current_cid, own_queues, cid_by_room.get(current_room) or []) or []
            )
        for room in self._orphan_rooms(mq_by_room, cid_by_room):
            result.extend(self.inner.allocate(consumer_group, current_cid, mq_by_room[room], cid_all) or [])
        return result

    def allocate_group(
        self,
        consumer_group: str,
        mq_all: Sequence[MessageQueue],
        cid_all: Sequence[str],
    ) -> Assignment:
        """Group queues and clients by room once, then run the inner strategy per room."""
        if not check_group_arguments(mq_all, cid_all):
            return {}
        mq_by_room, cid_by_room = self._group_by_room(mq_all, cid_all)
        result: Assignment = {cid: [] for cid in unique_cids(cid_all)}
        for room, room_cids in cid_by_room.items():
            room_queues = mq_by_room.get(room)
            if not room_queues:
                continue
            shares = group_allocate(self.inner, consumer_group, room_queues, room_cids)
            for cid in unique_cids(room_cids):
                result[cid].extend(shares.get(cid, ()))
        for room in self._orphan_rooms(mq_by_room, cid_by_room):
            shares = group_allocate(self.inner, consumer_group, mq_by_room[room], cid_all)
            for cid, queues in result.items():
                queues.extend(shares.get(cid, ()))
        return result

    def __repr__(self) -> str:
        return f"AllocateMachineRoomNearby({self.inner!r}, {self.resolver!r})"
