"""What a consumer's listener receives and returns: ReceivedMessage and the two answers.

A listener is ``fn(messages: list[ReceivedMessage]) -> answer``, called from the consumer's
thread pool (it may block). As in RocketMQ, the answer is a
:class:`ConsumeConcurrentlyStatus` for a concurrent consumer (CONSUME_SUCCESS acknowledges the
messages; RECONSUME_LATER sends them back to ``%RETRY%<group>`` in clustering mode) and a
:class:`ConsumeOrderlyStatus` for an orderly one (SUCCESS commits them;
SUSPEND_CURRENT_QUEUE_A_MOMENT pauses the queue and retries them). An exception or None counts
as the failure answer. Python is not Java: a concurrent listener's answer given to an orderly
consumer (or the other way round) means the same, success or retry (:func:`concurrently_answer`,
:func:`orderly_answer`), and so does the answer's name as a string.

A message that came back through the retry topic shows its original topic (RocketMQ's
``resetRetryAndNamespace``); ``message_queue`` stays the queue it was pulled from.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from brokers.engine.common.constants import RETRY_GROUP_TOPIC_PREFIX
from brokers.engine.common.message import PROPERTY_LAST_ERROR, PROPERTY_RETRY_TOPIC, MessageExt, last_error_text
from brokers.engine.common.message_queue import MessageQueue

__all__ = [
    "ConsumeConcurrentlyStatus",
    "ConsumeOrderlyStatus",
    "MessageListener",
    "ReceivedMessage",
    "concurrently_answer",
    "orderly_answer",
    "to_received",
]


class ConsumeConcurrentlyStatus(str, Enum):
    """A concurrent listener's answer (RocketMQ's ConsumeConcurrentlyStatus)."""

    CONSUME_SUCCESS = "CONSUME_SUCCESS"
    RECONSUME_LATER = "RECONSUME_LATER"


class ConsumeOrderlyStatus(str, Enum):
    """An orderly listener's answer (RocketMQ's ConsumeOrderlyStatus, without the deprecated COMMIT/ROLLBACK)."""

    SUCCESS = "SUCCESS"
    SUSPEND_CURRENT_QUEUE_A_MOMENT = "SUSPEND_CURRENT_QUEUE_A_MOMENT"


_SUCCESS_ANSWERS = frozenset({"CONSUME_SUCCESS", "SUCCESS"})


def _succeeded(answer: object) -> bool:
    """True for either enum's success, by value, so a plain string answer counts too."""
    return isinstance(answer, str) and str.__str__(answer) in _SUCCESS_ANSWERS


def concurrently_answer(answer: object) -> ConsumeConcurrentlyStatus:
    """A listener's answer as a concurrent consumer reads it: success, or RECONSUME_LATER for anything else."""
    return (
        ConsumeConcurrentlyStatus.CONSUME_SUCCESS if _succeeded(answer) else ConsumeConcurrentlyStatus.RECONSUME_LATER
    )


def orderly_answer(answer: object) -> ConsumeOrderlyStatus:
    """A listener's answer as an orderly consumer reads it: SUCCESS, or SUSPEND_CURRENT_QUEUE_A_MOMENT for anything else."""
    return ConsumeOrderlyStatus.SUCCESS if _succeeded(answer) else ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT


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


MessageListener = Callable[[list[ReceivedMessage]], "ConsumeConcurrentlyStatus | ConsumeOrderlyStatus | None"]


def note_failure(msgs: list[MessageExt], answer: object, error: BaseException | None) -> None:
    """Record on each message why its listener did not acknowledge it (the exception, else the
    answer): the send-back carries it to the broker, which keeps it with the retry and the dead letter."""
    why = (
        f"{type(error).__name__}: {error}"
        if error is not None
        else f"the listener answered {getattr(answer, 'value', answer)!s}"
    )
    text = last_error_text(why)
    for m in msgs:
        m.properties[PROPERTY_LAST_ERROR] = text


def original_topic(msg: MessageExt, group: str) -> str:
    """The topic to show: RETRY_TOPIC for a message pulled from the group's retry topic."""
    if msg.topic.startswith(RETRY_GROUP_TOPIC_PREFIX) and msg.topic == RETRY_GROUP_TOPIC_PREFIX + group:
        return msg.properties.get(PROPERTY_RETRY_TOPIC) or msg.topic
    return msg.topic


def to_received(msg: MessageExt, mq: MessageQueue, group: str) -> ReceivedMessage:
    """The listener's view of a pulled record."""
    props = dict(msg.properties)
    return ReceivedMessage(
        topic=original_topic(msg, group),
        body=msg.body,
        message_queue=mq,
        queue_offset=msg.queue_offset,
        msg_id=msg.uniq_key or msg.msg_id,
        offset_msg_id=msg.msg_id,
        tags=msg.tags,
        keys=msg.keys,
        properties=props,
        reconsume_times=msg.reconsume_times,
        born_timestamp=msg.born_timestamp,
        store_timestamp=msg.store_timestamp,
        commit_log_offset=msg.commit_log_offset,
    )
