"""RequestStats: per request code handler latency, and refusals by reason, of one process.

Process-wide (like :data:`~brokers.engine.remoting.limits.limit_log`): an engine process runs one
name server or one broker. The channel observes each served request's handler time; the limits
(``limits.LimitLog.refused``) and the ACL guard's refusals are counted by reason (the limit's
name, or ``acl``). Read by the ``/metrics`` collectors (``brokers/engine/metrics/``), which take
a :meth:`snapshot` on the event loop, the thread that writes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from brokers.engine.common.latency_histogram import HistogramSnapshot, LatencyHistogram

ACL_REFUSAL = "acl"
MAX_CODES = 256  # distinct codes kept apart; a peer sending made-up codes cannot grow the label set
OTHER_CODE = -1  # where codes past MAX_CODES are counted


@dataclass(frozen=True, slots=True)
class RequestStatsSnapshot:
    latency_by_code: dict[int, HistogramSnapshot]
    refusals: dict[str, int]


class RequestStats:
    def __init__(self) -> None:
        self._latency: dict[int, LatencyHistogram] = {}
        self._refusals: Counter[str] = Counter()

    def observe(self, code: int, seconds: float) -> None:
        """A request of ``code`` was handled in ``seconds`` (its handler's time, not the write)."""
        hist = self._latency.get(code)
        if hist is None:
            if len(self._latency) >= MAX_CODES:
                code = OTHER_CODE
            hist = self._latency.get(code) or self._latency.setdefault(code, LatencyHistogram())
        hist.observe(seconds)

    def refused(self, reason: str) -> None:
        self._refusals[reason] += 1

    def snapshot(self) -> RequestStatsSnapshot:
        return RequestStatsSnapshot(
            {code: h.snapshot() for code, h in list(self._latency.items())}, dict(self._refusals)
        )


request_stats = RequestStats()
