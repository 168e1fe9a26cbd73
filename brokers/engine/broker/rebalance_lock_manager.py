"""RebalanceLockManager: which client of a consumer group holds which queue (orderly consumers).

A lock is per (group, MessageQueue) and owned by a client id. It lives ``lock_max_live_s``
(RocketMQ's ``rocketmq.broker.rebalance.lockMaxLiveTime``, 60 s) after its owner last locked it;
clients re-lock every 20 s. Another client may take an expired lock; an unlock by a non-owner
is ignored.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from brokers.engine.common.clock import Clock
from brokers.engine.common.message_queue import MessageQueue

log = logging.getLogger("brokers.engine.broker")


@dataclass(slots=True)
class LockEntry:
    client_id: str
    last_update: float  # clock.monotonic()


class RebalanceLockManager:
    def __init__(self, clock: Clock, lock_max_live_s: float = 60.0) -> None:
        self.clock = clock
        self.lock_max_live_s = lock_max_live_s
        self.mq_lock_table: dict[str, dict[MessageQueue, LockEntry]] = {}

    def _is_live(self, entry: LockEntry, now: float) -> bool:
        return now - entry.last_update <= self.lock_max_live_s

    def is_locked(self, group: str, mq: MessageQueue, client_id: str) -> bool:
        entry = self.mq_lock_table.get(group, {}).get(mq)
        return entry is not None and entry.client_id == client_id and self._is_live(entry, self.clock.monotonic())

    def try_lock_batch(self, group: str, mqs: Iterable[MessageQueue], client_id: str) -> set[MessageQueue]:
        """Lock what is free, expired, or already ours; return the queues ``client_id`` now holds."""
        now = self.clock.monotonic()
        table = self.mq_lock_table.setdefault(group, {})
        held: set[MessageQueue] = set()
        for mq in mqs:
            entry = table.get(mq)
            if entry is None or entry.client_id == client_id or not self._is_live(entry, now):
                if entry is not None and entry.client_id != client_id:
                    log.info(
                        "lock of %s for group %s expired (held by %s), taken by %s",
                        mq,
                        group,
                        entry.client_id,
                        client_id,
                    )
                table[mq] = LockEntry(client_id, now)
                held.add(mq)
        return held

    def unlock_batch(self, group: str, mqs: Iterable[MessageQueue], client_id: str) -> None:
        table = self.mq_lock_table.get(group)
        if not table:
            return
        for mq in mqs:
            entry = table.get(mq)
            if entry is not None and entry.client_id == client_id:
                del table[mq]
        if not table:
            del self.mq_lock_table[group]
