"""What a consumer's listener receives and returns: ReceivedMessage and ConsumeStatus.

A listener is ``fn(messages: list[ReceivedMessage]) -> ConsumeStatus``, called from the
consumer's thread pool (it may block). CONSUME_SUCCESS acknowledges the messages;
RECONSUME_LATER (or an exception, or None) sends them back to ``%RETRY%<group>`` in clustering
mode, or pauses the queue and retries them in orderly mode (RocketMQ's
SUSPEND_CURRENT_QUEUE_A_MOMENT, an alias here).

A message that came back through the retry topic shows its original topic (RocketMQ's
``resetRetryAndNamespace``); ``message_queue`` stays the queue it was pulled from.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from brokers.engine.common.constants import RETRY_GROUP_TOPIC_PREFIX
from brokers.engine.common.message import PROPERTY_RETRY_TOPIC, MessageExt
from brokers.engine.common.message_queue import MessageQueue

__all__ = ["ConsumeStatus", "MessageListener", "ReceivedMessage", "to_received"]


class ConsumeStatus(str, Enum):
    """A listener's answer (ConsumeConcurrentlyStatus; orderly: ConsumeOrderlyStatus)."""

    CONSUME_SUCCESS = "CONSUME_SUCCESS"
    RECONSUME_LATER = "RECONSUME_LATER"
    SUCCESS = "CONSUME_SUCCESS"  # alias: ConsumeOrderlyStatus.SUCCESS
    SUSPEND_CURRENT_QUEUE_A_MOMENT = "RECONSUME_LATER"  # alias: ConsumeOrderlyStatus's retry


@dataclass(frozen=True, slots=True)
class ReceivedMessage:
    """A consumed message as the listener sees it."""

    topic: str
    body: bytes
    message_queue: MessageQueue
    queue_offset: int
    msg_id: str  # UNIQ_KEY when the producer set one (RocketMQ clients do), else the offset id
    offset_msg_id: str  # store host + commit-log offset
    tags: str | None
    keys: str | None
    properties: dict[str, str]
    reconsume_times: int = 0
    born_timestamp: int = 0
    store_timestamp: int = 0
    commit_log_offset: int = 0

    @property
    def queue_id(self) -> int:
        return self.message_queue.queue_id

    @property
    def broker_name(self) -> str:
        return self.message_queue.broker_name


MessageListener = Callable[[list[ReceivedMessage]], "ConsumeStatus | None"]


def original_topic(msg: MessageExt, group: str) -> str:
    """The topic to show: RETRY_TOPIC for a message pulled from the group's retry topic."""
    if msg.topic.startswith(RETRY_GROUP_TOPIC_PREFIX) and msg.topic == RETRY_GROUP_TOPIC_PREFIX + group:
        return msg.properties.get(PROPERTY_RETRY_TOPIC) or msg.topic
    return msg.topic


def to_received(msg: MessageExt, mq: MessageQueue, group: str) -> ReceivedMessage:
    """The listener's view of a pulled record."""
    props = dict(msg.properties)
    return ReceivedMessage(
        topic=original_topic(msg, group), body=msg.body, message_queue=mq, queue_offset=msg.queue_offset,
        msg_id=msg.uniq_key or msg.msg_id, offset_msg_id=msg.msg_id, tags=msg.tags, keys=msg.keys, properties=props,
        reconsume_times=msg.reconsume_times, born_timestamp=msg.born_timestamp, store_timestamp=msg.store_timestamp,
        commit_log_offset=msg.commit_log_offset,
    )
