"""LatencyHistogram: cumulative-ready bucket counts of durations, for the ``/metrics`` endpoint.

Pure and cheap (one bisect and two additions per observation) so the hot paths that observe a
duration (a request's handler, a commit log flush) pay almost nothing; the Prometheus side
(``brokers/engine/metrics/``) turns a :meth:`snapshot` into a histogram family at scrape time.
Observers run on one thread each (the event loop, the flush thread); a lock keeps a snapshot
from another thread consistent.
"""

from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass

# Seconds; the remoting layer answers in well under a millisecond, a sync flush takes milliseconds.
DEFAULT_BOUNDS_S: tuple[float, ...] = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


@dataclass(frozen=True, slots=True)
class HistogramSnapshot:
    """Per-bucket counts (not cumulative; the last is the +Inf overflow), their sum and count."""

    bounds: tuple[float, ...]
    counts: tuple[int, ...]
    total_s: float

    @property
    def count(self) -> int:
        return sum(self.counts)

    def cumulative(self) -> list[tuple[str, int]]:
        """Prometheus buckets: ``(le, cumulative count)`` with the ``+Inf`` bucket last."""
        out, running = [], 0
        for bound, n in zip(self.bounds + (float("inf"),), self.counts):
            running += n
            out.append(("+Inf" if bound == float("inf") else repr(bound), running))
        return out


class LatencyHistogram:
    def __init__(self, bounds: tuple[float, ...] = DEFAULT_BOUNDS_S) -> None:
        self.bounds = tuple(sorted(bounds))
        self._counts = [0] * (len(self.bounds) + 1)
        self._total = 0.0
        self._lock = threading.Lock()

    def observe(self, seconds: float) -> None:
        i = bisect.bisect_left(self.bounds, seconds)
        with self._lock:
            self._counts[i] += 1
            self._total += seconds

    def snapshot(self) -> HistogramSnapshot:
        with self._lock:
            return HistogramSnapshot(self.bounds, tuple(self._counts), self._total)
