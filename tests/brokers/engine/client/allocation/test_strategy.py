"""RocketMQ's ordering before a strategy runs, the argument check, and allocate_all's shape."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brokers.engine.client.allocation import AllocationError, MessageQueue, allocate_all, get_strategy
from brokers.engine.client.allocation.strategy import (
    check_arguments,
    java_string_key,
    sort_cids,
    sort_for_rebalance,
    sort_message_queues,
)

EMOJI, FULLWIDTH_A = "\U0001f600", "\uff21"  # UTF-16: D83D DE00 vs FF21

texts = st.text(st.sampled_from(["a", "b", "B", "-", "@", "é", FULLWIDTH_A, EMOJI]), max_size=4)
queues = st.lists(st.builds(MessageQueue, texts, texts, st.integers(0, 20)), max_size=30)


def java_compare_key(mq: MessageQueue) -> tuple:
    return (java_string_key(mq.topic), java_string_key(mq.broker_name), mq.queue_id)


def test_java_orders_by_utf16_code_units() -> None:
    # Python would put U+FF21 first (smaller code point); Java compares D83D < FF21.
    assert sort_cids([FULLWIDTH_A, EMOJI]) == [EMOJI, FULLWIDTH_A]
    assert sorted([FULLWIDTH_A, EMOJI]) == [FULLWIDTH_A, EMOJI]
    mqs = [MessageQueue("T", FULLWIDTH_A, 0), MessageQueue("T", EMOJI, 0)]
    assert sort_message_queues(mqs) == mqs[::-1]


def test_queue_ids_sort_as_numbers() -> None:
    mqs = [MessageQueue("T", "b", 10), MessageQueue("T", "b", 9), MessageQueue("S", "z", 99)]
    assert sort_message_queues(mqs) == [mqs[2], mqs[1], mqs[0]]


@settings(max_examples=100, deadline=None)
@given(mqs=queues, cids=st.lists(texts, max_size=10))
def test_sorting_matches_java_compare_to(mqs, cids) -> None:
    assert sort_message_queues(mqs) == sorted(mqs, key=java_compare_key)
    assert sort_cids(cids) == sorted(cids, key=java_string_key)
    sorted_mqs, sorted_cids = sort_for_rebalance(mqs + mqs, cids)
    assert sorted_mqs == sorted(set(mqs), key=java_compare_key)  # mqAll comes from a set
    assert sorted_cids == sorted(cids, key=java_string_key)  # cidAll keeps duplicates


def test_check_arguments_order_and_foreign_cid(caplog: pytest.LogCaptureFixture) -> None:
    mqs = [MessageQueue("T", "b", 0)]
    with pytest.raises(AllocationError, match="currentCID"):
        check_arguments("G", "", [], [])  # the current cid is checked first
    with pytest.raises(AllocationError, match="mqAll"):
        check_arguments("G", "c", [], [])
    with caplog.at_level(logging.INFO, logger="brokers.engine.client.allocation.strategy"):
        assert check_arguments("G", "c", mqs, ["d"]) is False
    assert "[BUG] ConsumerGroup: G The consumerId: c not in cidAll" in caplog.text


def test_allocate_all_keys_follow_sorted_cids_and_drop_duplicates() -> None:
    mqs = [MessageQueue("T", "b", i) for i in range(4)]
    result = allocate_all(get_strategy("AVG"), mqs, ["z", "a", "a"])
    # cidAll = [a, a, z]: "a" takes index 0's block, index 1's block is nobody's.
    assert list(result) == ["a", "z"]
    assert result == {"a": mqs[:2], "z": mqs[3:]}
