"""BrokerStats: message counters and rates for GET_BROKER_RUNTIME_INFO (RocketMQ's
BrokerStats + BrokerStatsManager, reduced to what ``mqadmin clusterList`` and the console show).

Totals count messages put and messages handed to consumers since start. ``today morning`` and
``yesterday morning`` totals roll over at local midnight. Rates come from one sample a second
(the controller calls :meth:`sample`) over 10 s, 60 s and 600 s windows, rendered like Java's
``putTps``: three space-separated figures.

Per consumer group, ``offset_moved`` counts the pulls answered PULL_OFFSET_MOVED because the
group's offset was below the queue's min offset (retention deleted what it had not read yet;
RocketMQ's OFFSET_TOO_SMALL) and the messages it skipped, by (group, topic, queue id); ``group_get``
counts the messages each group pulled per topic, for its consume TPS (:mod:`.group_get_stats`).
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass

from brokers.engine.broker.group_get_stats import GroupGetStats
from brokers.engine.common.clock import Clock

_WINDOWS_S = (10, 60, 600)
_MAX_SAMPLES = 601


@dataclass(frozen=True, slots=True)
class OffsetMoved:
    """Pulls of one group on one queue that found its offset below the min offset, and the messages skipped."""

    times: int
    skipped: int


@dataclass(slots=True)
class _Sample:
    at: float
    put: int
    get: int
    get_size: int


class BrokerStats:
    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.put_total = 0
        self.put_size_total = 0
        self.put_failed_total = 0
        self.get_total = 0
        self.get_size_total = 0
        self.get_found_times = 0
        self.get_miss_times = 0
        self.boot_timestamp = clock.now_ms()
        self._day = self._local_day()
        self.put_today_morning = 0
        self.get_today_morning = 0
        self.put_yesterday_morning = 0
        self.get_yesterday_morning = 0
        self._samples: deque[_Sample] = deque(maxlen=_MAX_SAMPLES)
        self.offset_moved: dict[tuple[str, str, int], OffsetMoved] = {}
        self.group_get = GroupGetStats(clock)  # per group and topic: the consumeTps of ConsumeStats
        self.sample()

    def _local_day(self) -> tuple[int, int, int]:
        t = time.localtime(self.clock.now_ms() / 1000)
        return (t.tm_year, t.tm_mon, t.tm_mday)

    # -- counting -----------------------------------------------------------------------------

    def inc_put(self, messages: int, size: int) -> None:
        self.put_total += messages
        self.put_size_total += size

    def inc_put_failed(self) -> None:
        self.put_failed_total += 1

    def inc_offset_moved(self, group: str, topic: str, queue_id: int, skipped: int) -> None:
        """A pull of ``group`` below the queue's min offset moved on by ``skipped`` messages."""
        key = (group, topic, queue_id)
        old = self.offset_moved.get(key, OffsetMoved(0, 0))
        self.offset_moved[key] = OffsetMoved(old.times + 1, old.skipped + max(skipped, 0))

    def inc_get(self, messages: int, size: int) -> None:
        if messages:
            self.get_found_times += 1
            self.get_total += messages
            self.get_size_total += size
        else:
            self.get_miss_times += 1

    def sample(self) -> None:
        """Record the totals now; roll the daily figures at local midnight."""
        day = self._local_day()
        if day != self._day:
            self._day = day
            self.put_yesterday_morning, self.get_yesterday_morning = self.put_today_morning, self.get_today_morning
            self.put_today_morning, self.get_today_morning = self.put_total, self.get_total
        self._samples.append(_Sample(self.clock.monotonic(), self.put_total, self.get_total, self.get_size_total))
        self.group_get.sample()

    # -- rates --------------------------------------------------------------------------------

    def _rate(self, attr: str, window_s: float) -> float:
        if not self._samples:
            return 0.0
        now = self.clock.monotonic()
        latest = getattr(self, {"put": "put_total", "get": "get_total", "get_size": "get_size_total"}[attr])
        oldest = self._samples[0]
        for sample in self._samples:
            if now - sample.at <= window_s:
                oldest = sample
                break
        elapsed = now - oldest.at
        if elapsed <= 0:
            return 0.0
        rate: float = (latest - getattr(oldest, attr)) / elapsed
        return rate

    def _tps(self, attr: str) -> str:
        return " ".join(f"{self._rate(attr, w):.2f}" for w in _WINDOWS_S)

    def runtime_info(self) -> dict[str, str]:
        """The broker-side keys of GET_BROKER_RUNTIME_INFO (values are strings, as in Java)."""
        self.sample()
        return {
            "msgPutTotalYesterdayMorning": str(self.put_yesterday_morning),
            "msgPutTotalTodayMorning": str(self.put_today_morning),
            "msgPutTotalTodayNow": str(self.put_total),
            "msgGetTotalYesterdayMorning": str(self.get_yesterday_morning),
            "msgGetTotalTodayMorning": str(self.get_today_morning),
            "msgGetTotalTodayNow": str(self.get_total),
            "putTps": self._tps("put"),
            "getTransferedTps": self._tps("get"),
            "getTotalTps": self._tps("get"),
            "getFoundTps": self._tps("get"),
            "getMissTps": "0.00 0.00 0.00",
            "putMessageTimesTotal": str(self.put_total),
            "putMessageSizeTotal": str(self.put_size_total),
            "putMessageAverageSize": f"{(self.put_size_total / self.put_total) if self.put_total else 0.0:.2f}",
            "putMessageFailedTimes": str(self.put_failed_total),
            "bootTimestamp": str(self.boot_timestamp),
            "runtime": _runtime_text(self.clock.now_ms() - self.boot_timestamp),
        }


def _runtime_text(ms: int) -> str:
    """Render uptime like Java's ``[ 0 days, 1 hours, 2 minutes, 3 seconds ]``."""
    s = max(ms, 0) // 1000
    return f"[ {s // 86400} days, {s % 86400 // 3600} hours, {s % 3600 // 60} minutes, {s % 60} seconds ]"
