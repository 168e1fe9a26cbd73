"""Errors raised by the allocation strategies.

RocketMQ's strategies throw ``IllegalArgumentException`` for bad input; here that is
:class:`AllocationError`, a :class:`ValueError`, so callers that only know the standard
library can still catch it.
"""

from __future__ import annotations

__all__ = ["AllocationError", "StrategyParameterError", "UnknownStrategyError"]


class AllocationError(ValueError):
    """Reject an allocation input, as RocketMQ's ``IllegalArgumentException`` does."""


class UnknownStrategyError(AllocationError):
    """Name a strategy that the registry does not know."""


class StrategyParameterError(AllocationError):
    """Reject missing, unknown or invalid strategy parameters (a configuration mistake)."""
