"""Queue layouts: READ perm, readQueueNums, route data forms and what-if edits."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from brokers.engine.common.perm import PERM_READ, PERM_WRITE
from brokers.engine.client.allocation import AllocationError, MessageQueue
from consumers.allocation import BrokerQueues, QueueLayout


def test_readable_brokers_contribute_read_queue_ids() -> None:
    layout = QueueLayout(
        "T",
        (
            BrokerQueues("broker-b", 2, PERM_READ | PERM_WRITE),
            BrokerQueues("broker-a", 3, PERM_READ),
            BrokerQueues("broker-c", 4, PERM_WRITE),  # write-only: consumers see nothing
        ),
    )
    assert layout.message_queues() == (
        MessageQueue("T", "broker-a", 0),
        MessageQueue("T", "broker-a", 1),
        MessageQueue("T", "broker-a", 2),
        MessageQueue("T", "broker-b", 0),
        MessageQueue("T", "broker-b", 1),
    )
    assert layout.broker_names == ("broker-b", "broker-a", "broker-c")


def test_from_queue_datas_accepts_rocketmq_json_and_objects() -> None:
    @dataclass
    class QueueData:
        broker_name: str
        read_queue_nums: int
        write_queue_nums: int
        perm: int

    json_form = [{"brokerName": "broker-a", "perm": 6, "readQueueNums": 2, "topicSysFlag": 0, "writeQueueNums": 4}]
    from_json = QueueLayout.from_queue_datas("T", json_form)
    from_objects = QueueLayout.from_queue_datas("T", [QueueData("broker-a", 2, 4, 6)])
    assert from_json == from_objects == QueueLayout.hypothetical("T", {"broker-a": 2})
    assert len(from_json.message_queues()) == 2  # read queues, not write queues


def test_duplicate_broker_entries_merge_like_javas_set() -> None:
    layout = QueueLayout("T", (BrokerQueues("b", 2), BrokerQueues("b", 3)))
    assert [mq.queue_id for mq in layout.message_queues()] == [0, 1, 2]


def test_what_if_edits_return_new_layouts() -> None:
    layout = QueueLayout.hypothetical("T", {"a": 2, "b": 2})
    assert [mq.broker_name for mq in layout.without_brokers(["a"]).message_queues()] == ["b", "b"]
    grown = layout.with_queue_counts({"b": 4, "c": 1})
    assert [(mq.broker_name, mq.queue_id) for mq in grown.message_queues()] == [
        ("a", 0),
        ("a", 1),
        ("b", 0),
        ("b", 1),
        ("b", 2),
        ("b", 3),
        ("c", 0),
    ]
    assert len(layout.message_queues()) == 4  # the original is unchanged


@pytest.mark.parametrize(
    "build",
    [
        lambda: BrokerQueues("", 1),
        lambda: BrokerQueues("a", -1),
        lambda: BrokerQueues("a", True),
        lambda: QueueLayout("", ()),
        lambda: QueueLayout.hypothetical("T", {"a": 1}).without_brokers(["nope"]),
    ],
)
def test_invalid_layouts_raise(build) -> None:
    with pytest.raises(AllocationError):
        build()
