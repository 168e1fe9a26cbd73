"""Allocation previews as the console and the API ask for them, over the pure allocation core.

The input (:class:`AllocationInput`) is resolved already: the queues and client ids are lists,
whether they came from a live topic and group or were made up. :func:`preview` allocates with
one strategy; with a :class:`~consumers.allocation.Scenario` (clients in or out, brokers down,
other queue counts) it allocates before and after and diffs them; with ``current`` (what the
members hold now) it diffs against that. :func:`compare` does the same for every strategy.
Nothing here does I/O; results are frozen dataclasses over the core's own.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from brokers.engine.common.message_queue import MessageQueue
from console.errors import InvalidInput
from consumers.allocation import (
    AllocationError,
    AllocationPreview,
    MovementDiff,
    Scenario,
    movement_diff,
    preview_allocation,
    required_parameters,
    sort_for_rebalance,
    strategy_names,
)
from consumers.rules import build_strategy, strategy_kwargs


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


def apply_scenario(queues: tuple[MessageQueue, ...], cids: tuple[str, ...], scenario: Scenario) -> tuple[tuple[MessageQueue, ...], tuple[str, ...]]:
    """The queues and clients after ``scenario``; InvalidInput naming the scenario field otherwise.

    Brokers go down first; a new queue count gives the broker queue ids 0..n-1 in each topic
    of the input (a broker not in the input is added to every topic).
    """
    try:
        after_cids = tuple(scenario.apply_to_cids(cids))
    except AllocationError as exc:
        raise InvalidInput("scenario.add_consumers" if "add" in str(exc) else "scenario.remove_consumers", str(exc)) from None
    brokers = {q.broker_name for q in queues}
    unknown = sorted(set(scenario.brokers_down) - brokers)
    if unknown:
        raise InvalidInput("scenario.brokers_down", f"no such broker among the queues: {', '.join(unknown)}.")
    both = sorted(set(scenario.brokers_down) & set(scenario.queue_counts))
    if both:
        raise InvalidInput("scenario.queue_counts", f"brokers both down and resized: {', '.join(both)}.")
    down = set(scenario.brokers_down) | set(scenario.queue_counts)
    after = [q for q in queues if q.broker_name not in down]
    topics = sorted({q.topic for q in queues})
    if scenario.queue_counts and not topics:
        raise InvalidInput("scenario.queue_counts", "there is no topic to change queue counts of.")
    for broker, count in scenario.queue_counts.items():
        after.extend(MessageQueue(t, broker, i) for t in topics for i in range(count))
    return tuple(after), after_cids


def _allocate(strategy_name: str, params: Mapping[str, Any], queues, cids, group: str, params_field: str = "params") -> AllocationPreview:
    strategy = build_strategy(strategy_name, params, params_field=params_field)
    try:
        return preview_allocation(queues=queues, cids=cids, strategy=strategy, consumer_group=group)
    except AllocationError as exc:
        raise InvalidInput(params_field if params else "strategy", f"{strategy.name}: {exc}") from None


def _result(spec: AllocationInput, strategy_name: str, params: Mapping[str, Any], params_field: str = "params") -> PreviewResult:
    group = spec.group or ""
    if spec.scenario is None:
        preview = _allocate(strategy_name, params, spec.queues, spec.cids, group, params_field)
        diff = movement_diff(spec.current, preview.assignment) if spec.current is not None else None
        return PreviewResult(preview.strategy_name, preview, None, diff)
    queues, cids = apply_scenario(spec.queues, spec.cids, spec.scenario)
    before = _allocate(strategy_name, params, spec.queues, spec.cids, group, params_field)
    after = _allocate(strategy_name, params, queues, cids, group, params_field)
    start = spec.current if spec.current is not None else before.assignment
    return PreviewResult(after.strategy_name, after, before, movement_diff(start, after.assignment),
                         tuple(c for c in cids if c not in spec.cids), tuple(c for c in spec.cids if c not in cids))


def preview(spec: AllocationInput) -> PreviewResult:
    """Allocate ``spec`` with its strategy (and scenario, and diff from ``current``)."""
    return _result(spec, spec.strategy, spec.params)


def compare(spec: AllocationInput, params_by_strategy: Mapping[str, Mapping[str, Any]] | None = None) -> CompareResult:
    """Every strategy on the same input; one without its required parameters is skipped, saying why.

    ``params_by_strategy`` gives each strategy's JSON parameters by name; ``spec.params`` count
    for ``spec.strategy`` too. Bad parameters are refused (InvalidInput) rather than skipped.
    """
    given = {name: dict(p) for name, p in (params_by_strategy or {}).items()}
    if spec.params:
        given.setdefault(spec.strategy, dict(spec.params))
    for name, params in given.items():
        if name not in strategy_names():
            raise InvalidInput(f"params.{name}", f"unknown strategy; use one of {', '.join(strategy_names())}.")
        strategy_kwargs(name, params, f"params.{name}")  # refuse bad parameters up front
    entries = []
    for name in strategy_names():
        params = given.get(name, {})
        missing = [p for p in required_parameters(name) if p not in params and p != "resolver"]
        if missing:
            entries.append(CompareEntry(name, skipped_reason=f"needs {', '.join(missing)}"))
            continue
        try:
            entries.append(CompareEntry(name, _result(spec, name, params, f"params.{name}")))
        except InvalidInput as exc:
            if exc.fields and any(k.startswith("scenario") for k in exc.fields):
                raise
            entries.append(CompareEntry(name, skipped_reason=exc.message))
    mqs, cids = sort_for_rebalance(spec.queues, spec.cids)
    return CompareResult(tuple(mqs), tuple(dict.fromkeys(cids)), tuple(entries))
