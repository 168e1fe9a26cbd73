"""Every strategy side by side on the same queues and clients, optionally under a what-if.

:func:`compare_strategies` previews each registered strategy (or those named) with its
parameters; given a :class:`~consumers.allocation.what_if.Scenario` or the assignment the members
hold now (``current``), each entry also carries the what-if (before, after, the movement). A
strategy that lacks a required parameter, cannot be built from its parameters or refuses the
input is skipped with the reason; a scenario that does not fit the input is the caller's
mistake for every strategy alike, so it raises :class:`ScenarioError` instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.client.allocation.errors import AllocationError
from consumers.allocation.errors import ScenarioError
from consumers.allocation.layout import QueueLayout
from consumers.allocation.preview import AllocationPreview, QueueSource, preview_allocation, queues_of
from brokers.engine.client.allocation.registry import get_strategy, required_parameters, strategy_names
from brokers.engine.client.allocation.strategy import sort_for_rebalance
from consumers.allocation.what_if import Scenario, WhatIfResult, what_if

__all__ = ["ComparisonEntry", "StrategyComparison", "compare_strategies"]


@dataclass(frozen=True)
class ComparisonEntry:
    """One strategy's row of a comparison: a preview (after the what-if, if any), or why there is none."""

    name: str
    preview: AllocationPreview | None = None
    skipped_reason: str | None = None
    what_if: WhatIfResult | None = None  # with a scenario or ``current``: before, after and the movement


@dataclass(frozen=True)
class StrategyComparison:
    """Every strategy's preview for the same queues and clients."""

    queues: tuple[MessageQueue, ...]
    cids: tuple[str, ...]
    entries: tuple[ComparisonEntry, ...]

    def entry(self, name: str) -> ComparisonEntry:
        """Return the entry registered as ``name`` (KeyError if absent)."""
        for e in self.entries:
            if e.name == name:
                return e
        raise KeyError(name)


def compare_strategies(
    *,
    queues: QueueSource,
    cids: Iterable[str],
    params: Mapping[str, Mapping[str, Any]] | None = None,
    names: Iterable[str] | None = None,
    consumer_group: str = "",
    scenario: Scenario | None = None,
    current: Mapping[str, Iterable[MessageQueue]] | None = None,
) -> StrategyComparison:
    """Preview the same input under every registered strategy (or under ``names``).

    ``params`` gives each strategy's parameters by registry name, e.g.
    ``{"CONFIG": {"message_queue_list": [...]}, "MACHINE_ROOM_NEARBY": {"inner": "AVG",
    "resolver": r}}``. A strategy missing a required parameter is skipped as "needs <names>";
    one that cannot be built from its parameters, or whose allocation raises (say a resolver
    answering no room), gets that error as ``skipped_reason``. With ``scenario`` and/or
    ``current`` each entry is :func:`~consumers.allocation.what_if.what_if`'s result too.
    """
    source = queues if isinstance(queues, QueueLayout) else tuple(queues)  # read once per strategy
    cid_list = list(cids)
    mqs, sorted_cids = sort_for_rebalance(queues_of(source), cid_list)
    if scenario is not None:  # the same for every strategy: refused once, before anything is allocated
        scenario.apply_to(source)
        scenario.apply_to_cids(cid_list)
    params = params or {}
    entries = []
    for name in names if names is not None else strategy_names():
        given = dict(params.get(name, {}))
        try:
            missing = [p for p in required_parameters(name) if p not in given]
            if missing:
                entries.append(ComparisonEntry(name=name, skipped_reason=f"needs {', '.join(missing)}"))
                continue
            strategy = get_strategy(name, **given)
        except AllocationError as exc:
            entries.append(ComparisonEntry(name=name, skipped_reason=str(exc)))
            continue
        try:
            if scenario is None and current is None:
                entries.append(
                    ComparisonEntry(
                        name=name,
                        preview=preview_allocation(
                            queues=mqs, cids=sorted_cids, strategy=strategy, consumer_group=consumer_group
                        ),
                    )
                )
            else:
                result = what_if(
                    layout=source,
                    cids=cid_list,
                    strategy=strategy,
                    scenario=scenario or Scenario(),
                    current=current,
                    consumer_group=consumer_group,
                )
                entries.append(ComparisonEntry(name=name, preview=result.after, what_if=result))
        except ScenarioError:
            raise
        except AllocationError as exc:
            entries.append(ComparisonEntry(name=name, skipped_reason=f"{strategy.name}: {exc}"))
    return StrategyComparison(queues=tuple(mqs), cids=tuple(dict.fromkeys(sorted_cids)), entries=tuple(entries))
