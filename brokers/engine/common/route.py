"""Route values shared by the name server (which builds routes) and clients (which read them)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class QueueData:
    """One broker name's queues of one topic, as GET_ROUTEINFO_BY_TOPIC reports them."""

    broker_name: str
    read_queue_nums: int
    write_queue_nums: int
    perm: int
    topic_sys_flag: int = 0

    def to_json(self) -> dict:
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
    def from_json(cls, data: dict) -> QueueData:
        return cls(
            broker_name=str(data.get("brokerName", "")),
            read_queue_nums=int(data.get("readQueueNums", 0)),
            write_queue_nums=int(data.get("writeQueueNums", 0)),
            perm=int(data.get("perm", 0)),
            topic_sys_flag=int(data.get("topicSysFlag", data.get("topicSynFlag", 0)) or 0),
        )
