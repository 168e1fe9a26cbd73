"""A broker group as real processes, one server at a time, on the cluster harness's process mode
(``brokers/engine/cluster/processes.py``): each :class:`NamesrvProc`/:class:`BrokerProc` is a
one-member :class:`ProcessCluster`, started, SIGKILLed, SIGSTOPped and restarted by the drills
(tests/brokers/engine/test_group_drills.py and others). A restart keeps the member's ports (its
address is the broker's identity in the drills) and its store."""

from __future__ import annotations

import asyncio
import signal
from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from brokers.engine.cluster.processes import ROOT, ProcessCluster
from brokers.engine.cluster.spec import ClusterSpec, GroupSpec
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand

__all__ = ["ROOT", "BrokerProc", "NamesrvProc", "call", "create_topic", "runtime_info"]


class _Proc(ABC):
    """One server of its own ProcessCluster; ``start`` waits for its ready line, a second start restarts it."""

    key: str

    def __init__(self, cluster: ProcessCluster) -> None:
        self.cluster = cluster
        self.started = False

    @property
    @abstractmethod
    def _member(self) -> Any:
        """The harness's member this stands for (None before the first start)."""

    @property
    def proc(self) -> Any:
        member = self._member
        return None if member is None else member.proc

    @property
    def log(self) -> Path:
        return self._member.log

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def addr(self) -> str:
        return self._member.addr

    @property
    def port(self) -> int:
        return self._member.port

    def pause(self) -> None:
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.proc.send_signal(signal.SIGCONT)

    def log_text(self) -> str:
        member = self._member
        return member.log.read_text(errors="replace") if member is not None and member.log.exists() else ""


class NamesrvProc(_Proc):
    """A name server; ``metrics`` its ``/metrics`` settings (``port``, ``token_file``, ...), ``event_loop`` its loop."""

    def __init__(self, root: Path, *, metrics: Mapping[str, Any] | None = None, event_loop: str = "") -> None:
        spec = ClusterSpec(
            root=str(root),
            groups=(),
            metrics={"namesrv-0": dict(metrics)} if metrics else {},
            event_loop=event_loop,
        )
        super().__init__(ProcessCluster(spec, log_dir=Path(root) / "logs" / "namesrv", log_level="INFO"))
        self.metrics_port: int | None = metrics["port"] if metrics else None

    @property
    def _member(self) -> Any:
        return self.cluster.namesrvs[0] if self.cluster.namesrvs else None

    def start(self) -> NamesrvProc:
        if self.started:
            raise AssertionError("a name server of the drills starts once")
        self.cluster.start()
        self.started = True
        return self

    def kill(self) -> None:
        if self._member is not None:
            _signal_end(self._member.proc, signal.SIGKILL)

    def stop(self) -> None:
        """SIGTERM: a clean stop."""
        self.cluster.stop()


class BrokerProc(_Proc):
    """Broker ``broker_id`` of group ``name`` (``role`` for a master), registering with ``namesrv``, its store in
    ``store_dir`` (default ``<root>/<name>-<id>``); ``overrides`` are BrokerConfig fields (``store`` a dict of
    StoreConfig fields), ``metrics`` its ``/metrics`` settings. It registers every 2 s."""

    def __init__(
        self,
        root: Path,
        namesrv: str,
        name: str = "broker-a",
        broker_id: int = 0,
        role: str = "ASYNC_MASTER",
        *,
        store_dir: Path | None = None,
        metrics: Mapping[str, Any] | None = None,
        **overrides: Any,
    ) -> None:
        self.store_dir = store_dir or Path(root) / f"{name}-{broker_id}"
        self.broker_id = broker_id
        group = GroupSpec(name, slaves=broker_id, role=None if broker_id else role)
        self.key = group.members()[broker_id].key
        spec = ClusterSpec(
            root=str(root),
            groups=(group,),
            namesrvs=0,
            namesrv_addrs=tuple(namesrv.split(";")),
            broker_overrides={"register_interval_s": 2.0},
            metrics={self.key: dict(metrics)} if metrics else {},
        )
        store = {"store_dir": str(self.store_dir), **overrides.pop("store", {})}
        self._overrides = {**overrides, "store": store}
        self.metrics_port: int | None = metrics["port"] if metrics else None
        super().__init__(ProcessCluster(spec, log_dir=Path(root) / "logs" / f"{name}-{broker_id}", log_level="INFO"))

    @property
    def _member(self) -> Any:
        return self.cluster.brokers.get(self.key)

    @property
    def ha_port(self) -> int:
        return int(self._member.ha_addr.rpartition(":")[2])

    def start(self) -> BrokerProc:
        """Start the broker, or restart it on its ports and store."""
        if self.started:
            self.cluster.restart_broker(self.key)
        else:
            self.cluster.start_broker(self.key, **self._overrides)
            self.started = True
        return self

    def kill(self) -> None:
        if self._member is not None:
            self.cluster.kill_broker(self.key)

    def stop(self) -> None:
        """SIGTERM: a clean stop (configs written, store flushed)."""
        if self._member is not None:
            self.cluster.stop_broker(self.key)


def _signal_end(proc: Any, sig: signal.Signals) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGCONT)
        proc.send_signal(sig)
    proc.wait(10)


async def call(
    addr: str, code: int, ext: dict | None = None, body: bytes = b"", timeout_s: float = 5.0
) -> RemotingCommand:
    client = RemotingClient()
    try:
        return await client.invoke(addr, RemotingCommand.request(code, ext, body), timeout_s)
    finally:
        await client.close()


def runtime_info(addr: str) -> dict[str, str]:
    """GET_BROKER_RUNTIME_INFO's table (a KVTable JSON)."""
    from brokers.engine.common import json_compat

    reply = asyncio.run(call(addr, RequestCode.GET_BROKER_RUNTIME_INFO))
    assert reply.code == ResponseCode.SUCCESS, reply
    return {str(k): str(v) for k, v in json_compat.loads(reply.body)["table"].items()}


def create_topic(addr: str, topic: str, queues: int) -> None:
    ext = {
        "topic": topic,
        "defaultTopic": "TBW102",
        "readQueueNums": queues,
        "writeQueueNums": queues,
        "perm": 6,
        "topicFilterType": "SINGLE_TAG",
        "topicSysFlag": 0,
        "order": False,
    }
    reply = asyncio.run(call(addr, RequestCode.UPDATE_AND_CREATE_TOPIC, ext))
    assert reply.code == ResponseCode.SUCCESS, reply
