"""GroupGetStats: a group's consume TPS is what it pulled between the oldest and the newest of the
minute's snapshots (one every 10 s), as RocketMQ's GROUP_GET_NUMS minute rate; between two
snapshots every reader gets the same figure."""

from __future__ import annotations

from brokers.engine.broker.group_get_stats import GroupGetStats
from brokers.engine.common.clock import ManualClock


def test_the_rate_is_the_minute_between_snapshots_and_holds_between_them() -> None:
    clock = ManualClock()
    stats = GroupGetStats(clock)
    stats.inc("G", "T", 30)
    assert stats.tps("G", "T") == 0.0  # one snapshot: no rate yet
    clock.advance(10)
    stats.sample()
    assert stats.tps("G", "T") == 3.0
    stats.inc("G", "T", 100)
    clock.advance(5)
    stats.sample()  # 5 s after the newest: no snapshot, the figure holds
    assert stats.tps("G", "T") == 3.0 and stats.tps("G", "Other") == 0.0 and stats.tps("H", "T") == 0.0
    for _ in range(7):  # a minute and more without pulls: the old snapshots leave the window
        clock.advance(10)
        stats.sample()
    assert stats.tps("G", "T") == 0.0


def test_the_window_spans_the_last_minute() -> None:
    clock = ManualClock()
    stats = GroupGetStats(clock)
    for _ in range(10):
        stats.inc("G", "T", 60)
        clock.advance(10)
        stats.sample()
    assert stats.tps("G", "T") == 6.0  # 360 messages over the 60 s between the kept snapshots
    stats.inc("G", "T", 0)
    assert stats.totals == {("G", "T"): 600}
