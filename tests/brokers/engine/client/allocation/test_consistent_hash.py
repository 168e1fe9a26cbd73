"""CONSISTENT_HASH: hard-coded expectations derived from the Java algorithm, and RocketMQ's tests.

How the expected values were derived: a throwaway JDK 17 program re-stating RocketMQ's
``ConsistentHashRouter`` (``java.security.MessageDigest`` MD5, the first four digest bytes
masked with ``& 0xFF`` and shifted into a ``long``, virtual nodes ``<cid>-<i>`` put into a
``java.util.TreeMap`` in ``cidAll`` order, ``tailMap(hash).firstKey()`` else
``firstKey()``) and ``AllocateMessageQueueConsistentHash`` printed the assignments below; it
also agreed with this package on over 25,000 random cases (duplicates, hash collisions, non-ASCII
ids). The raw hashes were checked independently with ``md5sum``:
``printf 'cid2-5' | md5sum`` starts ``36602120`` = 912269600. A wrong byte order, a signed
first byte or another key text changes these numbers, so a hashing mistake fails here.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brokers.engine.client.allocation import (
    AllocateMessageQueueConsistentHash,
    ConsistentHashRouter,
    MessageQueue,
    StrategyParameterError,
    allocate_all,
    md5_hash,
)
from tests.brokers.engine.client.allocation._support import SEED_CIDS, per_cid, seed_queues, short


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("MessageQueue [topic=T, brokerName=broker_a, queueId=0]", 871283300),  # 33 ee ba 64
        ("cid2-5", 912269600),  # 36 60 21 20
        ("cid0-0", 2845984355),  # first byte >= 0x80: unsigned, not a negative int
        ("", 3558706393),  # d4 1d 8c d9, MD5 of nothing
        ("a", 214005177),
        ("192.168.0.6@15956-0", 1411474541),
        ("MessageQueue [topic=topic_test, brokerName=brokerName, queueId=0]", 2171879703),
        ("中文-0", 3818105464),  # UTF-8 bytes
        ("\ud800", 3510991730),  # a lone surrogate: Java's UTF-8 encoder writes "?" (0x3f)
    ],
)
def test_md5_hash_matches_java(key: str, expected: int) -> None:
    assert md5_hash(key) == expected


def test_queue_key_is_rocketmq_to_string() -> None:
    assert str(MessageQueue("T", "broker_a", 0)) == "MessageQueue [topic=T, brokerName=broker_a, queueId=0]"


def test_docstring_example_nine_queues_four_clients() -> None:
    result = allocate_all(AllocateMessageQueueConsistentHash(), seed_queues("T"), ["cid0", "cid1", "cid2", "cid3"])
    assert {c: short(q) for c, q in result.items()} == {
        "cid0": [],
        "cid1": ["b1", "b2"],
        "cid2": ["a0", "b0", "c1", "c2"],
        "cid3": ["a1", "a2", "c0"],
    }


@pytest.mark.parametrize(
    ("virtual_node_cnt", "expected"),
    [
        (
            10,
            {
                "192.168.0.6@15956": ["b0", "b2", "c0"],
                "192.168.0.7@15957": ["a2", "b1", "c1", "c2"],
                "192.168.0.8@15958": ["a0"],
                "192.168.0.9@15959": ["a1"],
            },
        ),
        (
            1,
            {
                "192.168.0.6@15956": ["a1", "a2", "b0", "b1", "b2", "c0", "c1", "c2"],
                "192.168.0.7@15957": [],
                "192.168.0.8@15958": [],
                "192.168.0.9@15959": ["a0"],
            },
        ),
        (0, {cid: [] for cid in SEED_CIDS}),  # empty ring: nobody consumes anything
    ],
)
def test_seed_example_as_java_computes_it(virtual_node_cnt: int, expected) -> None:
    strategy = AllocateMessageQueueConsistentHash(virtual_node_cnt)
    result = per_cid(strategy, seed_queues(), list(SEED_CIDS))
    assert {c: short(q) for c, q in result.items()} == expected
    assert allocate_all(strategy, seed_queues(), SEED_CIDS) == result


def rocketmq_ch_queues(size: int) -> list[MessageQueue]:
    return [MessageQueue("topic_test", "brokerName", i) for i in range(size)]


def rocketmq_ch_cids(size: int) -> list[str]:
    return [f"CID-{i}" for i in range(size)]


JAVA_20_QUEUES_10_CIDS = {
    "CID-0": [3, 5, 8, 18, 19],
    "CID-1": [],
    "CID-2": [4],
    "CID-3": [6, 7, 9],
    "CID-4": [],
    "CID-5": [10, 11, 15, 17],
    "CID-6": [],
    "CID-7": [0, 2, 12],
    "CID-8": [1, 13, 14],
    "CID-9": [16],
}
JAVA_10_QUEUES_20_CIDS = {
    **{f"CID-{i}": [] for i in range(20)},
    "CID-2": [4],
    "CID-3": [6, 7, 9],
    "CID-7": [0],
    "CID-10": [1],
    "CID-12": [2],
    "CID-15": [3, 5, 8],
}


@pytest.mark.parametrize(
    ("queue_size", "consumer_size", "expected"),
    [(20, 10, JAVA_20_QUEUES_10_CIDS), (10, 20, JAVA_10_QUEUES_20_CIDS)],
)
def test_rocketmq_test_allocate_shapes(queue_size: int, consumer_size: int, expected) -> None:
    # AllocateMessageQueueConsistentHashTest.testAllocate1/2 use 3 virtual nodes, unsorted cids.
    mqs, cids = rocketmq_ch_queues(queue_size), rocketmq_ch_cids(consumer_size)
    result = per_cid(AllocateMessageQueueConsistentHash(3), mqs, cids)
    assert {c: [mq.queue_id for mq in q] for c, q in result.items()} == expected


TEN = [MessageQueue("T", "broker-a", i) for i in range(10)]


@pytest.mark.parametrize(
    ("cids", "virtual_node_cnt", "modulus", "expected"),
    [
        # A client listed twice gets its second batch numbered c1-3.. c1-5 (getExistingReplicas).
        (["c1", "c2", "c1", "c3"], 3, None, {"c1": [0, 4, 8], "c2": [2, 5, 7], "c3": [1, 3, 6, 9]}),
        (["c1", "c2", "c3"], 3, None, {"c1": [0], "c2": [2, 5, 7, 8], "c3": [1, 3, 4, 6, 9]}),
        # A tiny hash space forces collisions: the later TreeMap.put wins the slot.
        (["c1", "c2", "c1", "c3"], 3, 7, {"c1": [1, 2, 8], "c2": [4, 9], "c3": [0, 3, 5, 6, 7]}),
        (["c1", "c2", "c3"], 3, 7, {"c1": [2, 8], "c2": [1, 4, 9], "c3": [0, 3, 5, 6, 7]}),
        (["c3", "c2", "c1"], 4, 5, {"c3": [], "c2": [1, 2, 4, 5, 7], "c1": [0, 3, 6, 8, 9]}),
    ],
)
def test_duplicates_and_collisions_follow_treemap_put(cids, virtual_node_cnt, modulus, expected) -> None:
    hash_function = None if modulus is None else (lambda key: md5_hash(key) % modulus)
    strategy = AllocateMessageQueueConsistentHash(virtual_node_cnt, hash_function)
    result = per_cid(strategy, TEN, cids)
    assert {c: [mq.queue_id for mq in q] for c, q in result.items()} == expected
    assert strategy.allocate_group("G", TEN, cids) == result


def test_router_wraps_to_the_first_point() -> None:
    router = ConsistentHashRouter(["x"], 1, hash_function=lambda key: 10 if key == "x-0" else int(key))
    assert router.route_node("11") == "x"  # past the last point: wrap
    assert router.route_node("10") == "x"  # exactly on a point
    assert ConsistentHashRouter(["x"], 0).route_node("anything") is None


@pytest.mark.parametrize("bad", [-1, 1.5, True, "10"])
def test_virtual_node_count_is_validated(bad) -> None:
    with pytest.raises(StrategyParameterError):
        AllocateMessageQueueConsistentHash(bad)


@settings(max_examples=40, deadline=None)
@given(
    queue_size=st.integers(1, 20),
    consumer_size=st.integers(2, 20),
    removed=st.integers(0, 19),
)
def test_remove_then_add_moves_only_that_clients_queues(queue_size, consumer_size, removed) -> None:
    # The remove/add checks of RocketMQ's testAllocate (verifyAfterRemove / verifyAfterAdd).
    strategy = AllocateMessageQueueConsistentHash(3)
    mqs, cids = rocketmq_ch_queues(queue_size), rocketmq_ch_cids(consumer_size)
    removed_cid = cids[removed % consumer_size]
    before = owner_map(per_cid(strategy, mqs, cids))
    fewer = [c for c in cids if c != removed_cid]
    after_remove = owner_map(per_cid(strategy, mqs, fewer))
    assert set(after_remove) == set(mqs)
    for mq, cid in before.items():
        if cid != removed_cid:
            assert after_remove[mq] == cid
    after_add = owner_map(per_cid(strategy, mqs, [*fewer, "CID-NEW"]))
    for mq, cid in after_add.items():
        if cid != "CID-NEW":
            assert after_remove[mq] == cid


def owner_map(result) -> dict[MessageQueue, str]:
    return {mq: cid for cid, queues in result.items() for mq in queues}
