"""Queue allocation: RocketMQ's consumer load-balancing strategies, exact, plus previews.

Pure Python (standard library and ``brokers.engine.common`` only), so the engine's consumer
client, Celery tasks, the console and operators' scripts can all use it::

    from consumers.allocation import MessageQueue, get_strategy, allocate_all

    s = get_strategy("CONSISTENT_HASH", virtual_node_cnt=10)
    s.name                                                    # "CONSISTENT_HASH"
    s.allocate(consumer_group, current_cid, mq_all, cid_all)  # one client, RocketMQ semantics
    allocate_all(s, mq_all, cid_all)                          # {cid: [MessageQueue, ...]}

Each strategy returns what Apache RocketMQ's Java client returns for the same input, so a
group mixing Java and Gantry clients never splits. See :mod:`.preview`, :mod:`.what_if`,
:mod:`.comparison` and :mod:`.consistency` for the whole-group views the console builds on.
"""
from __future__ import annotations

from brokers.engine.common.message_queue import MessageQueue
from consumers.allocation.averagely import AllocateMessageQueueAveragely
from consumers.allocation.averagely_by_circle import AllocateMessageQueueAveragelyByCircle
from consumers.allocation.by_config import AllocateMessageQueueByConfig
from consumers.allocation.by_machine_room import AllocateMessageQueueByMachineRoom
from consumers.allocation.comparison import ComparisonEntry, StrategyComparison, compare_strategies
from consumers.allocation.consistency import (
    AssignmentCheck,
    MemberDeviation,
    ObservedMember,
    check_assignment,
)
from consumers.allocation.consistent_hash import (
    AllocateMessageQueueConsistentHash,
    ConsistentHashRouter,
    md5_hash,
)
from consumers.allocation.errors import (
    AllocationError,
    ScenarioError,
    StrategyParameterError,
    UnknownStrategyError,
)
from consumers.allocation.layout import BrokerQueues, QueueLayout
from consumers.allocation.machine_room_nearby import AllocateMachineRoomNearby, MachineRoomResolver
from consumers.allocation.preview import (
    AllocationPreview,
    QueueOwnership,
    preview_allocation,
)
from consumers.allocation.registry import (
    get_strategy,
    register_strategy,
    required_parameters,
    strategy_names,
)
from consumers.allocation.strategy import (
    AllocateMessageQueueStrategy,
    GroupAllocateMessageQueueStrategy,
    allocate_all,
    sort_for_rebalance,
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
    "AllocateMachineRoomNearby",
    "AllocateMessageQueueAveragely",
    "AllocateMessageQueueAveragelyByCircle",
    "AllocateMessageQueueByConfig",
    "AllocateMessageQueueByMachineRoom",
    "AllocateMessageQueueConsistentHash",
    "AllocateMessageQueueStrategy",
    "AllocationError",
    "AllocationPreview",
    "AssignmentCheck",
    "BrokerQueues",
    "ComparisonEntry",
    "ConsistentHashRouter",
    "GroupAllocateMessageQueueStrategy",
    "MachineRoomResolver",
    "MemberDeviation",
    "MessageQueue",
    "MovementDiff",
    "ObservedMember",
    "QueueLayout",
    "QueueMove",
    "QueueOwnership",
    "Scenario",
    "ScenarioError",
    "StrategyComparison",
    "StrategyParameterError",
    "UnknownStrategyError",
    "WhatIfResult",
    "allocate_all",
    "check_assignment",
    "compare_strategies",
    "get_strategy",
    "md5_hash",
    "movement_diff",
    "preview_allocation",
    "register_strategy",
    "required_parameters",
    "sort_for_rebalance",
    "strategy_names",
    "what_if",
]
