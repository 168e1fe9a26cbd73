"""Allocation previews as the console and the API ask for them, over the pure allocation core.

The input (:class:`AllocationInput`) is resolved already: the queues and client ids are lists,
whether they came from a live topic and group or were made up. :func:`preview` allocates with
one strategy (the core's :func:`~consumers.allocation.preview_allocation`); with a
:class:`~consumers.allocation.Scenario` (clients in or out, brokers down, other queue counts)
it is the core's :func:`~consumers.allocation.what_if`, and with ``current`` (what the members
hold now) it diffs against that. :func:`compare` is the core's
:func:`~consumers.allocation.compare_strategies`. What is left here is the console's part:
strategy parameters in their JSON form, and the core's errors as :class:`InvalidInput` naming
the field at fault. Nothing here does I/O; results are frozen dataclasses over the core's own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from brokers.engine.common.message_queue import MessageQueue
from console.errors import InvalidInput
from brokers.engine.client.allocation import AllocationError, required_parameters, strategy_names
from consumers.allocation import (
    AllocationPreview,
    ComparisonEntry,
    MovementDiff,
    Scenario,
    ScenarioError,
    WhatIfResult,
    compare_strategies,
    movement_diff,
    preview_allocation,
    what_if,
)
from consumers.rules import MissingRooms, build_strategy, check_nearby_rooms, strategy_kwargs

T = TypeVar("T")


@dataclass(frozen=True)
class AllocationInput:
    """What to allocate: queues and clients (resolved), a strategy and its JSON parameters."""

    queues: tuple[MessageQueue, ...]
    cids: tuple[str, ...]
    strategy: str = "AVG"
    params: dict[str, Any] = field(default_factory=dict)
    current: dict[str, tuple[MessageQueue, ...]] | None = None
    scenario: Scenario | None = None
    topic: str | None = None  # the live topic the queues came from
    group: str | None = None  # the live group the clients came from

    @property
    def what_if(self) -> bool:
        return self.scenario is not None or self.current is not None


@dataclass(frozen=True)
class PreviewResult:
    """One strategy's allocation (``preview``: after the scenario, if any) and the movement to it.

    ``before`` is the allocation of the input as given when a scenario changed it; ``diff``
    starts from ``current`` when given, else from ``before``; both are None for a plain preview.
    """

    strategy_name: str
    preview: AllocationPreview
    before: AllocationPreview | None = None
    diff: MovementDiff | None = None
    added_cids: tuple[str, ...] = ()
    removed_cids: tuple[str, ...] = ()


@dataclass(frozen=True)
class CompareEntry:
    name: str
    result: PreviewResult | None = None
    skipped_reason: str | None = None


@dataclass(frozen=True)
class CompareResult:
    queues: tuple[MessageQueue, ...]
    cids: tuple[str, ...]
    entries: tuple[CompareEntry, ...]


def _scenario_checked(call: Callable[[], T]) -> T:
    """``call()``, a scenario that does not fit the input refused on its own field."""
    try:
        return call()
    except ScenarioError as exc:
        raise InvalidInput(f"scenario.{exc.field}", f"{exc}.") from None


def _from_what_if(spec: AllocationInput, result: WhatIfResult) -> PreviewResult:
    """The core's what-if as the console shows it: ``before`` only when a scenario changed the input."""
    after = result.after
    if spec.scenario is None:
        return PreviewResult(after.strategy_name, after, None, result.diff)
    return PreviewResult(after.strategy_name, after, result.before, result.diff, result.added_cids, result.removed_cids)


def _check_rooms(spec: AllocationInput, name: str, params: Mapping[str, Any], field_name: str) -> None:
    """MACHINE_ROOM_NEARBY needs a room for every broker and client, the scenario's newcomers too."""
    if name == "MACHINE_ROOM_NEARBY":
        added = spec.scenario.add_consumers if spec.scenario else ()
        check_nearby_rooms(params, spec.queues, (*spec.cids, *added), field_name)


def preview(spec: AllocationInput) -> PreviewResult:
    """Allocate ``spec`` with its strategy (and scenario, and diff from ``current``)."""
    strategy = build_strategy(spec.strategy, spec.params)
    _check_rooms(spec, spec.strategy, spec.params, "params")
    group = spec.group or ""
    try:
        scenario = spec.scenario
        if scenario is None:
            result = preview_allocation(queues=spec.queues, cids=spec.cids, strategy=strategy, consumer_group=group)
            diff = movement_diff(spec.current, result.assignment) if spec.current is not None else None
            return PreviewResult(result.strategy_name, result, None, diff)
        return _scenario_checked(
            lambda: _from_what_if(
                spec,
                what_if(
                    layout=spec.queues,
                    cids=spec.cids,
                    strategy=strategy,
                    scenario=scenario,
                    current=spec.current,
                    consumer_group=group,
                ),
            )
        )
    except InvalidInput:
        raise
    except AllocationError as exc:
        raise InvalidInput("params" if spec.params else "strategy", f"{strategy.name}: {exc}") from None


def _entry(spec: AllocationInput, entry: ComparisonEntry) -> CompareEntry:
    if entry.preview is None:
        return CompareEntry(entry.name, skipped_reason=entry.skipped_reason)
    if entry.what_if is None:
        return CompareEntry(entry.name, PreviewResult(entry.preview.strategy_name, entry.preview))
    return CompareEntry(entry.name, _from_what_if(spec, entry.what_if))


def compare(spec: AllocationInput, params_by_strategy: Mapping[str, Mapping[str, Any]] | None = None) -> CompareResult:
    """Every strategy on the same input; one without its required parameters is skipped, saying why.

    ``params_by_strategy`` gives each strategy's JSON parameters by name; ``spec.params`` count
    for ``spec.strategy`` too. Bad parameters are refused (InvalidInput) rather than skipped.
    The JSON parameters become the core's (``strategy_kwargs``); the core compares.
    """
    given = {name: dict(p) for name, p in (params_by_strategy or {}).items()}
    if spec.params:
        given.setdefault(spec.strategy, dict(spec.params))
    for name, params in given.items():
        if name not in strategy_names():
            raise InvalidInput(f"params.{name}", f"unknown strategy; use one of {', '.join(strategy_names())}.")
        strategy_kwargs(name, params, f"params.{name}")  # refuse bad parameters up front
    kwargs, skipped = {}, {}
    for name in strategy_names():
        params = given.get(name, {})
        missing = [
            p for p in required_parameters(name) if p not in params and p != "resolver"
        ]  # the console makes the resolver
        if missing:
            skipped[name] = f"needs {', '.join(missing)}"
            continue
        kwargs[name] = strategy_kwargs(name, params, f"params.{name}")
        try:
            _check_rooms(spec, name, params, f"params.{name}")
        except MissingRooms as exc:
            skipped[name] = f"{exc.summary()} (rooms: broker_rooms and consumer_rooms, or names like hz@broker-a)"
            del kwargs[name]
    comparison = _scenario_checked(
        lambda: compare_strategies(
            queues=spec.queues,
            cids=spec.cids,
            params=kwargs,
            names=list(kwargs),
            consumer_group=spec.group or "",
            scenario=spec.scenario,
            current=spec.current,
        )
    )
    found = {e.name: e for e in comparison.entries}
    entries = tuple(
        CompareEntry(name, skipped_reason=skipped[name]) if name in skipped else _entry(spec, found[name])
        for name in strategy_names()
    )
    return CompareResult(comparison.queues, comparison.cids, entries)
