"""StoreStats: put/get counters and TPS over recent windows, for GET_BROKER_RUNTIME_INFO.

Counters are bumped by the putting/getting thread; ``sample()`` is called about once a second
by the store's periodic flush thread and keeps enough history for 10 s / 1 min / 10 min rates.
"""

from __future__ import annotations

import shutil
import threading
from collections import deque
from typing import Callable

from brokers.engine.store.commitlog import CommitLog
from brokers.engine.store.config import StoreConfig

_HISTORY = 601  # one sample a second: 10 minutes and one


class StoreStats:
    def __init__(self, monotonic: Callable[[], float]) -> None:
        self._monotonic = monotonic
        self.put_message_times_total = 0
        self.put_message_size_total = 0
        self.put_message_failed_times = 0
        self.put_message_entire_time_max_ms = 0.0
        self.get_message_times_found = 0
        self.get_message_times_miss = 0
        self.get_message_transferred_msg_count = 0
        self.get_message_entire_time_max_ms = 0.0
        self._samples: deque[tuple[float, int, int, int, int]] = deque(maxlen=_HISTORY)
        self._lock = threading.Lock()

    def count_get(self, found: int, elapsed_ms: float) -> None:
        if found:
            self.get_message_times_found += 1
            self.get_message_transferred_msg_count += found
        else:
            self.get_message_times_miss += 1
        if elapsed_ms > self.get_message_entire_time_max_ms:
            self.get_message_entire_time_max_ms = elapsed_ms

    def sample(self) -> None:
        snap = (
            self._monotonic(),
            self.put_message_times_total,
            self.get_message_times_found,
            self.get_message_times_miss,
            self.get_message_transferred_msg_count,
        )
        with self._lock:
            self._samples.append(snap)

    def _rates(self, window_s: float) -> tuple[float, float, float, float]:
        now = (
            self._monotonic(),
            self.put_message_times_total,
            self.get_message_times_found,
            self.get_message_times_miss,
            self.get_message_transferred_msg_count,
        )
        with self._lock:
            samples = list(self._samples)
        old = None
        for s in samples:
            if now[0] - s[0] <= window_s:
                old = s
                break
        if old is None or now[0] - old[0] <= 0:
            return 0.0, 0.0, 0.0, 0.0
        dt = now[0] - old[0]
        return tuple((now[i] - old[i]) / dt for i in range(1, 5))  # type: ignore[return-value]

    def tps_triples(self) -> dict[str, str]:
        """Return putTps, getFoundTps, getMissTps, getTotalTps, getTransferedTps as RocketMQ
        prints them: rates over 10 s, 1 min and 10 min, space-separated."""
        r10, r60, r600 = self._rates(10), self._rates(60), self._rates(600)

        def triple(i: int) -> str:
            return f"{r10[i]:.2f} {r60[i]:.2f} {r600[i]:.2f}"

        total = [f"{a[1] + a[2]:.2f}" for a in (r10, r60, r600)]
        return {
            "putTps": triple(0),
            "getFoundTps": triple(1),
            "getMissTps": triple(2),
            "getTotalTps": " ".join(total),
            "getTransferedTps": triple(3),
        }

    def runtime_info(self, uptime_ms: int) -> dict[str, str]:
        """The counter keys of GET_BROKER_RUNTIME_INFO; the store adds its offsets and ratios."""
        seconds = max(0, uptime_ms // 1000)
        days, rest = divmod(seconds, 86400)
        hours, rest = divmod(rest, 3600)
        minutes, seconds = divmod(rest, 60)
        puts = self.put_message_times_total
        info = {
            "runtime": f"[ {days} days, {hours} hours, {minutes} minutes, {seconds} seconds ]",
            "putMessageTimesTotal": str(puts),
            "putMessageSizeTotal": str(self.put_message_size_total),
            "putMessageAverageSize": repr(self.put_message_size_total / puts if puts else 0.0),
            "putMessageEntireTimeMax": str(int(self.put_message_entire_time_max_ms)),
            "getMessageEntireTimeMax": str(int(self.get_message_entire_time_max_ms)),
            "putMessageFailedTimes": str(self.put_message_failed_times),
            "dispatchMaxBuffer": "0",  # dispatch is synchronous: nothing waits in a buffer
            "dispatchBehindBytes": "0",
        }
        info.update(self.tps_triples())
        return info


def disk_ratio(path: str) -> str:
    """Used fraction of the filesystem holding ``path``, as RocketMQ prints a double."""
    try:
        usage = shutil.disk_usage(path)
    except OSError:
        return "-1"
    return repr(usage.used / usage.total) if usage.total else "0.0"


def store_runtime_info(
    stats: StoreStats,
    commitlog: CommitLog,
    config: StoreConfig,
    *,
    uptime_ms: int,
    boot_ms: int,
    fsync_count: int,
    healthy_error: str | None,
    write_error: str | None = None,
) -> dict[str, str]:
    """The store's keys of GET_BROKER_RUNTIME_INFO (values are strings, as in RocketMQ)."""
    info = stats.runtime_info(uptime_ms)
    info.update(
        {
            "bootTimestamp": str(boot_ms),
            "commitLogMaxOffset": str(commitlog.max_offset),
            "commitLogMinOffset": str(commitlog.min_offset),
            "commitLogDiskRatio": disk_ratio(config.commitlog_dir),
            "consumeQueueDiskRatio": disk_ratio(config.consume_queue_dir),
            "remainHowManyDataToFlush": str(max(0, commitlog.max_offset - commitlog.flushed_where)),
            "earliestMessageTimeStamp": str(commitlog.read_store_timestamp(commitlog.min_offset)),
            "flushDiskType": config.flush_disk_type,
            "commitLogFsyncTimes": str(fsync_count),
            "storeHealthy": "true" if healthy_error is None else f"false: {healthy_error}",
            "storeWritable": "true" if write_error is None else f"false: {write_error}",
        }
    )
    return info
