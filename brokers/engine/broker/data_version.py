"""DataVersion: the (timestamp, counter) pair a broker bumps on every topic or group change.

The name server compares the whole object to decide whether a registration carries changed
topic configs (protocol reference §4.4), so every change must bump it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from brokers.engine.common.clock import Clock


@dataclass(slots=True)
class DataVersion:
    timestamp: int = 0
    counter: int = 0

    def next_version(self, clock: Clock) -> None:
        """Advance after a change: counter + 1, timestamp = now."""
        self.timestamp = clock.now_ms()
        self.counter += 1

    def to_json(self) -> dict[str, Any]:
        return {"counter": self.counter, "timestamp": self.timestamp}

    @classmethod
    def from_json(cls, data: object) -> DataVersion:
        if not isinstance(data, dict):
            return cls()
        try:
            return cls(timestamp=int(data.get("timestamp", 0)), counter=int(data.get("counter", 0)))
        except (TypeError, ValueError):
            return cls()

    def copy(self) -> DataVersion:
        return DataVersion(self.timestamp, self.counter)
