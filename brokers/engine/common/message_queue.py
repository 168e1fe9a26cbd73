"""MessageQueue: the (topic, broker name, queue id) triple every part of the tier keys on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, order=True, slots=True)
class MessageQueue:
    """One queue of a topic on one broker.

    Field order gives RocketMQ's ``MessageQueue.compareTo`` order: topic, then broker name
    (both ordinal string order), then queue id as a number.
    """

    topic: str
    broker_name: str
    queue_id: int

    def __str__(self) -> str:
        # RocketMQ's MessageQueue.toString(); CONSISTENT_HASH hashes exactly this text.
        return f"MessageQueue [topic={self.topic}, brokerName={self.broker_name}, queueId={self.queue_id}]"

    def to_json(self) -> dict[str, Any]:
        """Return the fastjson property form used in bodies (lock bodies, stats tables)."""
        return {"brokerName": self.broker_name, "queueId": self.queue_id, "topic": self.topic}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MessageQueue:
        return cls(str(data["topic"]), str(data["brokerName"]), int(data["queueId"]))
