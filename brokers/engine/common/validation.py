"""Name rules for topics and groups (RocketMQ's TopicValidator / Validators).

A name is used as a path component (consume queue directories), so nothing may touch the
filesystem with a name before it passed :func:`validate_topic`.
"""
from __future__ import annotations

import re

from brokers.engine.common.constants import GROUP_MAX_LENGTH, SYSTEM_TOPICS, TOPIC_MAX_LENGTH

_NAME_RE = re.compile(r"[%|a-zA-Z0-9_-]+", re.ASCII)


class InvalidNameError(ValueError):
    """A topic or group name breaks RocketMQ's rule; the message says which way."""


def validate_topic(topic: object) -> str:
    """Return ``topic`` if it is a legal topic name, else raise InvalidNameError."""
    if not isinstance(topic, str) or not topic:
        raise InvalidNameError("the topic name is empty")
    if len(topic) > TOPIC_MAX_LENGTH:
        raise InvalidNameError(f"the topic name is longer than {TOPIC_MAX_LENGTH} characters")
    if not _NAME_RE.fullmatch(topic):
        raise InvalidNameError(
            f"the topic name {topic!r} contains characters other than %|a-zA-Z0-9_-"
        )
    return topic


def validate_group(group: object) -> str:
    """Return ``group`` if it is a legal consumer/producer group name, else raise InvalidNameError."""
    if not isinstance(group, str) or not group:
        raise InvalidNameError("the group name is empty")
    if len(group) > GROUP_MAX_LENGTH:
        raise InvalidNameError(f"the group name is longer than {GROUP_MAX_LENGTH} characters")
    if not _NAME_RE.fullmatch(group):
        raise InvalidNameError(
            f"the group name {group!r} contains characters other than %|a-zA-Z0-9_-"
        )
    return group


def is_system_topic(topic: str) -> bool:
    """True for the broker's own topics, which users may neither create nor write."""
    return topic in SYSTEM_TOPICS or topic.startswith("rmq_sys_")


def validate_user_topic(topic: object) -> str:
    """Validate a topic a user wants to create or write: legal and not a system topic."""
    name = validate_topic(topic)
    if is_system_topic(name):
        raise InvalidNameError(f"the topic {name!r} is a system topic and not open to users")
    return name
