"""AVG: the seed articles' worked example, RocketMQ's unit test, and the edge cases."""

from __future__ import annotations

import pytest

from brokers.engine.client.allocation import AllocateMessageQueueAveragely, MessageQueue, allocate_all
from brokers.engine.client.allocation.averagely import averagely_block
from tests.brokers.engine.client.allocation._support import (
    SEED_CIDS,
    per_cid,
    rocketmq_test_cids,
    rocketmq_test_queues,
    seed_queues,
    short,
)


def test_seed_example_nine_queues_four_consumers() -> None:
    result = allocate_all(AllocateMessageQueueAveragely(), seed_queues(), reversed(SEED_CIDS))
    assert {cid: short(q) for cid, q in result.items()} == {
        "192.168.0.6@15956": ["a0", "a1", "a2"],
        "192.168.0.7@15957": ["b0", "b1"],
        "192.168.0.8@15958": ["b2", "c0"],
        "192.168.0.9@15959": ["c1", "c2"],
    }
    assert list(result) == list(SEED_CIDS)


def test_rocketmq_unit_test_ten_queues_four_consumers() -> None:
    # AllocateMessageQueueAveragelyTest: sizes {3, 3, 2, 2}.
    cids, mqs = rocketmq_test_cids(4), rocketmq_test_queues(10)
    sizes = [len(AllocateMessageQueueAveragely().allocate("", c, mqs, cids)) for c in cids]
    assert sizes == [3, 3, 2, 2]
    ids = {c: [mq.queue_id for mq in q] for c, q in per_cid(AllocateMessageQueueAveragely(), mqs, cids).items()}
    assert ids == {
        "CID_PREFIX0": [0, 1, 2],
        "CID_PREFIX1": [3, 4, 5],
        "CID_PREFIX2": [6, 7],
        "CID_PREFIX3": [8, 9],
    }


def test_more_consumers_than_queues_leaves_the_last_idle() -> None:
    mqs, cids = rocketmq_test_queues(3), rocketmq_test_cids(5)
    got = {c: [mq.queue_id for mq in q] for c, q in allocate_all(AllocateMessageQueueAveragely(), mqs, cids).items()}
    assert got == {"CID_PREFIX0": [0], "CID_PREFIX1": [1], "CID_PREFIX2": [2], "CID_PREFIX3": [], "CID_PREFIX4": []}


def test_uses_the_given_order_without_sorting() -> None:
    mqs = [MessageQueue("T", "b", 2), MessageQueue("T", "a", 9), MessageQueue("T", "c", 0)]
    assert AllocateMessageQueueAveragely().allocate("G", "z", mqs, ["z", "a"]) == mqs[:2]


def test_duplicate_client_id_takes_the_first_share_and_orphans_the_second() -> None:
    # Java's cidAll.indexOf finds the first occurrence; nobody takes index 1's block.
    mqs = rocketmq_test_queues(4)
    result = per_cid(AllocateMessageQueueAveragely(), mqs, ["x", "x"])
    assert result == {"x": mqs[:2]}


@pytest.mark.parametrize(
    ("n", "c", "index", "expected"),
    [
        (9, 4, 0, (0, 3)),
        (9, 4, 1, (3, 2)),
        (9, 4, 3, (7, 2)),
        (8, 4, 2, (4, 2)),
        (3, 5, 2, (2, 1)),
        (3, 5, 3, (6, 0)),  # Java: startIndex 3*1+3 = 6, range min(1, 3-6) < 0 -> nothing
        (5, 5, 4, (4, 1)),
        (1, 1, 0, (0, 1)),
    ],
)
def test_block_arithmetic(n: int, c: int, index: int, expected: tuple[int, int]) -> None:
    start, length = averagely_block(n, c, index)
    assert (start, length) == (expected[0], expected[1])


def test_blocks_tile_the_queue_list() -> None:
    for n in range(1, 40):
        for c in range(1, 12):
            covered = []
            for i in range(c):
                start, length = averagely_block(n, c, i)
                covered.extend(range(start, start + length))
            assert covered == list(range(n)), (n, c)
