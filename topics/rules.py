"""The rules topic input must follow, shared by the console form and the API serializer.

Each check raises Django's ValidationError with the reason, so the form and the API give the
same message. Names follow RocketMQ's TopicValidator (``^[%|a-zA-Z0-9_-]+$``, at most 127
characters), matched against the whole string in ASCII: look-alikes (spaces, ``..``, ``/``,
NUL, a trailing newline, full-width digits, other Unicode letters) are refused with the first
offending character named.
"""
from __future__ import annotations

import re
import unicodedata

from django.core.exceptions import ValidationError

from brokers.engine.common.constants import (
    DLQ_GROUP_TOPIC_PREFIX,
    MAX_QUEUE_NUMS,
    RETRY_GROUP_TOPIC_PREFIX,
    TOPIC_MAX_LENGTH,
)
from brokers.engine.common.validation import is_system_topic

TOPIC_NAME_RE = re.compile(r"[%|a-zA-Z0-9_-]+", re.ASCII)
ALLOWED_CHARS = "letters a-z and A-Z, digits 0-9, and % | _ -"
DEFAULT_QUEUE_NUMS = 8  # the broker's defaultTopicQueueNums
DEFAULT_PERM = 6  # read and write
PERM_CHOICES = (  # every value 0..7, the usual ones first, so a form never silently changes an odd perm
    (6, "read and write (6)"), (4, "read only (4)"), (2, "write only (2)"), (0, "no access (0)"),
    (7, "read, write, inherit (7)"), (5, "read, inherit (5)"), (3, "write, inherit (3)"), (1, "inherit only (1)"),
)


def _describe_char(ch: str) -> str:
    if ch == " ":
        return "a space"
    if ch == "\x00":
        return "a NUL character"
    if ch in "\r\n\t":
        return {"\r": "a carriage return", "\n": "a newline", "\t": "a tab"}[ch]
    name = unicodedata.name(ch, "")
    if ord(ch) < 128:
        return f"{ch!r}"
    return f"{ch!r} (U+{ord(ch):04X}{' ' + name if name else ''})"


def validate_topic_name(name: object) -> str:
    """Return ``name`` if it is a legal topic name, else raise ValidationError saying why."""
    if not isinstance(name, str):
        raise ValidationError("the topic name must be a string.", code="invalid")
    if not name:
        raise ValidationError("the topic name is empty.", code="blank")
    if len(name) > TOPIC_MAX_LENGTH:
        raise ValidationError(f"the topic name is {len(name)} characters long; at most {TOPIC_MAX_LENGTH} are allowed.", code="max_length")
    if not TOPIC_NAME_RE.fullmatch(name):
        bad = next((i, ch) for i, ch in enumerate(name) if not TOPIC_NAME_RE.fullmatch(ch))
        raise ValidationError(
            f"the topic name contains {_describe_char(bad[1])} at position {bad[0] + 1}; only {ALLOWED_CHARS} are allowed.",
            code="invalid",
        )
    return name


def validate_new_topic_name(name: object) -> str:
    """A name a user may create: legal, not a system topic, not a retry or DLQ topic."""
    name = validate_topic_name(name)
    if is_system_topic(name):
        raise ValidationError(f"{name} is a system topic; it cannot be created.", code="reserved")
    if name.startswith((RETRY_GROUP_TOPIC_PREFIX, DLQ_GROUP_TOPIC_PREFIX)):
        raise ValidationError(
            f"topics starting with {RETRY_GROUP_TOPIC_PREFIX} or {DLQ_GROUP_TOPIC_PREFIX} are made by the brokers for consumer groups.",
            code="reserved",
        )
    return name


def validate_queue_nums(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError("must be an integer.", code="invalid")
    if not 1 <= value <= MAX_QUEUE_NUMS:
        raise ValidationError(f"must be from 1 to {MAX_QUEUE_NUMS}, got {value}.", code="range")
    return value


def validate_perm(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError("must be an integer.", code="invalid")
    if not 0 <= value <= 7:
        raise ValidationError(f"must be from 0 to 7 (4 read, 2 write, 1 inherit), got {value}.", code="range")
    return value
