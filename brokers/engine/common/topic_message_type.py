"""A topic's message type (RocketMQ 5's ``message.type`` attribute) and what a producer may send to it.

Facts taken from RocketMQ 5.x (``TopicConfig.getTopicMessageType``, the proxy's
``MetadataService.getTopicMessageType``, ``RouteActivity`` and ``DefaultTopicMessageTypeValidator``):

* A topic whose config has no ``message.type`` is NORMAL (not "anything": RocketMQ 5 reads the
  missing attribute as NORMAL). A topic the broker does not have is UNSPECIFIED.
* A 5.x client is told, per queue of a route, which message types the queue accepts: the topic's
  one type, all four for MIXED, ``MESSAGE_TYPE_UNSPECIFIED`` for UNSPECIFIED.
* A message's own type comes from its properties: TRANSACTION when ``TRAN_MSG`` is ``true``, else
  DELAY with a delay level or a timer property, else FIFO with a sharding key (a message group),
  else NORMAL.
* A send is refused when the message's type is UNSPECIFIED, or differs from the topic's and the
  topic is not MIXED. RocketMQ's proxy checks this (``enableTopicMessageTypeCheck``, on by
  default); its broker's remoting SEND_MESSAGE does not, and neither does Gantry's: 4.x clients
  send any message to any topic, as before.

One entry point for everyone: :func:`topic_message_type` of a TopicConfig (or None).
"""

from __future__ import annotations

from collections.abc import Mapping

from brokers.engine.common.message import PROPERTY_DELAY_TIME_LEVEL, PROPERTY_TRANSACTION_PREPARED
from brokers.engine.common.topic_attributes import MESSAGE_TYPE, MESSAGE_TYPE_VALUES
from brokers.engine.common.topic_config import TopicConfig

UNSPECIFIED = "UNSPECIFIED"
NORMAL = "NORMAL"
FIFO = "FIFO"
DELAY = "DELAY"
TRANSACTION = "TRANSACTION"
MIXED = "MIXED"
SENDABLE_TYPES = (NORMAL, FIFO, DELAY, TRANSACTION)  # the types a message can have (and a console offers)

PROPERTY_TIMER_DELIVER_MS = "TIMER_DELIVER_MS"
PROPERTY_TIMER_DELAY_SEC = "TIMER_DELAY_SEC"
PROPERTY_TIMER_DELAY_MS = "TIMER_DELAY_MS"
PROPERTY_SHARDING_KEY = "__SHARDINGKEY"
_DELAY_PROPERTIES = (
    PROPERTY_DELAY_TIME_LEVEL,
    PROPERTY_TIMER_DELIVER_MS,
    PROPERTY_TIMER_DELAY_SEC,
    PROPERTY_TIMER_DELAY_MS,
)


def topic_message_type(tc: TopicConfig | None) -> str:
    """The topic's message type: its ``message.type`` attribute, NORMAL when it has none,
    UNSPECIFIED when there is no such topic (None) or the stored value is no type RocketMQ knows."""
    if tc is None:
        return UNSPECIFIED
    value = tc.attributes.get(MESSAGE_TYPE)
    if value is None:
        return NORMAL
    return value if value in MESSAGE_TYPE_VALUES else UNSPECIFIED


def accepted_message_types(topic_type: str) -> tuple[str, ...]:
    """What a route tells a 5.x client each queue accepts (RouteActivity's acceptMessageTypes);
    ``("UNSPECIFIED",)`` stands for the protocol's MESSAGE_TYPE_UNSPECIFIED."""
    if topic_type == MIXED:
        return SENDABLE_TYPES
    if topic_type in SENDABLE_TYPES:
        return (topic_type,)
    return (UNSPECIFIED,)


def message_type_of(properties: Mapping[str, str]) -> str:
    """A message's type from its properties (TopicMessageType.parseFromMessageProperty)."""
    if properties.get(PROPERTY_TRANSACTION_PREPARED) == "true":
        return TRANSACTION
    if any(properties.get(p) is not None for p in _DELAY_PROPERTIES):
        return DELAY
    if properties.get(PROPERTY_SHARDING_KEY) is not None:
        return FIFO
    return NORMAL


def message_type_conflict(topic_type: str, message_type: str) -> str | None:
    """Why a message of ``message_type`` may not go to a topic of ``topic_type``, or None when it may."""
    if message_type == UNSPECIFIED or (message_type != topic_type and topic_type != MIXED):
        return f"the topic's message type is {topic_type}, the message's is {message_type}"
    return None
