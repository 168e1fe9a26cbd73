"""Check what a group's members actually hold against what they should hold.

RocketMQ members allocate independently, so a group stays whole only if every member uses the
same strategy and the same subscription over the same queues and clients. When they differ
the group splits: two members consume one queue, or a queue is consumed by nobody, and
messages of a topic some member does not subscribe to are lost to it. :func:`check_assignment`
takes what members report (their held queues, strategy name and subscription) and names:
queues owned twice, queues owned by nobody, queues held that the topic no longer has, members
whose strategy or subscription differs from the rest, and, given the strategy, how each
member's queues differ from the expected allocation.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.client.allocation.errors import AllocationError
from consumers.allocation.preview import (
    AllocationPreview,
    QueueOwnership,
    QueueSource,
    build_preview,
    preview_allocation,
    queues_of,
)
from brokers.engine.client.allocation.strategy import AllocateMessageQueueStrategy, sort_for_rebalance

__all__ = ["AssignmentCheck", "MemberDeviation", "ObservedMember", "check_assignment"]


@dataclass(frozen=True)
class ObservedMember:
    """What one member reports for one topic.

    ``subscription`` is whatever identifies the member's subscription of the topic, compared
    for equality only (e.g. ``"TAG:TagA || TagB"``); ``strategy_name`` is its strategy's
    ``getName()``.
    """

    cid: str
    queues: tuple[MessageQueue, ...]
    strategy_name: str
    subscription: str = "*"

    def __post_init__(self) -> None:
        if not self.cid:
            raise AllocationError("member cid is empty")
        object.__setattr__(self, "queues", tuple(self.queues))


@dataclass(frozen=True)
class MemberDeviation:
    """A member's queues against the expected allocation."""

    cid: str
    missing: tuple[MessageQueue, ...]
    unexpected: tuple[MessageQueue, ...]


@dataclass(frozen=True)
class AssignmentCheck:
    """The findings of :func:`check_assignment`; ``consistent`` is True when there are none.

    ``reference_strategy``/``reference_subscription`` are what the outliers differ from: the
    expected strategy's name when one was given, otherwise the most common value (ties go to
    the smallest value, and every member off it is an outlier).
    """

    observed: AllocationPreview
    doubly_owned: tuple[QueueOwnership, ...]
    unowned: tuple[MessageQueue, ...]
    stale_queues: tuple[MessageQueue, ...]
    reference_strategy: str | None
    strategy_outliers: tuple[str, ...]
    reference_subscription: str | None
    subscription_outliers: tuple[str, ...]
    expected: AllocationPreview | None
    deviations: tuple[MemberDeviation, ...]
    consistent: bool


def _reference(values: Sequence[str], preferred: str | None) -> str | None:
    if preferred is not None:
        return preferred
    if not values:
        return None
    counts = Counter(values)
    top = max(counts.values())
    return min(v for v, n in counts.items() if n == top)


def check_assignment(
    *,
    queues: QueueSource,
    members: Iterable[ObservedMember],
    strategy: AllocateMessageQueueStrategy | None = None,
    consumer_group: str = "",
) -> AssignmentCheck:
    """Compare members' reported queues with each other and, given ``strategy``, with it.

    The expected allocation uses every reported member as ``cidAll`` (that is what the broker
    hands each member). A member listed twice is rejected: reports are per client id.
    """
    member_list = list(members)
    cids = [m.cid for m in member_list]
    duplicates = sorted(c for c, n in Counter(cids).items() if n > 1)
    if duplicates:
        raise AllocationError(f"members reported twice: {duplicates}")
    mqs, sorted_cids = sort_for_rebalance(queues_of(queues), cids)
    by_cid = {m.cid: m for m in member_list}
    observed = build_preview(
        strategy_name="(observed)",
        consumer_group=consumer_group,
        queues=mqs,
        cids=sorted_cids,
        assignment={cid: by_cid[cid].queues for cid in sorted_cids},
    )

    strategy_ref = _reference([m.strategy_name for m in member_list], strategy.name if strategy is not None else None)
    subscription_ref = _reference([m.subscription for m in member_list], None)
    strategy_outliers = tuple(c for c in sorted_cids if by_cid[c].strategy_name != strategy_ref)
    subscription_outliers = tuple(c for c in sorted_cids if by_cid[c].subscription != subscription_ref)

    expected = None
    deviations: list[MemberDeviation] = []
    if strategy is not None:
        expected = preview_allocation(queues=mqs, cids=sorted_cids, strategy=strategy, consumer_group=consumer_group)
        for cid in sorted_cids:
            held, should = set(by_cid[cid].queues), set(expected.assignment.get(cid, ()))
            if held != should:
                deviations.append(
                    MemberDeviation(
                        cid=cid,
                        missing=tuple(mq for mq in expected.assignment[cid] if mq not in held),
                        unexpected=tuple(mq for mq in dict.fromkeys(by_cid[cid].queues) if mq not in should),
                    )
                )

    consistent = not (
        observed.shared_queues
        or observed.unassigned_queues
        or observed.foreign_queues
        or strategy_outliers
        or subscription_outliers
        or deviations
    )
    return AssignmentCheck(
        observed=observed,
        doubly_owned=observed.shared_queues,
        unowned=observed.unassigned_queues,
        stale_queues=observed.foreign_queues,
        reference_strategy=strategy_ref,
        strategy_outliers=strategy_outliers,
        reference_subscription=subscription_ref,
        subscription_outliers=subscription_outliers,
        expected=expected,
        deviations=tuple(deviations),
        consistent=consistent,
    )
