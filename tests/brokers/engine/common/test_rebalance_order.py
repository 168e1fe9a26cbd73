"""The one ordering before allocation: Java's String.compareTo (UTF-16 code units) and MessageQueue.compareTo."""

from __future__ import annotations

from brokers.engine.client import rebalance
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.rebalance_order import sort_for_rebalance
from brokers.engine.client.allocation import strategy

EMOJI, FULLWIDTH_A = "\U0001f600", "\uff21"  # U+1F600 is D83D DE00 in UTF-16: below U+FF21 for Java


def test_client_ids_and_queues_sort_as_java_does() -> None:
    mqs = [
        MessageQueue(FULLWIDTH_A, "b", 0),
        MessageQueue(EMOJI, "b", 1),
        MessageQueue(EMOJI, "a", 3),
        MessageQueue(EMOJI, "a", 2),
    ]
    sorted_mqs, cids = sort_for_rebalance([*mqs, mqs[0]], [FULLWIDTH_A, EMOJI, "c1"])
    assert cids == ["c1", EMOJI, FULLWIDTH_A]
    assert sorted_mqs == [mqs[3], mqs[2], mqs[1], mqs[0]]  # topic, broker name, queue id; the duplicate once


def test_the_engine_client_and_the_allocation_package_share_it() -> None:
    assert rebalance.sort_for_rebalance is sort_for_rebalance is strategy.sort_for_rebalance
