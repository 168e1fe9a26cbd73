"""An embedded cluster for client tests: a real name server and real brokers on ephemeral
loopback ports, run by an event loop in a background thread, stores under a tmp directory
(the engine's cluster harness, brokers/engine/cluster, in its threaded mode)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Coroutine, Mapping
from pathlib import Path
from typing import Any, TypeVar

from brokers.engine.client.admin import BlockingMQAdminClient, MQBrokerError, TopicRouteData
from brokers.engine.cluster import ClusterSpec, GroupSpec, ThreadedCluster
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.namesrv.server import NamesrvController

T = TypeVar("T")
CLUSTER = "GantryTestCluster"
# Small stores: a test writes kilobytes, and a 1 GiB commit log segment per broker fills a tmpfs.
TEST_STORE = {
    "commitlog_file_size": 8 << 20,
    "consume_queue_units_per_file": 10_000,
    "max_index_hash_slots": 10_000,
    "max_index_count": 40_000,
}


class EmbeddedCluster(ThreadedCluster):
    """A name server and brokers in one background event loop; with ``namesrv_addrs``, only the brokers,
    registered with name servers that run elsewhere (Apache's, in tests/fixtures/apache_servers.py).
    ``slaves`` gives a broker group slaves (``{"broker-a": 1}``: ``broker-a#1``, SYNC_MASTER master)."""

    def __init__(
        self,
        root: Path,
        broker_names: tuple[str, ...] = ("broker-a", "broker-b"),
        cluster: str = CLUSTER,
        *,
        namesrv_options: dict[str, Any] | None = None,
        store_options: dict[str, Any] | None = None,
        namesrv_addrs: tuple[str, ...] = (),
        slaves: Mapping[str, int] | None = None,
        **broker_options: Any,
    ) -> None:
        self.root = root
        self.external_namesrv_addrs = namesrv_addrs  # brokers register there, and no name server of our own starts
        self.store_options = store_options or {}  # StoreConfig fields over the small test sizes
        self.broker_options = broker_options
        self.namesrv_options = namesrv_options or {}  # e.g. acl_file
        self.broker_names = broker_names
        self.cluster = cluster
        super().__init__(
            ClusterSpec(
                str(root),
                groups=tuple(GroupSpec(name, slaves=(slaves or {}).get(name, 0)) for name in broker_names),
                cluster_name=cluster,
                namesrvs=0 if namesrv_addrs else 1,
                namesrv_addrs=namesrv_addrs,
                broker_overrides=broker_options,
                store_overrides={**TEST_STORE, **self.store_options},
                namesrv_overrides=self.namesrv_options,
            )
        )

    @property
    def namesrv(self) -> NamesrvController | None:
        return self.namesrvs[0] if self.namesrvs else None

    def broker_addr(self, name: str) -> str:
        return self.brokers[name].addr

    def start(self, *, wait_slaves: bool = False) -> EmbeddedCluster:
        super().start(wait_slaves=wait_slaves)
        return self


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
