"""GroupGetStats: messages handed to each consumer group per topic, and its consume TPS.

RocketMQ's broker counts the messages each pull hands out under ``GROUP_GET_NUMS`` (key
``topic@group``) and answers a ConsumeStats' ``consumeTps`` with that item's rate over the last
minute (BrokerStatsManager ``tpsGroupGetNums``: the minute list, one snapshot every 10 s, seven
kept, the rate between the oldest and the newest). This is the same: :meth:`sample` (the stats
timer, every second) takes a snapshot of the totals once every :data:`SNAPSHOT_INTERVAL_S`, and
:meth:`tps` is what moved between the oldest and the newest kept snapshot, per second.

The rate changes only when a snapshot is taken, so every reader in between (GET_CONSUME_STATS
for ``mqadmin consumerProgress`` and a group's page, GET_BROKER_CONSUME_STATS for the group list)
gets the same figure: the one source of a group's consume TPS.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from brokers.engine.common.clock import Clock

SNAPSHOT_INTERVAL_S = 10.0
SNAPSHOTS_KEPT = 7  # six intervals: the last minute


@dataclass(frozen=True, slots=True)
class _Snapshot:
    at: float
    totals: dict[tuple[str, str], int] = field(default_factory=dict)


class GroupGetStats:
    def __init__(self, clock: Clock, interval_s: float = SNAPSHOT_INTERVAL_S) -> None:
        self.clock = clock
        self.interval_s = interval_s
        self.totals: dict[tuple[str, str], int] = {}  # (group, topic) -> messages pulled since start
        self._snapshots: deque[_Snapshot] = deque(maxlen=SNAPSHOTS_KEPT)
        self.sample()

    def inc(self, group: str, topic: str, messages: int) -> None:
        """A pull of ``group`` on ``topic`` found ``messages`` messages."""
        if messages > 0:
            key = (group, topic)
            self.totals[key] = self.totals.get(key, 0) + messages

    def sample(self) -> None:
        """Take a snapshot of the totals when the newest is ``interval_s`` old (or there is none)."""
        now = self.clock.monotonic()
        if not self._snapshots or now - self._snapshots[-1].at >= self.interval_s:
            self._snapshots.append(_Snapshot(now, dict(self.totals)))

    def tps(self, group: str, topic: str) -> float:
        """Messages of ``topic`` pulled by ``group`` per second over the kept snapshots (0 before two)."""
        if len(self._snapshots) < 2:
            return 0.0
        oldest, newest = self._snapshots[0], self._snapshots[-1]
        elapsed = newest.at - oldest.at
        key = (group, topic)
        moved = newest.totals.get(key, 0) - oldest.totals.get(key, 0)
        return moved / elapsed if elapsed > 0 and moved > 0 else 0.0
