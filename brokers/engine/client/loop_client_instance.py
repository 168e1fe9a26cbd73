"""LoopClientInstance: an MQClientInstance on the caller's event loop, for the asyncio clients.

The blocking clients share a :class:`~.client_instance.MQClientInstance` that runs its own loop
in a daemon thread, so every blocking call hops to that thread and back. The asyncio clients
(:mod:`.async_producer`, :mod:`.async_push_consumer`) are awaited from a loop already running;
their instance runs there: the same timers (route poll, heartbeats, rebalance, offset
persistence), connections and client remoting processor, no thread, no hop. Each asyncio client
has an instance of its own (not shared through :mod:`.mq_client_manager`, whose instances own
threads), started with ``await start()`` and stopped with ``await stop()``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from brokers.engine.client.client_config import ClientConfig
from brokers.engine.client.client_instance import MQClientInstance
from brokers.engine.client.identity import build_client_id
from brokers.engine.common.namesrv_addr import parse_namesrv_addrs
from brokers.engine.remoting.request_guard import RequestSigner
from brokers.engine.remoting.tls import TlsConfig

__all__ = ["LoopClientInstance"]


class LoopClientInstance(MQClientInstance):
    """A client instance on the running loop of whoever creates it (create it from a coroutine)."""

    def __init__(
        self,
        namesrv_addr: str,
        instance_name: str,
        config: ClientConfig | None = None,
        *,
        signer: RequestSigner | None = None,
        tls: TlsConfig | None = None,
    ) -> None:
        super().__init__(
            build_client_id(instance_name),
            parse_namesrv_addrs(namesrv_addr),
            config or ClientConfig(),
            signer=signer,
            tls=tls,
            loop=asyncio.get_running_loop(),
        )

    @property
    def in_loop_thread(self) -> bool:
        try:
            return asyncio.get_running_loop() is self.loop
        except RuntimeError:
            return False

    def _start(self) -> None:
        raise RuntimeError("a LoopClientInstance starts with `await start()`")

    async def start(self) -> None:
        """Start the timers on this loop."""
        await self._start_timers()

    def release(self) -> None:
        raise RuntimeError("a LoopClientInstance stops with `await stop()`")

    async def stop(self) -> None:
        """Stop the timers and close the connections (after the members unregistered)."""
        if not self._stopped:
            self._stopped = True
            await self._stop_all()

    def _shutdown(self) -> Any:
        raise RuntimeError("a LoopClientInstance stops with `await stop()`")
