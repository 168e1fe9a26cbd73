"""Whole-group views of an allocation: previews, what-ifs, comparisons, consistency checks.

Pure Python (standard library, ``brokers.engine.common`` and the strategies of
:mod:`brokers.engine.client.allocation`, the ones the engine's consumers run), so Celery tasks,
the console and operators' scripts can use it::

    from brokers.engine.client.allocation import get_strategy
    from consumers.allocation import preview_allocation, what_if

See :mod:`.preview`, :mod:`.what_if`, :mod:`.comparison` and :mod:`.consistency`; the layout of a
topic's queues (:mod:`.layout`) is what they take.
"""

from __future__ import annotations

from consumers.allocation.comparison import ComparisonEntry, StrategyComparison, compare_strategies
from consumers.allocation.consistency import (
    AssignmentCheck,
    MemberDeviation,
    ObservedMember,
    check_assignment,
)
from consumers.allocation.errors import ScenarioError
from consumers.allocation.layout import BrokerQueues, QueueLayout
from consumers.allocation.preview import (
    AllocationPreview,
    QueueOwnership,
    preview_allocation,
)
from consumers.allocation.what_if import (
    MovementDiff,
    QueueMove,
    Scenario,
    WhatIfResult,
    movement_diff,
    what_if,
)

__all__ = [
    "AllocationPreview",
    "AssignmentCheck",
    "BrokerQueues",
    "ComparisonEntry",
    "MemberDeviation",
    "MovementDiff",
    "ObservedMember",
    "QueueLayout",
    "QueueMove",
    "QueueOwnership",
    "Scenario",
    "ScenarioError",
    "StrategyComparison",
    "WhatIfResult",
    "check_assignment",
    "compare_strategies",
    "movement_diff",
    "preview_allocation",
    "what_if",
]
