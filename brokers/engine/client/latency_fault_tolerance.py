"""Queue selection for sends: round robin, and RocketMQ's latency fault tolerance (MQFaultStrategy).

Without fault tolerance a producer takes the next queue round robin, skipping the broker that
failed the previous attempt of the same send. With it (``send_latency_fault_enable``), each
send's latency marks its broker unavailable for a while::

    latency reached (ms)    50   100   550   1800   3000   5000   15000
    broker avoided (ms)      0     0  2000   5000   6000  10000   30000

A failed send counts as 30 000 ms (avoided 30 s). The selector takes the next queue whose broker
is available; when none is, the least bad broker (``pick_one_at_least``).
"""

from __future__ import annotations

import itertools
import random
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.common.message_queue import MessageQueue

__all__ = [
    "ISOLATION_LATENCY_MS",
    "LATENCY_MAX_MS",
    "NOT_AVAILABLE_DURATION_MS",
    "LatencyFaultTolerance",
    "MQFaultStrategy",
]

LATENCY_MAX_MS = (50, 100, 550, 1800, 3000, 5000, 15000)
NOT_AVAILABLE_DURATION_MS = (0, 0, 2000, 5000, 6000, 10000, 30000)
ISOLATION_LATENCY_MS = 30_000  # what a failed send counts as


@dataclass(slots=True)
class FaultItem:
    broker_name: str
    current_latency_ms: int
    start_timestamp_ms: int  # available again from this time

    def is_available(self, now_ms: int) -> bool:
        return now_ms >= self.start_timestamp_ms


class LatencyFaultTolerance:
    """Brokers and when each becomes available again (LatencyFaultToleranceImpl); thread-safe."""

    def __init__(self, clock: Clock = SYSTEM_CLOCK) -> None:
        self.clock = clock
        self._items: dict[str, FaultItem] = {}
        self._lock = threading.Lock()
        self._which = itertools.count(random.getrandbits(16))

    def update_fault_item(self, broker_name: str, current_latency_ms: int, not_available_duration_ms: int) -> None:
        with self._lock:
            self._items[broker_name] = FaultItem(
                broker_name, current_latency_ms, self.clock.now_ms() + not_available_duration_ms
            )

    def is_available(self, broker_name: str) -> bool:
        item = self._items.get(broker_name)
        return item is None or item.is_available(self.clock.now_ms())

    def remove(self, broker_name: str) -> None:
        with self._lock:
            self._items.pop(broker_name, None)

    def pick_one_at_least(self) -> str | None:
        """A broker among the better half (by availability, then latency), rotating; None when none is known."""
        with self._lock:
            items = list(self._items.values())
        if not items:
            return None
        now = self.clock.now_ms()
        items.sort(key=lambda i: (not i.is_available(now), i.current_latency_ms, i.start_timestamp_ms))
        half = max(1, len(items) // 2)
        return items[next(self._which) % half].broker_name


def compute_not_available_duration(latency_ms: int) -> int:
    for limit, duration in zip(reversed(LATENCY_MAX_MS), reversed(NOT_AVAILABLE_DURATION_MS)):
        if latency_ms >= limit:
            return duration
    return 0


class MQFaultStrategy:
    """Pick the queue of each send attempt; record send latencies when fault tolerance is on."""

    def __init__(self, enabled: bool = False, clock: Clock = SYSTEM_CLOCK) -> None:
        self.enabled = enabled
        self.fault_tolerance = LatencyFaultTolerance(clock)
        self._send_which_queue = itertools.count(random.getrandbits(16))

    def select_one_message_queue(self, queues: Sequence[MessageQueue], last_broker_name: str | None) -> MessageQueue:
        """The next queue round robin: an available broker's (fault tolerance), not ``last_broker_name``'s."""
        if not queues:
            raise ValueError("no queue to select from")
        n = len(queues)
        index = next(self._send_which_queue)
        if self.enabled:
            for i in range(n):
                mq = queues[(index + i) % n]
                if self.fault_tolerance.is_available(mq.broker_name) and mq.broker_name != last_broker_name:
                    return mq
            for i in range(n):  # every other broker is avoided: accept the last one if it is available
                mq = queues[(index + i) % n]
                if self.fault_tolerance.is_available(mq.broker_name):
                    return mq
            best = self.fault_tolerance.pick_one_at_least()
            candidates = [q for q in queues if q.broker_name == best]
            if candidates:
                return candidates[index % len(candidates)]
            return queues[index % n]
        if last_broker_name is not None:
            for i in range(n):
                mq = queues[(index + i) % n]
                if mq.broker_name != last_broker_name:
                    return mq
        return queues[index % n]

    def update_fault_item(self, broker_name: str, current_latency_ms: int, isolation: bool) -> None:
        """Record a send's outcome: its latency, or a failure (``isolation``) counted as 30 s."""
        if not self.enabled:
            return
        latency = ISOLATION_LATENCY_MS if isolation else current_latency_ms
        self.fault_tolerance.update_fault_item(broker_name, latency, compute_not_available_duration(latency))
