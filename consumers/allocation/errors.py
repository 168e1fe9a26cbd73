"""Errors raised by the allocation core.

RocketMQ's strategies throw ``IllegalArgumentException`` for bad input; here that is
:class:`AllocationError`, a :class:`ValueError`, so callers that only know the standard
library can still catch it.
"""
from __future__ import annotations

__all__ = ["AllocationError", "ScenarioError", "StrategyParameterError", "UnknownStrategyError"]


class AllocationError(ValueError):
    """Reject an allocation input, as RocketMQ's ``IllegalArgumentException`` does."""


class UnknownStrategyError(AllocationError):
    """Name a strategy that the registry does not know."""


class StrategyParameterError(AllocationError):
    """Reject missing, unknown or invalid strategy parameters (a configuration mistake)."""


class ScenarioError(AllocationError):
    """Reject a what-if scenario; ``field`` names the change at fault (``add_consumers``,
    ``remove_consumers``, ``brokers_down`` or ``queue_counts``) so a form can point at it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
