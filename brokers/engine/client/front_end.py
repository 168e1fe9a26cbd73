"""The async and blocking front ends of the producer and the pull client: heartbeats and lifecycle.

A front end holds a driver and a :class:`~brokers.engine.client.route_cache.ClientPlans`. Once
it has talked to a broker it sends HEART_BEAT every ``heartbeat_interval_s`` (RocketMQ's 30 s;
a broker closes client connections registered by a heartbeat that stay silent for 120 s): from
an asyncio task for :class:`AsyncFrontEnd`, from a daemon thread for :class:`BlockingFrontEnd`.
``heartbeat_interval_s=None`` sends none (tests). Both close as context managers.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Self

from brokers.engine.client.admin_types import TopicRouteData
from brokers.engine.client.driver import AsyncDriver, BlockingDriver
from brokers.engine.client.route_cache import ClientPlans
from brokers.engine.remoting.errors import RemotingError

__all__ = ["HEARTBEAT_INTERVAL_S", "AsyncFrontEnd", "BlockingFrontEnd"]

log = logging.getLogger("brokers.engine.client")

HEARTBEAT_INTERVAL_S = 30.0  # RocketMQ heartbeatBrokerInterval


class _FrontEnd:
    plans: ClientPlans

    @property
    def client_id(self) -> str:
        return self.plans.client_id


class AsyncFrontEnd(_FrontEnd):
    """Base of the asyncio clients: a heartbeat task on the running loop, ``await close()``."""

    driver: AsyncDriver

    def _init_async(self, heartbeat_interval_s: float | None) -> None:
        self.heartbeat_interval_s = heartbeat_interval_s
        self._heartbeat_task: asyncio.Task[None] | None = None

    def _start_heartbeats(self) -> None:
        if self._heartbeat_task is None and self.heartbeat_interval_s:
            self._heartbeat_task = asyncio.get_running_loop().create_task(self._heartbeat_loop())

    async def _heartbeat_loop(self) -> None:
        while True:
            await asyncio.sleep(self.heartbeat_interval_s or HEARTBEAT_INTERVAL_S)
            try:
                await self.driver.run(self.plans.heartbeat())
            except RemotingError as exc:
                log.debug("heartbeat failed: %s", exc)

    async def heartbeat(self) -> int:
        """Send HEART_BEAT now to every broker this client talked to; return how many answered."""
        return await self.driver.run(self.plans.heartbeat())

    async def examine_topic_route_info(self, topic: str) -> TopicRouteData:
        """Fetch the topic's route from the name servers now (refreshing the cache)."""
        return await self.driver.run(self.plans.route(topic, refresh=True))

    async def close(self) -> None:
        if self._heartbeat_task is not None:
            self._heartbeat_task.cancel()
            await asyncio.gather(self._heartbeat_task, return_exceptions=True)
            self._heartbeat_task = None
        await self.driver.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()


class BlockingFrontEnd(_FrontEnd):
    """Base of the blocking clients: a heartbeat daemon thread, ``close()``; thread-safe."""

    driver: BlockingDriver

    def _init_blocking(self, heartbeat_interval_s: float | None) -> None:
        self.heartbeat_interval_s = heartbeat_interval_s
        self._heartbeat_thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._start_lock = threading.Lock()

    def _start_heartbeats(self) -> None:
        if self._heartbeat_thread is not None or not self.heartbeat_interval_s:
            return
        with self._start_lock:
            if self._heartbeat_thread is None and not self._stop.is_set():
                self._heartbeat_thread = threading.Thread(
                    target=self._heartbeat_loop, name="mq-client-heartbeat", daemon=True
                )
                self._heartbeat_thread.start()

    def _heartbeat_loop(self) -> None:
        while not self._stop.wait(self.heartbeat_interval_s or HEARTBEAT_INTERVAL_S):
            try:
                self.driver.run(self.plans.heartbeat())
            except RemotingError as exc:
                log.debug("heartbeat failed: %s", exc)

    def heartbeat(self) -> int:
        """Send HEART_BEAT now to every broker this client talked to; return how many answered."""
        return self.driver.run(self.plans.heartbeat())

    def examine_topic_route_info(self, topic: str) -> TopicRouteData:
        """Fetch the topic's route from the name servers now (refreshing the cache)."""
        return self.driver.run(self.plans.route(topic, refresh=True))

    def close(self) -> None:
        self._stop.set()
        if self._heartbeat_thread is not None:
            self._heartbeat_thread.join(timeout=5.0)
            self._heartbeat_thread = None
        self.driver.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
