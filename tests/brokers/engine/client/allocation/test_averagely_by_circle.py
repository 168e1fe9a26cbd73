"""AVG_BY_CIRCLE: RocketMQ's unit test and the 9-queue example."""

from __future__ import annotations

from brokers.engine.client.allocation import AllocateMessageQueueAveragelyByCircle, allocate_all
from tests.brokers.engine.client.allocation._support import (
    per_cid,
    rocketmq_test_cids,
    rocketmq_test_queues,
    seed_queues,
    short,
)


def test_rocketmq_unit_test_ten_queues_four_consumers() -> None:
    # AllocateMessageQueueAveragelyByCircleTest
    cids, mqs = rocketmq_test_cids(4), rocketmq_test_queues(10)
    strategy = AllocateMessageQueueAveragelyByCircle()
    assert strategy.allocate("", "CID_PREFIX", mqs, cids) == []  # not in cidAll
    got = {c: [mq.queue_id for mq in q] for c, q in per_cid(strategy, mqs, cids).items()}
    assert got == {
        "CID_PREFIX0": [0, 4, 8],
        "CID_PREFIX1": [1, 5, 9],
        "CID_PREFIX2": [2, 6],
        "CID_PREFIX3": [3, 7],
    }


def test_nine_queues_four_consumers_docstring_example() -> None:
    result = allocate_all(AllocateMessageQueueAveragelyByCircle(), seed_queues(), ["cid0", "cid1", "cid2", "cid3"])
    assert {c: short(q) for c, q in result.items()} == {
        "cid0": ["a0", "b1", "c2"],
        "cid1": ["a1", "b2"],
        "cid2": ["a2", "c0"],
        "cid3": ["b0", "c1"],
    }


def test_more_consumers_than_queues() -> None:
    result = allocate_all(AllocateMessageQueueAveragelyByCircle(), rocketmq_test_queues(2), rocketmq_test_cids(3))
    assert {c: [mq.queue_id for mq in q] for c, q in result.items()} == {
        "CID_PREFIX0": [0],
        "CID_PREFIX1": [1],
        "CID_PREFIX2": [],
    }
