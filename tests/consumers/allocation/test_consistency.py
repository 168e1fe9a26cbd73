"""Observed assignments against expected ones: the split-brain the seeds warn about."""

from __future__ import annotations

import pytest

from brokers.engine.client.allocation import AllocationError, allocate_all, get_strategy
from consumers.allocation import ObservedMember, QueueLayout, check_assignment

LAYOUT = QueueLayout.hypothetical("T", {"broker-a": 3, "broker-b": 3})
MQS = LAYOUT.message_queues()
CIDS = ["c1", "c2", "c3"]


def members_running(strategy_per_cid: dict[str, str], subscription: dict[str, str] | None = None):
    """Return what each member would report if it ran its own strategy over the full group."""
    out = []
    for cid, name in strategy_per_cid.items():
        queues = allocate_all(get_strategy(name), MQS, CIDS)[cid]
        out.append(ObservedMember(cid, tuple(queues), name, (subscription or {}).get(cid, "*")))
    return out


def test_a_healthy_group_is_consistent() -> None:
    check = check_assignment(
        queues=LAYOUT, members=members_running(dict.fromkeys(CIDS, "AVG")), strategy=get_strategy("AVG")
    )
    assert check.consistent
    assert check.doubly_owned == () and check.unowned == () and check.deviations == ()
    assert check.reference_strategy == "AVG"


def test_one_member_with_another_strategy_splits_the_group() -> None:
    # c1, c3 run AVG (c1: a0 a1, c3: b1 b2); c2 runs AVG_BY_CIRCLE (c2: a1 b1).
    members = members_running({"c1": "AVG", "c2": "AVG_BY_CIRCLE", "c3": "AVG"})
    check = check_assignment(queues=LAYOUT, members=members)
    assert check.strategy_outliers == ("c2",)
    assert check.reference_strategy == "AVG"
    assert {(row.queue.broker_name, row.queue.queue_id): row.cids for row in check.doubly_owned} == {
        ("broker-a", 1): ("c1", "c2"),
        ("broker-b", 1): ("c2", "c3"),
    }
    assert [(mq.broker_name, mq.queue_id) for mq in check.unowned] == [("broker-a", 2), ("broker-b", 0)]
    assert not check.consistent


def test_deviations_from_the_expected_strategy() -> None:
    members = members_running({"c1": "AVG", "c2": "AVG_BY_CIRCLE", "c3": "AVG"})
    check = check_assignment(queues=LAYOUT, members=members, strategy=get_strategy("AVG"))
    assert [d.cid for d in check.deviations] == ["c2"]
    deviation = check.deviations[0]
    assert [(mq.broker_name, mq.queue_id) for mq in deviation.missing] == [("broker-a", 2), ("broker-b", 0)]
    assert [(mq.broker_name, mq.queue_id) for mq in deviation.unexpected] == [("broker-a", 1), ("broker-b", 1)]


def test_subscription_outlier() -> None:
    members = members_running(dict.fromkeys(CIDS, "AVG"), {"c1": "TagA", "c2": "TagA", "c3": "TagB"})
    check = check_assignment(queues=LAYOUT, members=members)
    assert check.reference_subscription == "TagA"
    assert check.subscription_outliers == ("c3",)
    assert not check.consistent


def test_stale_queues_held_after_a_shrink() -> None:
    shrunk = LAYOUT.with_queue_counts({"broker-b": 2})
    members = members_running(dict.fromkeys(CIDS, "AVG"))
    check = check_assignment(queues=shrunk, members=members)
    assert [(mq.broker_name, mq.queue_id) for mq in check.stale_queues] == [("broker-b", 2)]


def test_tie_goes_to_the_smallest_value_and_flags_the_rest() -> None:
    members = members_running({"c1": "AVG", "c2": "AVG_BY_CIRCLE", "c3": "CONSISTENT_HASH"})
    check = check_assignment(queues=LAYOUT, members=members)
    assert check.reference_strategy == "AVG"
    assert check.strategy_outliers == ("c2", "c3")


def test_duplicate_member_reports_raise() -> None:
    with pytest.raises(AllocationError):
        check_assignment(queues=LAYOUT, members=[ObservedMember("c1", (), "AVG"), ObservedMember("c1", (), "AVG")])
