"""ProcessQueue: a consumer's local state of one queue it holds (RocketMQ's ProcessQueue).

Pulled messages wait here, by queue offset, until their listener call is done. The offset a
consumer may commit is the lowest offset still here (or one past the highest ever pulled when
nothing is left), so a committed offset never passes a message still being consumed.

Orderly consumption takes messages in offset order into a "consuming" map and commits them
together; ``consume_lock`` is held around each listener call so a rebalance can wait for the
call in progress before it hands the queue over. Thread-safe: the loop thread puts, listener
threads remove.

``dropped`` is RocketMQ's ``isDropped()``: set when a rebalance (or an offset reset, or shutdown)
takes the queue away; from then on nothing is put here and nothing taken from here reaches a
listener. Times come from the consumer's clock: wall-clock milliseconds for the timestamps the
running info reports, its monotonic seconds for the age of the broker lock.
"""

from __future__ import annotations

import bisect
import threading
from typing import Any

from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.common.message import MessageExt

__all__ = ["ProcessQueue"]


class ProcessQueue:
    def __init__(self, clock: Clock = SYSTEM_CLOCK) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self._offsets: list[int] = []  # sorted offsets of the messages held
        self._msgs: dict[int, MessageExt] = {}
        self._consuming: dict[int, MessageExt] = {}  # orderly: taken, not yet committed
        self.queue_offset_max = -1  # highest offset ever put
        self.msg_size = 0
        self.dropped = False
        self.locked = False
        self.last_lock_timestamp = 0.0  # the clock's monotonic seconds; 0: never locked
        self.last_pull_timestamp = clock.now_ms()  # wall-clock ms
        self.last_consume_timestamp = clock.now_ms()
        self.try_unlock_times = 0
        self.consuming = False  # orderly: a consume task runs or is scheduled
        self.consume_lock = threading.Lock()
        self._inflight = 0  # concurrently: listener calls begun and not yet done with the offset

    # -- listener calls in progress (concurrently) ---------------------------------------------

    def begin_consume(self) -> None:
        """A consume task starts (before it looks at ``dropped``), so a reset can wait for it."""
        with self._lock:
            self._inflight += 1

    def end_consume(self) -> None:
        with self._lock:
            self._inflight -= 1

    @property
    def inflight_consumes(self) -> int:
        return self._inflight

    # -- put / remove (concurrently) ----------------------------------------------------------

    def put_message(self, msgs: list[MessageExt]) -> bool:
        """Hold pulled messages; return True when an orderly consume task must be started.

        A dropped queue takes nothing (RocketMQ's isDropped()): its messages belong to its next holder.
        """
        with self._lock:
            if self.dropped:
                return False
            for m in msgs:
                if m.queue_offset in self._msgs:
                    continue
                self._msgs[m.queue_offset] = m
                bisect.insort(self._offsets, m.queue_offset)
                self.msg_size += len(m.body)
                if m.queue_offset > self.queue_offset_max:
                    self.queue_offset_max = m.queue_offset
            self.last_pull_timestamp = self.clock.now_ms()
            if self._msgs and not self.consuming:
                self.consuming = True
                return True
            return False

    def remove_message(self, msgs: list[MessageExt]) -> int:
        """Forget consumed messages; return the offset to commit (-1 when nothing was ever held)."""
        with self._lock:
            if self.queue_offset_max < 0:
                return -1
            self.last_consume_timestamp = self.clock.now_ms()
            for m in msgs:
                if self._msgs.pop(m.queue_offset, None) is not None:
                    i = bisect.bisect_left(self._offsets, m.queue_offset)
                    if i < len(self._offsets) and self._offsets[i] == m.queue_offset:
                        del self._offsets[i]
                    self.msg_size -= len(m.body)
            return self._offsets[0] if self._offsets else self.queue_offset_max + 1

    @property
    def msg_count(self) -> int:
        return len(self._msgs) + len(self._consuming)

    def offset_range(self) -> tuple[int, int]:
        """(lowest, highest) offset held, (0, 0) when empty."""
        with self._lock:
            keys = sorted([*self._offsets, *self._consuming])
        return (keys[0], keys[-1]) if keys else (0, 0)

    def next_commit_offset(self) -> int:
        """The offset a commit now may carry: the lowest held, or one past the highest pulled."""
        with self._lock:
            if self._consuming:
                return min(self._consuming)
            if self._offsets:
                return self._offsets[0]
            return self.queue_offset_max + 1 if self.queue_offset_max >= 0 else -1

    # -- orderly ------------------------------------------------------------------------------

    def take_messages(self, batch_size: int) -> list[MessageExt]:
        """Move up to ``batch_size`` lowest messages to the consuming map; none left clears ``consuming``."""
        with self._lock:
            self.last_consume_timestamp = self.clock.now_ms()
            taken: list[MessageExt] = []
            while self._offsets and len(taken) < batch_size:
                offset = self._offsets.pop(0)
                m = self._msgs.pop(offset)
                self._consuming[offset] = m
                taken.append(m)
            if not taken:
                self.consuming = False
            return taken

    def commit(self) -> int:
        """Acknowledge the consuming map; return the offset to commit (its highest + 1), or -1."""
        with self._lock:
            if not self._consuming:
                return -1
            offset = max(self._consuming) + 1
            self.msg_size -= sum(len(m.body) for m in self._consuming.values())
            self._consuming.clear()
            return offset

    def make_message_to_consume_again(self, msgs: list[MessageExt]) -> None:
        """Put taken messages back for another try (their reconsume count already raised)."""
        with self._lock:
            for m in msgs:
                if self._consuming.pop(m.queue_offset, None) is not None:
                    self._msgs[m.queue_offset] = m
                    bisect.insort(self._offsets, m.queue_offset)

    def mark_locked(self) -> None:
        """The broker granted (or renewed) this client's lock on the queue now."""
        self.locked = True
        self.last_lock_timestamp = self.clock.monotonic()

    def is_lock_expired(self, lock_max_live_s: float) -> bool:
        return self.clock.monotonic() - self.last_lock_timestamp > lock_max_live_s

    def info(self, commit_offset: int) -> dict[str, Any]:
        """ProcessQueueInfo (§4.14) for GET_CONSUMER_RUNNING_INFO."""
        low, high = self.offset_range()
        return {
            "commitOffset": commit_offset,
            "cachedMsgMinOffset": low,
            "cachedMsgMaxOffset": high,
            "cachedMsgCount": self.msg_count,
            "cachedMsgSizeInMiB": self.msg_size // (1024 * 1024),
            "transactionMsgMinOffset": 0,
            "transactionMsgMaxOffset": 0,
            "transactionMsgCount": 0,
            "locked": self.locked,
            "tryUnlockTimes": self.try_unlock_times,
            "lastLockTimestamp": self.clock.now_ms() - int((self.clock.monotonic() - self.last_lock_timestamp) * 1000)
            if self.last_lock_timestamp
            else 0,
            "droped": self.dropped,
            "lastPullTimestamp": self.last_pull_timestamp,
            "lastConsumeTimestamp": self.last_consume_timestamp,
        }
