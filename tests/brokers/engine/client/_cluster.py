"""An embedded cluster for client tests: a real name server and real brokers on ephemeral
loopback ports, run by an event loop in a background thread, stores under a tmp directory."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from brokers.engine.broker.config import BrokerConfig
from brokers.engine.broker.controller import BrokerController
from brokers.engine.client.admin import BlockingMQAdminClient, MQBrokerError, TopicRouteData
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.namesrv.server import NamesrvConfig, NamesrvController
from brokers.engine.store.config import StoreConfig

T = TypeVar("T")
CLUSTER = "GantryTestCluster"


class EmbeddedCluster:
    """A name server and brokers in one background event loop; with ``namesrv_addrs``, only the brokers,
    registered with name servers that run elsewhere (Apache's, in tests/fixtures/apache_servers.py)."""

    def __init__(
        self,
        root: Path,
        broker_names: tuple[str, ...] = ("broker-a", "broker-b"),
        cluster: str = CLUSTER,
        *,
        namesrv_options: dict[str, Any] | None = None,
        store_options: dict[str, Any] | None = None,
        namesrv_addrs: tuple[str, ...] = (),
        **broker_options: Any,
    ) -> None:
        self.root = root
        self.external_namesrv_addrs = namesrv_addrs  # brokers register there, and no name server of our own starts
        self.store_options = store_options or {}  # StoreConfig fields over the small test sizes below
        self.broker_options = broker_options
        self.namesrv_options = namesrv_options or {}  # e.g. acl_file
        self.broker_names = broker_names
        self.cluster = cluster
        self.namesrv: NamesrvController | None = None
        self.brokers: dict[str, BrokerController] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="embedded-cluster", daemon=True)

    @property
    def namesrv_addr(self) -> str:
        if self.external_namesrv_addrs:
            return ";".join(self.external_namesrv_addrs)
        assert self.namesrv is not None
        return f"127.0.0.1:{self.namesrv.port}"

    def broker_addr(self, name: str) -> str:
        return self.brokers[name].addr

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def start(self) -> EmbeddedCluster:
        self._thread.start()
        self.run(self._start())
        return self

    async def _start(self) -> None:
        if not self.external_namesrv_addrs:
            self.namesrv = NamesrvController(NamesrvConfig(port=0, **self.namesrv_options))
            await self.namesrv.start()
        for name in self.broker_names:
            store = StoreConfig(
                **{
                    "store_dir": str(self.root / name),
                    "commitlog_file_size": 8 << 20,
                    "consume_queue_units_per_file": 10_000,
                    "max_index_hash_slots": 10_000,
                    "max_index_count": 40_000,
                    **self.store_options,
                }
            )
            config = BrokerConfig(
                broker_name=name,
                cluster_name=self.cluster,
                listen_port=0,
                namesrv_addrs=self.external_namesrv_addrs or (self.namesrv_addr,),
                store=store,
                **self.broker_options,
            )
            broker = BrokerController(config)
            await broker.start()
            self.brokers[name] = broker

    def stop(self) -> None:
        try:
            self.run(self._stop())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop.close()

    async def _stop(self) -> None:
        for broker in reversed(list(self.brokers.values())):
            await broker.stop()
        if self.namesrv is not None:
            await self.namesrv.stop()


def run_async(coro: Coroutine[Any, Any, T], timeout: float = 60.0) -> T:
    """Run a coroutine with asyncio.run in a thread of its own.

    Keeps async scenarios independent of whatever the main thread's event-loop state is (the
    sync Playwright API of the browser tests leaves a running loop behind in the main thread).
    """
    result: dict[str, Any] = {}

    def target() -> None:
        try:
            result["value"] = asyncio.run(coro)
        except BaseException as exc:  # re-raised in the caller
            result["error"] = exc

    thread = threading.Thread(target=target, name="async-scenario")
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise AssertionError(f"async scenario still running after {timeout}s")
    if "error" in result:
        raise result["error"]
    return result["value"]


def create_topic(admin: BlockingMQAdminClient, cluster: EmbeddedCluster, topic: str, queues: int = 4) -> TopicRouteData:
    """Create ``topic`` on every master and wait until the name server routes it to all of them."""
    admin.create_or_update_topic_in_cluster(cluster.cluster, TopicConfig(topic, queues, queues))
    return wait_for_route(admin, topic, len(cluster.broker_names))


def wait_for_route(admin: BlockingMQAdminClient, topic: str, brokers: int, timeout_s: float = 10.0) -> TopicRouteData:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            route = admin.examine_topic_route_info(topic)
            if len(route.queue_datas) >= brokers:
                return route
        except MQBrokerError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"topic {topic} not routed to {brokers} brokers within {timeout_s}s")
        time.sleep(0.05)
