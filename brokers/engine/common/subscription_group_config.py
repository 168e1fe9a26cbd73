"""SubscriptionGroupConfig: a consumer group's settings as RocketMQ names them (the broker keeps them in
``config/subscriptionGroup.json``; admin clients read and write them with codes 200/201/207).

Shared by the broker (brokers.engine.broker.subscription_group_manager) and the admin client (which
ships without the broker in the gantry-client wheel), so it lives in common.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from brokers.engine.common.constants import MAX_RECONSUME_TIMES
from brokers.engine.common.topic_validator import validate_group

__all__ = ["BUILTIN_GROUPS", "InvalidSubscriptionGroupError", "SubscriptionGroupConfig", "is_system_group"]

# RocketMQ's SubscriptionGroupManager pre-creates these for its tools (§6.7).
BUILTIN_GROUPS = (
    "TOOLS_CONSUMER",
    "FILTERSRV_CONSUMER",
    "SELF_TEST_C_GROUP",
    "CID_ONS-HTTP-PROXY",
    "CID_ONSAPI_PULL",
    "CID_ONSAPI_PERMISSION",
    "CID_ONSAPI_OWNER",
)
SYSTEM_GROUP_PREFIX = "CID_RMQ_SYS_"  # RocketMQ's MixAll.CID_RMQ_SYS_PREFIX (isSysConsumerGroup)


def is_system_group(name: str) -> bool:
    """A group of RocketMQ's own (its tools' pre-created groups, ``CID_RMQ_SYS_*``), not an application's."""
    return name in BUILTIN_GROUPS or name.startswith(SYSTEM_GROUP_PREFIX)


class InvalidSubscriptionGroupError(ValueError):
    """A SubscriptionGroupConfig field is out of range; the message names it."""


@dataclass(frozen=True, slots=True)
class SubscriptionGroupConfig:
    group_name: str
    consume_enable: bool = True
    consume_from_min_enable: bool = True
    consume_broadcast_enable: bool = True
    retry_queue_nums: int = 1
    retry_max_times: int = MAX_RECONSUME_TIMES
    broker_id: int = 0
    which_broker_when_consume_slowly: int = 1
    notify_consumer_ids_changed_enable: bool = True
    consume_message_orderly: bool = False  # RocketMQ 5: a FIFO group (its pops are orderly; mqadmin updateSubGroup -o)

    _JSON_NAMES = {
        "group_name": "groupName",
        "consume_enable": "consumeEnable",
        "consume_from_min_enable": "consumeFromMinEnable",
        "consume_broadcast_enable": "consumeBroadcastEnable",
        "retry_queue_nums": "retryQueueNums",
        "retry_max_times": "retryMaxTimes",
        "broker_id": "brokerId",
        "which_broker_when_consume_slowly": "whichBrokerWhenConsumeSlowly",
        "notify_consumer_ids_changed_enable": "notifyConsumerIdsChangedEnable",
        "consume_message_orderly": "consumeMessageOrderly",
    }

    def validate(self) -> SubscriptionGroupConfig:
        validate_group(self.group_name)
        if not 0 <= self.retry_queue_nums <= 1024:
            raise InvalidSubscriptionGroupError(f"retryQueueNums must be within 0..1024, got {self.retry_queue_nums}")
        if not -1 <= self.retry_max_times <= 10_000:
            raise InvalidSubscriptionGroupError(f"retryMaxTimes must be within -1..10000, got {self.retry_max_times}")
        if self.broker_id < 0 or self.which_broker_when_consume_slowly < 0:
            raise InvalidSubscriptionGroupError("brokerId and whichBrokerWhenConsumeSlowly must not be negative")
        return self

    def to_json(self) -> dict[str, Any]:
        return {json_name: getattr(self, attr) for attr, json_name in self._JSON_NAMES.items()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SubscriptionGroupConfig:
        """Build from the Java property form; missing fields take defaults, types are checked."""
        if not isinstance(data, dict) or "groupName" not in data:
            raise InvalidSubscriptionGroupError("the subscription group config needs a groupName")
        kwargs: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            json_name = cls._JSON_NAMES[f.name]
            if json_name not in data or data[json_name] is None:
                continue
            value = data[json_name]
            if f.type == "bool" or isinstance(f.default, bool):
                if isinstance(value, str):
                    value = value.strip().lower() == "true"
                elif not isinstance(value, bool):
                    raise InvalidSubscriptionGroupError(f"{json_name} must be true or false, got {value!r}")
            elif isinstance(f.default, int):
                if isinstance(value, bool):
                    raise InvalidSubscriptionGroupError(f"{json_name} must be an integer, got {value!r}")
                try:
                    value = int(value)
                except (TypeError, ValueError):
                    raise InvalidSubscriptionGroupError(f"{json_name} must be an integer, got {value!r}") from None
            else:
                value = str(value)
            kwargs[f.name] = value
        return cls(**kwargs)
