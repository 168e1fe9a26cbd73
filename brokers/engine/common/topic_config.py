"""TopicConfig: a topic's queue numbers, permission and attributes on one broker.

``attributes`` is RocketMQ 5's attribute map (``{"message.type": "FIFO"}``, see
``topic_attributes.py``), written under its JSON name ``attributes`` (``{}`` when empty, as a 5.x
broker writes it; 4.x readers ignore the field). Values are checked on the writes that change
them (UPDATE_AND_CREATE_TOPIC), not here: a file or a peer's body is read as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from brokers.engine.common.perm import PERM_MAX, PERM_MIN, PERM_RW, is_valid_perm
from brokers.engine.common.queue_nums import MAX_QUEUE_NUMS, MIN_QUEUE_NUMS, is_valid_queue_nums


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
    # RocketMQ 5's topic attributes; left out of the hash (a dict), compared by equality.
    attributes: dict[str, str] = field(default_factory=dict, hash=False)

    def validate(self) -> TopicConfig:
        """Raise InvalidTopicConfigError unless queue numbers and perm are in range."""
        for name, value in (("readQueueNums", self.read_queue_nums), ("writeQueueNums", self.write_queue_nums)):
            if not is_valid_queue_nums(value):
                raise InvalidTopicConfigError(
                    f"{name} must be an integer from {MIN_QUEUE_NUMS} to {MAX_QUEUE_NUMS}, got {value!r}"
                )
        if not is_valid_perm(self.perm):
            raise InvalidTopicConfigError(f"perm must be an integer from {PERM_MIN} to {PERM_MAX}, got {self.perm!r}")
        if self.topic_filter_type not in ("SINGLE_TAG", "MULTI_TAG"):
            raise InvalidTopicConfigError(
                f"topicFilterType must be SINGLE_TAG or MULTI_TAG, got {self.topic_filter_type!r}"
            )
        return self

    def with_changes(self, **changes: Any) -> TopicConfig:
        return replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        """The fastjson property form (topics.json entries, GET_ALL_TOPIC_CONFIG, registration)."""
        return {
            "order": self.order,
            "perm": self.perm,
            "readQueueNums": self.read_queue_nums,
            "topicFilterType": self.topic_filter_type,
            "topicName": self.topic_name,
            "topicSysFlag": self.topic_sys_flag,
            "writeQueueNums": self.write_queue_nums,
            "attributes": dict(sorted(self.attributes.items())),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TopicConfig:
        return cls(
            topic_name=str(data["topicName"]),
            read_queue_nums=int(data.get("readQueueNums", 16)),
            write_queue_nums=int(data.get("writeQueueNums", 16)),
            perm=int(data.get("perm", PERM_RW)),
            topic_filter_type=str(data.get("topicFilterType", "SINGLE_TAG")),
            topic_sys_flag=int(data.get("topicSysFlag", data.get("topicSynFlag", 0))),
            order=bool(data.get("order", False)),
            attributes=_attributes(data.get("attributes")),
        )


def _attributes(value: object) -> dict[str, str]:
    """The attribute map of a JSON TopicConfig: string keys and values kept, anything else dropped."""
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}
