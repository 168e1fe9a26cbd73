"""Strategies by RocketMQ name: ``get_strategy("CONSISTENT_HASH", virtual_node_cnt=10)``.

The registry maps each RocketMQ strategy name to a factory that takes the strategy's keyword
parameters and checks them (missing, unknown or invalid parameters raise
:class:`StrategyParameterError`). Parameters per name:

=======================  =======================================================================
``AVG``                  none
``AVG_BY_CIRCLE``        none
``CONFIG``               ``message_queue_list`` (required; the queues every client returns)
``MACHINE_ROOM``         ``consumeridcs`` (required; the rooms whose queues are consumed)
``MACHINE_ROOM_NEARBY``  ``resolver`` (required), ``inner`` (a strategy or a registered name;
                         required unless the name is spelled ``MACHINE_ROOM_NEARBY-<inner>``)
``CONSISTENT_HASH``      ``virtual_node_cnt`` (default 10), ``hash_function`` (default MD5)
=======================  =======================================================================

Other code may add strategies with :func:`register_strategy`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from brokers.engine.client.allocation.averagely import AllocateMessageQueueAveragely
from brokers.engine.client.allocation.averagely_by_circle import AllocateMessageQueueAveragelyByCircle
from brokers.engine.client.allocation.by_config import AllocateMessageQueueByConfig
from brokers.engine.client.allocation.by_machine_room import AllocateMessageQueueByMachineRoom
from brokers.engine.client.allocation.consistent_hash import (
    DEFAULT_VIRTUAL_NODE_CNT,
    AllocateMessageQueueConsistentHash,
)
from brokers.engine.client.allocation.errors import StrategyParameterError, UnknownStrategyError
from brokers.engine.client.allocation.machine_room_nearby import AllocateMachineRoomNearby
from brokers.engine.client.allocation.strategy import AllocateMessageQueueStrategy

__all__ = [
    "NEARBY_PREFIX",
    "StrategyFactory",
    "get_strategy",
    "register_strategy",
    "required_parameters",
    "strategy_names",
]

StrategyFactory = Callable[..., AllocateMessageQueueStrategy]

NEARBY_PREFIX = "MACHINE_ROOM_NEARBY-"

_MISSING: Any = object()


def _avg() -> AllocateMessageQueueStrategy:
    return AllocateMessageQueueAveragely()


def _avg_by_circle() -> AllocateMessageQueueStrategy:
    return AllocateMessageQueueAveragelyByCircle()


def _config(*, message_queue_list: Any = _MISSING) -> AllocateMessageQueueStrategy:
    if message_queue_list is _MISSING or message_queue_list is None:
        raise StrategyParameterError("CONFIG needs message_queue_list (the queues to consume)")
    return AllocateMessageQueueByConfig(message_queue_list)


def _machine_room(*, consumeridcs: Any = _MISSING) -> AllocateMessageQueueStrategy:
    if consumeridcs is _MISSING or consumeridcs is None:
        raise StrategyParameterError("MACHINE_ROOM needs consumeridcs (the machine rooms to consume)")
    return AllocateMessageQueueByMachineRoom(consumeridcs)


def _machine_room_nearby(*, inner: Any = _MISSING, resolver: Any = _MISSING) -> AllocateMessageQueueStrategy:
    if resolver is _MISSING or resolver is None:
        raise StrategyParameterError(
            "MACHINE_ROOM_NEARBY needs resolver (broker_deploy_in(mq) / consumer_deploy_in(cid))"
        )
    if inner is _MISSING or inner is None:
        raise StrategyParameterError("MACHINE_ROOM_NEARBY needs inner (the strategy it wraps)")
    if isinstance(inner, str):
        inner = get_strategy(inner)
    return AllocateMachineRoomNearby(inner, resolver)


def _consistent_hash(
    *, virtual_node_cnt: int = DEFAULT_VIRTUAL_NODE_CNT, hash_function: Any = None
) -> AllocateMessageQueueStrategy:
    return AllocateMessageQueueConsistentHash(virtual_node_cnt, hash_function)


_FACTORIES: dict[str, StrategyFactory] = {
    "AVG": _avg,
    "AVG_BY_CIRCLE": _avg_by_circle,
    "CONFIG": _config,
    "MACHINE_ROOM": _machine_room,
    "MACHINE_ROOM_NEARBY": _machine_room_nearby,
    "CONSISTENT_HASH": _consistent_hash,
}

_REQUIRED: dict[str, tuple[str, ...]] = {
    "CONFIG": ("message_queue_list",),
    "MACHINE_ROOM": ("consumeridcs",),
    "MACHINE_ROOM_NEARBY": ("inner", "resolver"),
}


def register_strategy(
    name: str,
    factory: StrategyFactory,
    *,
    required: tuple[str, ...] = (),
    replace: bool = False,
) -> None:
    """Add a strategy factory under ``name`` (refuse to shadow one unless ``replace``)."""
    if not name:
        raise StrategyParameterError("a strategy needs a name")
    if name in _FACTORIES and not replace:
        raise StrategyParameterError(f"strategy {name!r} is already registered")
    _FACTORIES[name] = factory
    _REQUIRED[name] = tuple(required)


def strategy_names() -> tuple[str, ...]:
    """Return the registered names, RocketMQ's six first in their documented order."""
    return tuple(_FACTORIES)


def required_parameters(name: str) -> tuple[str, ...]:
    """Return the parameters ``name`` cannot be built without (for forms and comparisons)."""
    _resolve(name)
    return _REQUIRED.get(name, ())


def _resolve(name: str) -> StrategyFactory:
    try:
        return _FACTORIES[name]
    except (KeyError, TypeError):
        known = ", ".join(_FACTORIES)
        raise UnknownStrategyError(f"unknown strategy {name!r}; known: {known}") from None


def get_strategy(name: str, **params: Any) -> AllocateMessageQueueStrategy:
    """Build the strategy RocketMQ calls ``name`` with ``params``.

    ``"MACHINE_ROOM_NEARBY-AVG"`` (the name such a strategy reports) is accepted and means
    ``MACHINE_ROOM_NEARBY`` with ``inner="AVG"``.
    """
    if isinstance(name, str) and name.startswith(NEARBY_PREFIX) and name not in _FACTORIES:
        if params.get("inner") is not None:
            raise StrategyParameterError(f"{name!r} already names its inner strategy")
        params = {**params, "inner": name[len(NEARBY_PREFIX) :]}
        name = "MACHINE_ROOM_NEARBY"
    factory = _resolve(name)
    try:
        return factory(**params)
    except TypeError as exc:
        raise StrategyParameterError(f"bad parameters for {name}: {exc}") from None
