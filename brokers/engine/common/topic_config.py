"""TopicConfig: a topic's queue numbers and permission on one broker."""
from __future__ import annotations

from dataclasses import dataclass, replace

from brokers.engine.common.constants import MAX_QUEUE_NUMS
from brokers.engine.common.perm import PERM_RW


class InvalidTopicConfigError(ValueError):
    """Queue numbers or perm out of range; the message names the field."""


@dataclass(frozen=True, slots=True)
class TopicConfig:
    topic_name: str
    read_queue_nums: int = 16  # RocketMQ's TopicConfig default
    write_queue_nums: int = 16
    perm: int = PERM_RW
    topic_filter_type: str = "SINGLE_TAG"
    topic_sys_flag: int = 0
    order: bool = False

    def validate(self) -> TopicConfig:
        """Raise InvalidTopicConfigError unless queue numbers and perm are in range."""
        for name, value in (("readQueueNums", self.read_queue_nums), ("writeQueueNums", self.write_queue_nums)):
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_QUEUE_NUMS:
                raise InvalidTopicConfigError(f"{name} must be an integer from 0 to {MAX_QUEUE_NUMS}, got {value!r}")
        if not isinstance(self.perm, int) or isinstance(self.perm, bool) or not 0 <= self.perm <= 7:
            raise InvalidTopicConfigError(f"perm must be an integer from 0 to 7, got {self.perm!r}")
        if self.topic_filter_type not in ("SINGLE_TAG", "MULTI_TAG"):
            raise InvalidTopicConfigError(f"topicFilterType must be SINGLE_TAG or MULTI_TAG, got {self.topic_filter_type!r}")
        return self

    def with_changes(self, **changes: object) -> TopicConfig:
        return replace(self, **changes)

    def to_json(self) -> dict:
        """The fastjson property form (topics.json entries, GET_ALL_TOPIC_CONFIG, registration)."""
        return {
            "order": self.order,
            "perm": self.perm,
            "readQueueNums": self.read_queue_nums,
            "topicFilterType": self.topic_filter_type,
            "topicName": self.topic_name,
            "topicSysFlag": self.topic_sys_flag,
            "writeQueueNums": self.write_queue_nums,
        }

    @classmethod
    def from_json(cls, data: dict) -> TopicConfig:
        return cls(
            topic_name=str(data["topicName"]),
            read_queue_nums=int(data.get("readQueueNums", 16)),
            write_queue_nums=int(data.get("writeQueueNums", 16)),
            perm=int(data.get("perm", PERM_RW)),
            topic_filter_type=str(data.get("topicFilterType", "SINGLE_TAG")),
            topic_sys_flag=int(data.get("topicSysFlag", data.get("topicSynFlag", 0))),
            order=bool(data.get("order", False)),
        )
