"""RocketMQ's TopicValidator: the one rule for topic and group names, and which topics are the system's.

Every front door calls this module and differs only in how it reports the refusal: the broker
answers with a remark, ``mqadmin`` raises CommandError, the console form and the API raise
Django's ValidationError (``topics/rules.py``), the consumer pages InvalidInput. A name is also
a path component (consume queue directories), so nothing may touch the filesystem with a name
before it passed :func:`validate_topic`.

The facts, from apache/rocketmq ``common/.../topic/TopicValidator.java`` and
``client/.../Validators.java``:

- **Characters**: ``^[%|a-zA-Z0-9_-]+$``, ASCII only (Java checks each UTF-16 ``char`` against a
  128-entry table, so full-width digits, accented letters, spaces, ``.``, ``/``, NUL, newlines
  are all refused).
- **Order of checks** (the broker's ``validateTopic``): blank, then characters, then length. Because
  the character check runs first, every name that reaches the length check is ASCII, where
  Java's UTF-16 length equals Python's ``len``; the first offending position is the same too.
- **Length**: a topic at most 127 characters (4.9.x and 5.x; the commit log stores the length in
  one signed byte); a group at most 255 (``Validators.CHARACTER_MAX_LENGTH`` in 4.9.x and 5.3.x;
  RocketMQ's development branch after 5.3.3 lowers it to 120 and lets retry/DLQ topics reach 255,
  no released version does, so we keep 255 and 127).
- **System topics** (``isSystemTopic``): the fixed set below, anything starting with ``rmq_sys_``,
  and the topics each broker makes from its own names at start-up (``addSystemTopic``): the
  cluster name, the broker name and ``<cluster>_REPLY_TOPIC`` (:func:`broker_system_topics`).
  ``updateTopic`` refuses them (4.9.x always; 5.x while ``validateSystemTopicWhenUpdateTopic``, on
  by default). 5.x adds ``CHECKPOINT_TOPIC`` (5.2.0) to the set; its other system topics
  (``rmq_sys_REVIVE_LOG_<cluster>``, ``rmq_sys_wheel_timer``, ``rmq_sys_SYNC_BROKER_MEMBER_<broker>``,
  ``rmq_sys_TRACE_DATA_*``, ``rmq_sys_INDEX``) all fall under the prefix. We refuse the union
  of both versions, so a topic made here never collides with a broker upgraded later.
- **Not allowed to send** (``isNotAllowedSendTopic``, a subset): a producer may not write to
  these even though they exist; TBW102, BenchmarkTest, RMQ_SYS_TRACE_TOPIC and the checkpoint
  topic are system topics a producer may still address.
- **Retry and DLQ topics** (``%RETRY%<group>``, ``%DLQ%<group>``) are ordinary names to the rule:
  the brokers make them for consumer groups, and an admin may create them with ``updateTopic``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from brokers.engine.common.constants import (
    AUTO_CREATE_TOPIC_KEY_TOPIC,
    BENCHMARK_TOPIC,
    DLQ_GROUP_TOPIC_PREFIX,
    OFFSET_MOVED_EVENT,
    RETRY_GROUP_TOPIC_PREFIX,
    RMQ_SYS_TRACE_TOPIC,
    RMQ_SYS_TRANS_HALF_TOPIC,
    RMQ_SYS_TRANS_OP_HALF_TOPIC,
    SCHEDULE_TOPIC,
    SELF_TEST_TOPIC,
)

__all__ = [
    "ALLOWED_CHARS_TEXT",
    "GROUP_MAX_LENGTH",
    "NOT_ALLOWED_SEND_TOPICS",
    "SYSTEM_TOPICS",
    "SYSTEM_TOPICS_4_9",
    "SYSTEM_TOPICS_5",
    "SYSTEM_TOPIC_PREFIX",
    "TOPIC_MAX_LENGTH",
    "InvalidNameError",
    "broker_system_topics",
    "is_dlq_topic",
    "is_not_allowed_send_topic",
    "is_retry_topic",
    "is_system_topic",
    "validate_group",
    "validate_new_topic",
    "validate_topic",
]

TOPIC_MAX_LENGTH = 127  # TopicValidator.TOPIC_MAX_LENGTH; the record stores the topic length in one signed byte
GROUP_MAX_LENGTH = 255  # Validators.CHARACTER_MAX_LENGTH in 4.9.x and 5.3.x
VALID_CHARS = frozenset("%|-_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
ALLOWED_CHARS_TEXT = "letters a-z and A-Z, digits 0-9, and % | _ -"

SYSTEM_TOPIC_PREFIX = "rmq_sys_"
SYNC_BROKER_MEMBER_GROUP_PREFIX = SYSTEM_TOPIC_PREFIX + "SYNC_BROKER_MEMBER_"  # 5.x, one per broker name
RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC = "TRANS_CHECK_MAX_TIME_TOPIC"
RMQ_SYS_ROCKSDB_OFFSET_TOPIC = "CHECKPOINT_TOPIC"  # 5.2.0+
REPLY_TOPIC_POSTFIX = "REPLY_TOPIC"  # MixAll.REPLY_TOPIC_POSTFIX: each broker makes <cluster>_REPLY_TOPIC

SYSTEM_TOPICS_4_9 = frozenset(
    {
        AUTO_CREATE_TOPIC_KEY_TOPIC,
        SCHEDULE_TOPIC,
        BENCHMARK_TOPIC,
        RMQ_SYS_TRANS_HALF_TOPIC,
        RMQ_SYS_TRACE_TOPIC,
        RMQ_SYS_TRANS_OP_HALF_TOPIC,
        RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC,
        SELF_TEST_TOPIC,
        OFFSET_MOVED_EVENT,
    }
)
SYSTEM_TOPICS_5 = SYSTEM_TOPICS_4_9 | {RMQ_SYS_ROCKSDB_OFFSET_TOPIC}
SYSTEM_TOPICS = SYSTEM_TOPICS_4_9 | SYSTEM_TOPICS_5  # what this tier refuses: both versions' sets
NOT_ALLOWED_SEND_TOPICS = frozenset(
    {
        SCHEDULE_TOPIC,
        RMQ_SYS_TRANS_HALF_TOPIC,
        RMQ_SYS_TRANS_OP_HALF_TOPIC,
        RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC,
        SELF_TEST_TOPIC,
        OFFSET_MOVED_EVENT,
    }
)


class InvalidNameError(ValueError):
    """A topic or group name breaks RocketMQ's rule; the message says which way (no trailing period).

    ``code`` is one of ``blank``, ``invalid`` (a character), ``max_length``, ``reserved`` (a
    system topic); ``position`` is the 1-based position of the first offending character.
    """

    def __init__(self, message: str, code: str = "invalid", position: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.position = position


def describe_char(ch: str) -> str:
    """Name a character so a reader sees it: ``a space``, ``a NUL character``, ``'１' (U+FF11 ...)``."""
    named = {" ": "a space", "\x00": "a NUL character", "\r": "a carriage return", "\n": "a newline", "\t": "a tab"}
    if ch in named:
        return named[ch]
    if ord(ch) < 128:
        return repr(ch)
    name = unicodedata.name(ch, "")
    return f"{ch!r} (U+{ord(ch):04X}{' ' + name if name else ''})"


def _validate_name(kind: str, name: object, max_length: int) -> str:
    if not isinstance(name, str):
        raise InvalidNameError(f"the {kind} name must be a string", "invalid")
    if not name:
        raise InvalidNameError(f"the {kind} name is empty", "blank")
    for i, ch in enumerate(name):
        if ch not in VALID_CHARS:
            raise InvalidNameError(
                f"the {kind} name contains {describe_char(ch)} at position {i + 1}; allowed characters are {ALLOWED_CHARS_TEXT}",
                "invalid",
                i + 1,
            )
    if len(name) > max_length:
        raise InvalidNameError(
            f"the {kind} name is {len(name)} characters long, longer than {max_length}: at most {max_length} are allowed",
            "max_length",
        )
    return name


def validate_topic(topic: object) -> str:
    """Return ``topic`` if it follows the naming rule (any topic, system ones too), else raise InvalidNameError."""
    return _validate_name("topic", topic, TOPIC_MAX_LENGTH)


def validate_group(group: object) -> str:
    """Return ``group`` if it is a legal consumer or producer group name, else raise InvalidNameError."""
    return _validate_name("group", group, GROUP_MAX_LENGTH)


def validate_broker_name(name: object, kind: str = "broker") -> str:
    """Return ``name`` if it is a legal broker (or, with ``kind="cluster"``, cluster) name: the topic
    rule, since a broker registers both names as topics at start, as RocketMQ's does; the error
    says which name it was."""
    return _validate_name(kind, name, TOPIC_MAX_LENGTH)


def broker_system_topics(cluster_names: Iterable[str], broker_names: Iterable[str]) -> frozenset[str]:
    """The topics brokers make from their own names: each cluster, ``<cluster>_REPLY_TOPIC``, each broker name."""
    clusters = set(cluster_names)
    return frozenset(clusters | set(broker_names) | {f"{c}_{REPLY_TOPIC_POSTFIX}" for c in clusters})


def is_system_topic(topic: str, broker_topics: Iterable[str] = ()) -> bool:
    """True for the system's own topics: the fixed set, the ``rmq_sys_`` prefix, and ``broker_topics``.

    ``broker_topics`` are the names :func:`broker_system_topics` gives for the brokers at hand
    (RocketMQ adds them to its set at start-up; only a caller that knows the brokers can).
    """
    return topic in SYSTEM_TOPICS or topic.startswith(SYSTEM_TOPIC_PREFIX) or topic in frozenset(broker_topics)


def is_not_allowed_send_topic(topic: str) -> bool:
    """True for the topics no producer may write to (RocketMQ's NOT_ALLOWED_SEND_TOPIC_SET)."""
    return topic in NOT_ALLOWED_SEND_TOPICS


def is_retry_topic(topic: str) -> bool:
    return topic.startswith(RETRY_GROUP_TOPIC_PREFIX)


def is_dlq_topic(topic: str) -> bool:
    return topic.startswith(DLQ_GROUP_TOPIC_PREFIX)


def validate_new_topic(topic: object, broker_topics: Iterable[str] = ()) -> str:
    """The ``updateTopic`` rule: a legal name that is not a system topic (retry and DLQ topics pass).

    Also the rule of ``deleteTopic``: what an admin may create is what an admin may remove.
    """
    name = validate_topic(topic)
    if is_system_topic(name, broker_topics):
        raise InvalidNameError(f"{name} is a system topic; it cannot be created or changed", "reserved")
    return name
