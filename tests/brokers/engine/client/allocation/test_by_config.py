"""CONFIG: a fixed list for everyone, no argument check (as in Java)."""

from __future__ import annotations

import pytest

from brokers.engine.client.allocation import (
    AllocateMessageQueueByConfig,
    MessageQueue,
    StrategyParameterError,
    allocate_all,
)
from tests.brokers.engine.client.allocation._support import (
    per_cid,
    rocketmq_test_cids,
    rocketmq_test_queues,
    seed_queues,
)


def test_rocketmq_unit_test_every_client_gets_the_configured_list() -> None:
    # AllocateMessageQueueByConfigTest
    cids, mqs = rocketmq_test_cids(2), rocketmq_test_queues(4)
    strategy = AllocateMessageQueueByConfig(mqs)
    got = {c: [mq.queue_id for mq in q] for c, q in per_cid(strategy, mqs, cids).items()}
    assert got == {"CID_PREFIX0": [0, 1, 2, 3], "CID_PREFIX1": [0, 1, 2, 3]}


def test_docstring_example_shares_configured_queues_and_starves_the_rest() -> None:
    mqs = seed_queues()
    a0, b0 = mqs[0], mqs[3]
    result = allocate_all(AllocateMessageQueueByConfig([a0, b0]), mqs, ["c0", "c1", "c2", "c3"])
    assert result == {c: [a0, b0] for c in ("c0", "c1", "c2", "c3")}


def test_no_argument_check_and_foreign_queues_pass_through() -> None:
    foreign = MessageQueue("other", "nowhere", 3)
    strategy = AllocateMessageQueueByConfig([foreign])
    assert strategy.allocate("", "", [], []) == [foreign]
    assert strategy.allocate("G", "not-a-member", rocketmq_test_queues(2), ["x"]) == [foreign]


def test_result_is_a_copy() -> None:
    strategy = AllocateMessageQueueByConfig(rocketmq_test_queues(2))
    strategy.allocate("G", "x", [], ["x"]).clear()
    assert len(strategy.allocate("G", "x", [], ["x"])) == 2


def test_rejects_non_queue_entries() -> None:
    with pytest.raises(StrategyParameterError):
        AllocateMessageQueueByConfig(["broker-a:0"])  # type: ignore[list-item]
