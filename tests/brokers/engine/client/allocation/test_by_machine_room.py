"""MACHINE_ROOM: RocketMQ's unit test, the docstring example and Java's split rules."""

from __future__ import annotations

import pytest

from brokers.engine.client.allocation import (
    AllocateMessageQueueByMachineRoom,
    AllocationError,
    MessageQueue,
    StrategyParameterError,
    allocate_all,
)
from brokers.engine.client.allocation.by_machine_room import machine_room_of_broker
from tests.brokers.engine.client.allocation._support import per_cid, rocketmq_test_cids, short


def rocketmq_room_queues(size: int) -> list[MessageQueue]:
    """AllocateMessageQueueByMachineRoomTest's queues: first half room1@broker-a, rest room2@broker-b."""
    return [MessageQueue("topic", "room1@broker-a" if i < size // 2 else "room2@broker-b", i) for i in range(size)]


def test_rocketmq_unit_test() -> None:
    cids, mqs = rocketmq_test_cids(2), rocketmq_room_queues(10)
    strategy = AllocateMessageQueueByMachineRoom({"room1"})
    with pytest.raises(AllocationError, match="^mqAll is null or mqAll empty$"):
        strategy.allocate("", cids[0], [], cids)
    got = {c: [mq.queue_id for mq in q] for c, q in per_cid(strategy, mqs, cids).items()}
    assert got == {"CID_PREFIX0": [0, 1, 4], "CID_PREFIX1": [2, 3]}


def test_docstring_example() -> None:
    mqs = [
        MessageQueue("T", f"{room}@broker-{b}", i)
        for room, b in (("hz", "a"), ("hz", "b"), ("sh", "c"))
        for i in range(3)
    ]
    result = allocate_all(AllocateMessageQueueByMachineRoom({"hz"}), mqs, ["c0", "c1", "c2", "c3"])
    assert {c: short(q) for c, q in result.items()} == {
        "c0": ["a0", "b1"],
        "c1": ["a1", "b2"],
        "c2": ["a2"],
        "c3": ["b0"],
    }


@pytest.mark.parametrize(
    ("broker_name", "room"),
    [
        ("hz@broker-a", "hz"),
        ("hz@broker-a@", "hz"),  # Java drops trailing empty pieces: ["hz", "broker-a"]
        ("hz@broker-a@@", "hz"),
        ("@broker-a", ""),  # a leading empty piece stays
        ("hz@", None),
        ("hz@a@b", None),
        ("broker-a", None),
        ("", None),
        ("@", None),
    ],
)
def test_java_split_rules(broker_name: str, room: str | None) -> None:
    assert machine_room_of_broker(broker_name) == room


def test_queues_outside_the_rooms_are_dropped() -> None:
    mqs = [MessageQueue("T", "sh@b", i) for i in range(3)]
    assert allocate_all(AllocateMessageQueueByMachineRoom({"hz"}), mqs, ["a", "b"]) == {"a": [], "b": []}


def test_consumeridcs_must_be_a_collection() -> None:
    with pytest.raises(StrategyParameterError):
        AllocateMessageQueueByMachineRoom("hz")
