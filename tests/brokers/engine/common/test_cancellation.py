"""cancel_and_wait: every task has ended when it returns, even one that swallowed its cancellation."""

from __future__ import annotations

import asyncio

from brokers.engine.common.cancellation import cancel_and_wait


def test_a_task_that_swallows_one_cancellation_is_cancelled_again() -> None:
    swallowed = []

    async def periodic() -> None:  # as a timer whose wait_for returned its result instead of raising
        while True:
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                if swallowed:
                    raise
                swallowed.append(True)

    async def failing() -> None:
        raise ValueError("boom")

    async def scenario() -> tuple[asyncio.Task, asyncio.Task, asyncio.Task]:
        stubborn, plain, broken = (
            asyncio.create_task(periodic()),
            asyncio.create_task(asyncio.sleep(60)),
            asyncio.create_task(failing()),
        )
        await asyncio.sleep(0)
        # the guard only turns a hang into a failure; a plain gather would wait out the 60 s sleep
        await asyncio.wait_for(cancel_and_wait([stubborn, plain, broken], recancel_s=0.05), 10)
        return stubborn, plain, broken

    stubborn, plain, broken = asyncio.run(scenario())
    assert swallowed == [True]
    assert stubborn.cancelled() and plain.cancelled()
    assert isinstance(broken.exception(), ValueError)  # ended with its own error, retrieved, not raised
