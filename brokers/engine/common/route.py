"""Route values shared by the name server (which builds routes) and clients (which read them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from brokers.engine.common.constants import MASTER_ID


@dataclass(frozen=True, slots=True)
class BrokerData:
    """A broker name's addresses by broker id (0 = master) within its cluster.

    The name server keeps one per broker name and changes ``broker_addrs`` in place as brokers
    register and expire; clients get copies in routes and cluster info.
    """

    cluster: str
    broker_name: str
    broker_addrs: dict[int, str] = field(default_factory=dict)

    @property
    def master_addr(self) -> str | None:
        return self.broker_addrs.get(MASTER_ID)

    def select_broker_addr(self) -> str | None:
        """The master, else the slave with the lowest id (RocketMQ's selectBrokerAddr)."""
        if self.master_addr:
            return self.master_addr
        return self.broker_addrs[min(self.broker_addrs)] if self.broker_addrs else None

    def to_json(self) -> dict[str, Any]:
        """The fastjson form: broker ids as number keys (``json_compat`` writes them bare), sorted."""
        return {
            "brokerAddrs": dict(sorted(self.broker_addrs.items())),
            "brokerName": self.broker_name,
            "cluster": self.cluster,
        }


@dataclass(frozen=True, slots=True)
class QueueData:
    """One broker name's queues of one topic, as GET_ROUTEINFO_BY_TOPIC reports them."""

    broker_name: str
    read_queue_nums: int
    write_queue_nums: int
    perm: int
    topic_sys_flag: int = 0

    def to_json(self) -> dict[str, Any]:
        # topicSynFlag is the pre-4.9.0 spelling; older Java clients read only that one.
        return {
            "brokerName": self.broker_name,
            "perm": self.perm,
            "readQueueNums": self.read_queue_nums,
            "topicSynFlag": self.topic_sys_flag,
            "topicSysFlag": self.topic_sys_flag,
            "writeQueueNums": self.write_queue_nums,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> QueueData:
        return cls(
            broker_name=str(data.get("brokerName", "")),
            read_queue_nums=int(data.get("readQueueNums", 0)),
            write_queue_nums=int(data.get("writeQueueNums", 0)),
            perm=int(data.get("perm", 0)),
            topic_sys_flag=int(data.get("topicSysFlag", data.get("topicSynFlag", 0)) or 0),
        )
