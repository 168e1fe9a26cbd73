"""The cluster harness, in-process: a :class:`~brokers.engine.cluster.spec.ClusterSpec` run in one asyncio loop.

:class:`EngineCluster` starts the spec's name servers, then its brokers group by group (each master
before its slaves), and stops them in the reverse order (slaves before their master, the name
servers last). One broker can be stopped cleanly, "killed" or restarted on its store while the
rest run. :class:`ThreadedCluster` runs one in a background loop thread for blocking callers
(client tests, fixtures shared by a test session).

In-process, :meth:`EngineCluster.kill_broker` drops a broker without unregistering it from the
name servers (they learn of it as of a crash, when its connections close); its store is still
closed in order, as one process cannot lose its own page cache. A crash that loses unflushed
pages needs processes: ``ProcessCluster`` in ``processes.py`` runs the same spec that way.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from types import TracebackType
from typing import Any, TypeVar

from brokers.engine.broker.config import BrokerConfig
from brokers.engine.broker.controller import BrokerController
from brokers.engine.cluster.spec import BrokerSpec, ClusterSpec, ClusterSpecError, broker_config, namesrv_config
from brokers.engine.namesrv.server import NamesrvController

T = TypeVar("T")
StopErrorHandler = Callable[[str, BaseException], None]
SLAVE_CONNECT_TIMEOUT_S = 20.0  # a slave connects within a registration round trip; generous for a loaded CI


class EngineCluster:
    """A spec's name servers and brokers in the running event loop: ``async with EngineCluster(spec) as c``."""

    def __init__(self, spec: ClusterSpec) -> None:
        self.spec = spec
        self.namesrvs: list[NamesrvController] = []
        self.brokers: dict[str, BrokerController] = {}  # key -> the running broker, in start order
        self._ports: dict[str, int] = {}  # key -> the port it last listened on (a restart may reuse it)
        self._ha_ports: dict[str, int] = {}  # key -> its last HA port, likewise
        self._extra: dict[str, dict[str, Any]] = {}  # key -> the overrides of its last start

    # -- addresses --------------------------------------------------------------------------------

    @property
    def namesrv_addrs(self) -> tuple[str, ...]:
        if not self.spec.namesrvs:
            return self.spec.namesrv_addrs
        return tuple(f"{self.spec.host}:{n.port}" for n in self.namesrvs)

    @property
    def namesrv_addr(self) -> str:
        """The name servers as clients take them: ``host:port[;host:port...]``."""
        return ";".join(self.namesrv_addrs)

    def addr(self, key: str) -> str:
        return self.brokers[key].addr

    def grpc_addr(self, key: str) -> str | None:
        return self.brokers[key].grpc_addr

    def ha_addr(self, key: str) -> str:
        """Broker ``key``'s HA address (a master's replication port; slaves connect to it)."""
        return self.brokers[key].identity.ha_server_addr

    def member(self, key: str) -> BrokerSpec:
        """The spec's broker ``key``; a key the spec does not name is an ad-hoc master of that name."""
        try:
            return self.spec.member(key)
        except ClusterSpecError:
            return BrokerSpec(key=key, broker_name=key)

    def broker_config(self, key: str, /, **extra: Any) -> BrokerConfig:
        """The config broker ``key`` starts from (``extra``: BrokerConfig fields over the spec's)."""
        return broker_config(self.spec, self.member(key), self.namesrv_addrs, **extra)

    # -- the whole cluster ------------------------------------------------------------------------

    async def start(self) -> EngineCluster:
        """Start the name servers, then every broker; on a failure stop what started and raise."""
        try:
            for index in range(self.spec.namesrvs):
                namesrv = NamesrvController(namesrv_config(self.spec, index))
                await namesrv.start()
                self.namesrvs.append(namesrv)
            for member in self.spec.members():
                await self.start_broker(member.key)
        except BaseException:
            await self.stop()
            raise
        return self

    async def stop(self, *, timeout_s: float | None = None, on_error: StopErrorHandler | None = None) -> None:
        """Stop every broker (newest first: slaves before their master), then the name servers.

        A server that fails to stop (or takes over ``timeout_s``) does not keep the others running:
        ``on_error(what, exc)`` hears of it, or without a handler the first such error is raised at the end.
        """
        errors: list[BaseException] = []

        async def stop_one(what: str, stop: Coroutine[Any, Any, None]) -> None:
            try:
                await asyncio.wait_for(stop, timeout_s)
            except Exception as exc:
                if on_error is None:
                    errors.append(exc)
                else:
                    on_error(what, exc)

        for key in reversed(list(self.brokers)):
            await stop_one(f"broker {key}", self.brokers.pop(key).stop())
        while self.namesrvs:
            await stop_one("name server", self.namesrvs.pop().stop())
        if errors:
            raise errors[0]

    async def __aenter__(self) -> EngineCluster:
        return await self.start()

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    async def wait_slaves_connected(self, timeout_s: float = SLAVE_CONNECT_TIMEOUT_S) -> None:
        """Return once every running master has as many HA connections as it has running slaves."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while True:
            missing = self.masters_missing_slaves()
            if not missing:
                return
            if loop.time() > deadline:
                raise TimeoutError(
                    f"slaves of {', '.join(missing)} did not connect to their master within {timeout_s}s"
                )
            await asyncio.sleep(0.05)

    def masters_missing_slaves(self) -> list[str]:
        """Names of the running masters with fewer HA connections than they have running slaves."""
        wanted: dict[str, int] = {}
        for controller in self.brokers.values():
            if controller.config.broker_id:
                wanted[controller.config.broker_name] = wanted.get(controller.config.broker_name, 0) + 1
        missing = []
        for name, count in wanted.items():
            master = next(
                (c for c in self.brokers.values() if c.config.broker_name == name and not c.config.broker_id), None
            )
            ha_service = getattr(master.store, "ha_service", None) if master is not None else None
            if master is not None and (ha_service is None or len(ha_service.connections) < count):
                missing.append(name)
        return missing

    # -- one broker -------------------------------------------------------------------------------

    async def start_broker(self, key: str, /, **extra: Any) -> BrokerController:
        """Start broker ``key`` (of the spec, or an ad-hoc master of that name) with ``extra`` overrides."""
        if key in self.brokers:
            raise ClusterSpecError(f"broker {key!r} is already running")
        controller = BrokerController(self.broker_config(key, **extra))
        await controller.start()
        self.brokers[key] = controller
        self._extra[key] = dict(extra)
        self._ports[key] = controller.port
        self._ha_ports[key] = int(self.ha_addr(key).rpartition(":")[2] or 0)
        return controller

    async def stop_broker(self, key: str) -> None:
        """Stop broker ``key`` cleanly (unregistered, configs written, store flushed, abort file removed)."""
        await self._running(key).stop()
        del self.brokers[key]

    async def kill_broker(self, key: str) -> None:
        """Drop broker ``key`` without unregistering it (see the module docstring for what in-process means)."""
        await self._running(key)._shutdown(unregister=False)
        del self.brokers[key]

    async def restart_broker(self, key: str, /, *, keep_port: bool = True, **extra: Any) -> BrokerController:
        """Stop broker ``key`` if it runs, then start it again on its store with the overrides of its last start
        updated with ``extra``; ``keep_port`` reuses its last ports."""
        if key in self.brokers:
            await self.stop_broker(key)
        last = {k: v for k, v in self._extra.get(key, {}).items() if k not in ("listen_port", "ha_listen_port")}
        extra = {**last, **extra}
        if keep_port and key in self._ports and "listen_port" not in extra:
            extra["listen_port"] = self._ports[key]
            if self._ha_ports.get(key) and "ha_listen_port" not in extra:
                extra["ha_listen_port"] = self._ha_ports[key]
        return await self.start_broker(key, **extra)

    def _running(self, key: str) -> BrokerController:
        if key not in self.brokers:
            raise ClusterSpecError(f"broker {key!r} is not running (running: {', '.join(self.brokers) or 'none'})")
        return self.brokers[key]


class ThreadedCluster:
    """An :class:`EngineCluster` in an event loop of its own thread, driven by blocking calls."""

    def __init__(self, spec: ClusterSpec) -> None:
        self.engine = EngineCluster(spec)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="engine-cluster", daemon=True)

    @property
    def spec(self) -> ClusterSpec:
        return self.engine.spec

    @property
    def brokers(self) -> dict[str, BrokerController]:
        return self.engine.brokers

    @property
    def namesrvs(self) -> list[NamesrvController]:
        return self.engine.namesrvs

    @property
    def namesrv_addr(self) -> str:
        return self.engine.namesrv_addr

    def addr(self, key: str) -> str:
        return self.engine.addr(key)

    def grpc_addr(self, key: str) -> str | None:
        return self.engine.grpc_addr(key)

    def ha_addr(self, key: str) -> str:
        return self.engine.ha_addr(key)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 30.0) -> T:
        """Run ``coro`` in the cluster's loop and return its result."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def start(self, *, wait_slaves: bool = False) -> ThreadedCluster:
        self._thread.start()
        try:
            self.run(self.engine.start())
            if wait_slaves:
                self.run(self.engine.wait_slaves_connected())
        except BaseException:
            self._close_loop()
            raise
        return self

    def stop(self) -> None:
        try:
            self.run(self.engine.stop())
        finally:
            self._close_loop()

    def _close_loop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def stop_broker(self, key: str) -> None:
        self.run(self.engine.stop_broker(key))

    def kill_broker(self, key: str) -> None:
        self.run(self.engine.kill_broker(key))

    def restart_broker(self, key: str, /, *, keep_port: bool = True, **extra: Any) -> BrokerController:
        return self.run(self.engine.restart_broker(key, keep_port=keep_port, **extra))
