"""RocketMQ's consumer load-balancing strategies, exact: the ones the engine's consumers run.

Pure Python (standard library and ``brokers.engine.common`` only); the consumers of
:mod:`brokers.engine.client` take any of them (AVG when none is given), and the console's
previews and what-ifs (:mod:`consumers.allocation`) build on the same objects::

    from brokers.engine.client.allocation import MessageQueue, get_strategy, allocate_all

    s = get_strategy("CONSISTENT_HASH", virtual_node_cnt=10)
    s.name                                                    # "CONSISTENT_HASH"
    s.allocate(consumer_group, current_cid, mq_all, cid_all)  # one client, RocketMQ semantics
    allocate_all(s, mq_all, cid_all)                          # {cid: [MessageQueue, ...]}

Each strategy returns what Apache RocketMQ's Java client returns for the same input, so a
group mixing Java and Gantry clients never splits.
"""

from __future__ import annotations

from brokers.engine.client.allocation.averagely import AllocateMessageQueueAveragely
from brokers.engine.client.allocation.averagely_by_circle import AllocateMessageQueueAveragelyByCircle
from brokers.engine.client.allocation.by_config import AllocateMessageQueueByConfig
from brokers.engine.client.allocation.by_machine_room import AllocateMessageQueueByMachineRoom
from brokers.engine.client.allocation.consistent_hash import (
    AllocateMessageQueueConsistentHash,
    ConsistentHashRouter,
    md5_hash,
)
from brokers.engine.client.allocation.errors import (
    AllocationError,
    StrategyParameterError,
    UnknownStrategyError,
)
from brokers.engine.client.allocation.machine_room_nearby import AllocateMachineRoomNearby, MachineRoomResolver
from brokers.engine.client.allocation.registry import (
    get_strategy,
    register_strategy,
    required_parameters,
    strategy_names,
)
from brokers.engine.client.allocation.strategy import (
    AllocateMessageQueueStrategy,
    GroupAllocateMessageQueueStrategy,
    allocate_all,
    sort_for_rebalance,
)
from brokers.engine.common.message_queue import MessageQueue

__all__ = [
    "AllocateMachineRoomNearby",
    "AllocateMessageQueueAveragely",
    "AllocateMessageQueueAveragelyByCircle",
    "AllocateMessageQueueByConfig",
    "AllocateMessageQueueByMachineRoom",
    "AllocateMessageQueueConsistentHash",
    "AllocateMessageQueueStrategy",
    "AllocationError",
    "ConsistentHashRouter",
    "GroupAllocateMessageQueueStrategy",
    "MachineRoomResolver",
    "MessageQueue",
    "StrategyParameterError",
    "UnknownStrategyError",
    "allocate_all",
    "get_strategy",
    "md5_hash",
    "register_strategy",
    "required_parameters",
    "sort_for_rebalance",
    "strategy_names",
]
