"""The what-if error; the strategies' errors are :mod:`brokers.engine.client.allocation.errors`."""

from __future__ import annotations

from brokers.engine.client.allocation.errors import AllocationError

__all__ = ["ScenarioError"]


class ScenarioError(AllocationError):
    """Reject a what-if scenario; ``field`` names the change at fault (``add_consumers``,
    ``remove_consumers``, ``brokers_down`` or ``queue_counts``) so a form can point at it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
