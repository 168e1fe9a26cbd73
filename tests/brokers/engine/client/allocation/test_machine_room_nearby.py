"""MACHINE_ROOM_NEARBY: RocketMQ's AllocateMachineRoomNearByTest cases, ported, plus edges."""

from __future__ import annotations

import random

import pytest

from brokers.engine.client.allocation import (
    AllocateMachineRoomNearby,
    AllocateMessageQueueAveragely,
    AllocationError,
    MessageQueue,
    StrategyParameterError,
    allocate_all,
    get_strategy,
)
from tests.brokers.engine.client.allocation._support import DashResolver, per_cid, short

TOPIC = "topic_test"
RESOLVER = DashResolver()


def prepare_mq(broker_idc_size: int, queue_size: int) -> list[MessageQueue]:
    return [
        MessageQueue(TOPIC, f"IDC{i}-brokerName", q) for i in range(1, broker_idc_size + 1) for q in range(queue_size)
    ]


def prepare_consumer(idc_size: int, consumer_size: int) -> list[str]:
    return [f"IDC{i}-CID-{c}" for i in range(1, idc_size + 1) for c in range(consumer_size)]


def allocate_each(cid_all: list[str], mq_all: list[MessageQueue]) -> dict[str, list[MessageQueue]]:
    strategy = AllocateMachineRoomNearby(AllocateMessageQueueAveragely(), RESOLVER)
    result = per_cid(strategy, mq_all, cid_all, group="Test-C-G")
    assert result == strategy.allocate_group("Test-C-G", mq_all, cid_all)
    return result


def assert_allocated_all(cid_all, mq_all, result) -> None:
    every = [mq for queues in result.values() for mq in queues]
    if not cid_all:
        assert every == []
    else:
        assert sorted(every) == sorted(mq_all)


def when_idc_size_equals(idc_size: int, queue_size: int, consumer_size: int) -> None:
    cid_all, mq_all = prepare_consumer(idc_size, consumer_size), prepare_mq(idc_size, queue_size)
    if not cid_all:
        return  # Java's loop over an empty cidAll makes no call
    result = allocate_each(cid_all, mq_all)
    for cid, queues in result.items():
        for mq in queues:
            assert RESOLVER.broker_deploy_in(mq) == RESOLVER.consumer_deploy_in(cid)
    assert_allocated_all(cid_all, mq_all, result)


def when_consumer_idc_is_more(broker_idcs: int, more: int, queue_size: int, consumer_size: int) -> None:
    cid_all = prepare_consumer(broker_idcs + more, consumer_size)
    mq_all = prepare_mq(broker_idcs, queue_size)
    if not cid_all:
        return
    broker_rooms = {RESOLVER.broker_deploy_in(mq) for mq in mq_all}
    result = allocate_each(cid_all, mq_all)
    for cid, queues in result.items():
        for mq in queues:
            if RESOLVER.broker_deploy_in(mq) in broker_rooms:
                assert RESOLVER.broker_deploy_in(mq) == RESOLVER.consumer_deploy_in(cid)
    assert_allocated_all(cid_all, mq_all, result)


def when_consumer_idc_is_less(broker_idcs: int, less: int, queue_size: int, consumer_size: int) -> None:
    cid_all = prepare_consumer(broker_idcs - less, consumer_size)
    mq_all = prepare_mq(broker_idcs, queue_size)
    if not cid_all:
        return
    healthy = {RESOLVER.consumer_deploy_in(c) for c in cid_all}
    result = allocate_each(cid_all, mq_all)
    by_room: dict[str, list[MessageQueue]] = {}
    for cid, queues in result.items():
        by_room.setdefault(RESOLVER.consumer_deploy_in(cid), []).extend(queues)
    for room in healthy:
        own = [MessageQueue(TOPIC, f"{room}-brokerName", q) for q in range(queue_size)]
        assert set(own) <= set(by_room[room])
    assert_allocated_all(cid_all, mq_all, result)


@pytest.mark.parametrize("consumer_size", [10, 20, 30, 0])
def test1_idc_size_equals(consumer_size: int) -> None:
    when_idc_size_equals(5, 20, consumer_size)


@pytest.mark.parametrize("consumer_size", [10, 5, 20, 0])
def test2_consumer_idc_is_more(consumer_size: int) -> None:
    when_consumer_idc_is_more(5, 1, 10, consumer_size)


@pytest.mark.parametrize("consumer_size", [10, 5, 20, 0])
def test3_consumer_idc_is_less(consumer_size: int) -> None:
    when_consumer_idc_is_less(5, 2, 10, consumer_size)


@pytest.mark.parametrize("seed", range(10))
def test_run_10_random_cases(seed: int) -> None:
    rng = random.Random(seed)
    consumer_size, queue_size = rng.randint(1, 200), rng.randint(1, 100)
    broker_idcs, consumer_idcs = rng.randint(1, 10), rng.randint(1, 10)
    if broker_idcs == consumer_idcs:
        when_idc_size_equals(broker_idcs, queue_size, consumer_size)
    elif broker_idcs > consumer_idcs:
        when_consumer_idc_is_less(broker_idcs, broker_idcs - consumer_idcs, queue_size, consumer_size)
    else:
        when_consumer_idc_is_more(broker_idcs, consumer_idcs - broker_idcs, queue_size, consumer_size)


def test_docstring_example() -> None:
    mqs = [
        MessageQueue("T", f"{room}-broker-{b}", i)
        for room, b in (("hz", "a"), ("hz", "b"), ("gz", "c"))
        for i in range(3)
    ]
    strategy = get_strategy("MACHINE_ROOM_NEARBY", inner="AVG", resolver=RESOLVER)
    result = allocate_all(strategy, mqs, ["sh-c3", "hz-c0", "sh-c2", "hz-c1"])
    assert {c: short(q) for c, q in result.items()} == {
        "hz-c0": ["a0", "a1", "a2", "c0"],
        "hz-c1": ["b0", "b1", "b2", "c1"],
        "sh-c2": ["c2"],
        "sh-c3": [],
    }


def test_orphan_rooms_follow_room_name_order() -> None:
    mqs = [MessageQueue("T", "zz-b", 0), MessageQueue("T", "aa-b", 0)]
    strategy = get_strategy("MACHINE_ROOM_NEARBY-AVG_BY_CIRCLE", resolver=RESOLVER)
    assert strategy.allocate("G", "hz-1", mqs, ["hz-1"]) == [mqs[1], mqs[0]]


def test_name_includes_the_inner_strategy() -> None:
    inner = get_strategy("CONSISTENT_HASH")
    assert AllocateMachineRoomNearby(inner, RESOLVER).name == "MACHINE_ROOM_NEARBY-CONSISTENT_HASH"


class EmptyRoomResolver:
    def __init__(self, broker_room: str, consumer_room: str | None) -> None:
        self.broker_room, self.consumer_room = broker_room, consumer_room

    def broker_deploy_in(self, mq: MessageQueue) -> str:
        return self.broker_room

    def consumer_deploy_in(self, cid: str) -> str | None:
        return self.consumer_room


@pytest.mark.parametrize(
    ("resolver", "message"),
    [
        (EmptyRoomResolver("", "hz"), "Machine room is null for mq"),
        (EmptyRoomResolver("hz", None), "Machine room is null for consumer id"),
    ],
)
def test_resolver_without_a_room_raises(resolver, message: str) -> None:
    strategy = AllocateMachineRoomNearby(AllocateMessageQueueAveragely(), resolver)
    mqs = [MessageQueue("T", "b", 0)]
    with pytest.raises(AllocationError, match=message):
        strategy.allocate("G", "c", mqs, ["c"])
    with pytest.raises(AllocationError, match=message):
        allocate_all(strategy, mqs, ["c"])


def test_inner_and_resolver_are_required() -> None:
    with pytest.raises(StrategyParameterError):
        AllocateMachineRoomNearby(None, RESOLVER)  # type: ignore[arg-type]
    with pytest.raises(StrategyParameterError):
        AllocateMachineRoomNearby(AllocateMessageQueueAveragely(), object())  # type: ignore[arg-type]
