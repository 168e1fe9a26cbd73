"""The gRPC endpoint's receive slots: waiters granted one per peer in rotation, a cancelled waiter never
holding a slot, a held slot given back after its hold time."""

from __future__ import annotations

import asyncio

import pytest

from brokers.engine.proxy.slots import FairSlots, Slot


def run(coro):
    return asyncio.run(coro)


async def _queue(slots: FairSlots, peer: str, name: str, order: list[str]) -> None:
    await slots.acquire(peer)
    order.append(name)


def test_a_peer_with_one_waiter_is_served_after_one_of_a_busy_peers_not_after_all():
    async def scenario():
        slots = FairSlots(1)
        await slots.acquire("holder")
        order: list[str] = []
        tasks = [asyncio.create_task(_queue(slots, "10.0.0.1", f"busy-{i}", order)) for i in range(5)]
        await asyncio.sleep(0)
        tasks.append(asyncio.create_task(_queue(slots, "10.0.0.2", "quiet", order)))
        await asyncio.sleep(0)
        assert slots.waiting == 6
        for _ in range(6):
            slots.release()
            await asyncio.sleep(0)
        await asyncio.gather(*tasks)
        assert order == ["busy-0", "quiet", "busy-1", "busy-2", "busy-3", "busy-4"]
        assert slots.in_use == 1 and slots.waiting == 0

    run(scenario())


async def _held_with_two_waiting() -> tuple[FairSlots, asyncio.Task, asyncio.Task]:
    """One slot, held by peer a; peers b and c wait for it, b first."""
    slots = FairSlots(1)
    await slots.acquire("a")
    first = asyncio.create_task(slots.acquire("b"))
    second = asyncio.create_task(slots.acquire("c"))
    await asyncio.sleep(0)
    return slots, first, second


def test_a_cancelled_waiter_takes_no_slot():
    async def scenario():
        slots, gone, kept = await _held_with_two_waiting()
        gone.cancel()
        await asyncio.sleep(0)
        assert slots.waiting == 1
        slots.release()  # to c: b is gone
        await asyncio.wait_for(kept, 1)
        assert slots.in_use == 1
        slots.release()
        assert slots.in_use == 0

    run(scenario())


def test_a_waiter_cancelled_as_it_is_granted_passes_the_slot_on():
    async def scenario():
        slots, first, second = await _held_with_two_waiting()
        slots.release()  # granted to b ...
        first.cancel()  # ... which is cancelled before it runs
        with pytest.raises(asyncio.CancelledError):
            await first
        await asyncio.wait_for(second, 1)
        assert slots.in_use == 1 and slots.waiting == 0

    run(scenario())


def test_a_held_slot_gives_itself_back_after_its_hold_time():
    async def scenario():
        slots = FairSlots(1)
        slot = Slot(slots, "stalled")
        await slot.take(0.05)
        assert slot.held and slots.in_use == 1
        other = asyncio.create_task(slots.acquire("other"))
        await asyncio.wait_for(other, 1)  # granted when the stalled one's hold ran out
        assert not slot.held and slots.in_use == 1
        slot.give_back()  # given back already: nothing to release twice
        assert slots.in_use == 1

    run(scenario())


def test_taking_a_held_slot_again_extends_its_hold():
    async def scenario():
        slots = FairSlots(1)
        slot = Slot(slots, "p")
        await slot.take(0.05)
        await slot.take(10.0)  # the delivery after the set-up: the same slot, held longer
        await asyncio.sleep(0.1)
        assert slot.held and slots.in_use == 1
        slot.give_back()
        assert slots.in_use == 0

    run(scenario())


def test_capacity_must_be_positive():
    with pytest.raises(ValueError, match="capacity"):
        FairSlots(0)
