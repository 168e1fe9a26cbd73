"""PullRequestHoldService: long polling of PULL_MESSAGE (RocketMQ's PullRequestHoldService).

A pull that finds nothing new (PULL_NOT_FOUND) with the SUSPEND bit set is parked, keyed by
(topic, queue id), and not answered yet. It is re-run, without suspending again, and answered
on its own opaque (``ctx.write_response``) when

- a message for that queue is dispatched past the pull's offset and its tag passes the pull's
  filter (the store's arrival listener; it may run on the store's thread, so it only hands the
  event to the event loop) and, for a SQL92 pull, its properties pass the selector (the pull's
  ``property_probe`` reads that message's properties from the store),
- its hold time ends (a timer per request; the processor caps the hold well below the
  client's 30 s pull timeout), or
- the periodic re-check (every ``check_interval_s``) finds new data (for a SQL92 pull, a
  matching message from its offset on), or the service stops.

Right after parking, the queue is checked once more, so a message that arrived between the
store read and the parking is not missed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from brokers.engine.remoting.channel import ChannelContext
from brokers.engine.remoting.codes import ResponseCode
from brokers.engine.remoting.command import RemotingCommand

log = logging.getLogger("brokers.engine.broker")

Execute = Callable[[ChannelContext, RemotingCommand], Awaitable["RemotingCommand | None"]]
MaxOffset = Callable[[str, int], int]
PropertyProbe = Callable[[int], bool]  # a queue offset -> a message from there on passes the pull's SQL92 filter


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


@dataclass(eq=False, slots=True)
class PullRequest:
    ctx: ChannelContext
    request: RemotingCommand
    topic: str
    queue_id: int
    pull_from_this_offset: int
    tag_codes: set[int] | None  # None = every message matches
    hold_s: float
    timer: asyncio.TimerHandle | None = field(default=None, repr=False)
    property_probe: PropertyProbe | None = field(default=None, repr=False)  # None: no SQL92 filter

    def matches(self, tags_code: int | None) -> bool:
        if self.tag_codes is None or tags_code is None:
            return True
        return _int32(tags_code) in {_int32(c) for c in self.tag_codes}

    def matches_properties(self, from_offset: int) -> bool:
        """True without a SQL92 filter; else whether a message from ``from_offset`` on passes it."""
        if self.property_probe is None:
            return True
        try:
            return self.property_probe(max(from_offset, self.pull_from_this_offset))
        except Exception:  # a store that cannot answer: wake the pull, it answers for itself
            log.exception("checking a held pull's filter on %s:%s failed", self.topic, self.queue_id)
            return True


class PullRequestHoldService:
    def __init__(self, *, execute: Execute, max_offset: MaxOffset, check_interval_s: float = 5.0) -> None:
        self._execute = execute
        self._max_offset = max_offset
        self.check_interval_s = check_interval_s
        self._table: dict[tuple[str, int], list[PullRequest]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._checker: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._stopped = False

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopped = False
        self._checker = self._loop.create_task(self._check_loop())

    async def stop(self) -> None:
        """Answer every parked pull now (with what the store has) and stop checking."""
        self._stopped = True
        if self._checker is not None:
            self._checker.cancel()
            await asyncio.gather(self._checker, return_exceptions=True)
            self._checker = None
        for key in list(self._table):
            for pr in self._table.pop(key, []):
                self._wake(pr)
        if self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    @property
    def parked_count(self) -> int:
        return sum(len(v) for v in self._table.values())

    # -- parking ------------------------------------------------------------------------------

    def suspend_pull_request(self, pr: PullRequest) -> None:
        """Park ``pr`` (called on the event loop by the pull processor)."""
        if self._stopped or self._loop is None:
            self._wake(pr)
            return
        key = (pr.topic, pr.queue_id)
        self._table.setdefault(key, []).append(pr)
        pr.timer = self._loop.call_later(max(pr.hold_s, 0.0), self._on_timeout, pr)
        try:
            newest = self._max_offset(pr.topic, pr.queue_id)
        except Exception:
            return
        if newest > pr.pull_from_this_offset:  # arrived while we were parking it
            self._check_queue(key, newest, None, pr.pull_from_this_offset)

    def notify_message_arriving(
        self, topic: str, queue_id: int, max_offset: int, tags_code: int | None = None, *_: object
    ) -> None:
        """Store arrival listener: the queue grew to ``max_offset`` (the new message's offset + 1).

        Thread-safe: the store may call it on whatever thread put the message.
        """
        key = (topic, queue_id)
        loop = self._loop
        if loop is None or key not in self._table:  # nothing parked here: nothing to do
            return
        try:
            loop.call_soon_threadsafe(self._check_queue, key, max_offset, tags_code, max_offset - 1)
        except RuntimeError:  # loop closed during shutdown
            pass

    # -- waking -------------------------------------------------------------------------------

    def _check_queue(self, key: tuple[str, int], max_offset: int, tags_code: int | None, first_new: int = 0) -> None:
        """Wake the parked pulls of ``key`` that the queue, now ``max_offset`` long, has something for:
        ``tags_code`` and ``first_new`` (the offset of the message that arrived; 0 on a re-check)
        say which messages are new."""
        requests = self._table.get(key)
        if not requests:
            return
        keep: list[PullRequest] = []
        for pr in requests:
            if pr.ctx.closed:
                self._cancel_timer(pr)
            elif max_offset > pr.pull_from_this_offset and pr.matches(tags_code) and pr.matches_properties(first_new):
                self._cancel_timer(pr)
                self._wake(pr)
            else:
                keep.append(pr)
        if keep:
            self._table[key] = keep
        else:
            self._table.pop(key, None)

    def _on_timeout(self, pr: PullRequest) -> None:
        pr.timer = None
        key = (pr.topic, pr.queue_id)
        requests = self._table.get(key)
        if requests is None or pr not in requests:
            return
        requests.remove(pr)
        if not requests:
            del self._table[key]
        if not pr.ctx.closed:
            self._wake(pr)

    @staticmethod
    def _cancel_timer(pr: PullRequest) -> None:
        if pr.timer is not None:
            pr.timer.cancel()
            pr.timer = None

    def _wake(self, pr: PullRequest) -> None:
        task = asyncio.get_running_loop().create_task(self._answer(pr))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, pr: PullRequest) -> None:
        try:
            response = await self._execute(pr.ctx, pr.request)
        except Exception as exc:
            log.exception("re-running a held pull of %s:%s failed", pr.topic, pr.queue_id)
            response = pr.request.response(ResponseCode.SYSTEM_ERROR, f"held pull failed: {exc}")
        if response is not None and not pr.ctx.closed:
            await pr.ctx.write_response(response)

    async def _check_loop(self) -> None:
        while True:
            await asyncio.sleep(self.check_interval_s)
            for key in list(self._table):
                try:
                    newest = self._max_offset(*key)
                except Exception:
                    log.exception("long-poll re-check of %s failed", key)
                    continue
                self._check_queue(key, newest, None, 0)
