"""The rules topic input must follow, shared by the console form and the API serializer.

Each check raises Django's ValidationError with the reason, so the form and the API give the
same message. Names follow the engine's one rule, RocketMQ's TopicValidator
(:mod:`brokers.engine.common.topic_validator`): this module only turns its InvalidNameError into
a ValidationError (same message, a closing period, the error's code). Look-alikes (spaces, ``..``,
``/``, NUL, a trailing newline, full-width digits, other Unicode letters) are refused with the
first offending character named; system topics cannot be created, retry (``%RETRY%``) and DLQ
(``%DLQ%``) topics can, as with RocketMQ's ``updateTopic``.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from brokers.engine.common.perm import PERM_MAX, PERM_MIN, is_valid_perm
from brokers.engine.common.queue_nums import MAX_QUEUE_NUMS, MIN_QUEUE_NUMS, is_valid_queue_nums
from brokers.engine.common.topic_message_type import DELAY, FIFO, NORMAL, SENDABLE_TYPES, TRANSACTION
from brokers.engine.common.topic_validator import InvalidNameError, validate_new_topic, validate_topic

DEFAULT_QUEUE_NUMS = 8  # the broker's defaultTopicQueueNums
DEFAULT_PERM = 6  # read and write
PERM_CHOICES = (  # every value 0..7, the usual ones first, so a form never silently changes an odd perm
    (6, _("read and write (6)")),
    (4, _("read only (4)")),
    (2, _("write only (2)")),
    (0, _("no access (0)")),
    (7, _("read, write, inherit (7)")),
    (5, _("read, inherit (5)")),
    (3, _("write, inherit (3)")),
    (1, _("inherit only (1)")),
)

# RocketMQ 5's message.type values a topic can be given here (UNSPECIFIED and MIXED are not offered:
# the first accepts no message, the second needs the broker's enableMixedMessageType)
MESSAGE_TYPE_CHOICES = (
    (NORMAL, _("normal (NORMAL)")),
    (FIFO, _("ordered (FIFO)")),
    (DELAY, _("delayed (DELAY)")),
    (TRANSACTION, _("transactional (TRANSACTION)")),
)
MESSAGE_TYPES = SENDABLE_TYPES


def _validation_error(exc: InvalidNameError) -> ValidationError:
    return ValidationError(f"{exc}.", code=exc.code)


def validate_topic_name(name: object) -> str:
    """Return ``name`` if it is a legal topic name, else raise ValidationError saying why."""
    try:
        return validate_topic(name)
    except InvalidNameError as exc:
        raise _validation_error(exc) from None


def validate_new_topic_name(name: object, broker_topics: Iterable[str] = ()) -> str:
    """A name an admin may create: legal and not a system topic (``broker_topics``: the brokers' own names)."""
    try:
        return validate_new_topic(name, broker_topics)
    except InvalidNameError as exc:
        raise _validation_error(exc) from None


def validate_queue_nums(value: object) -> int:
    """The queue-count rule (:func:`brokers.engine.common.queue_nums.is_valid_queue_nums`) as a ValidationError."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError("must be an integer.", code="invalid")
    if not is_valid_queue_nums(value):
        raise ValidationError(f"must be from {MIN_QUEUE_NUMS} to {MAX_QUEUE_NUMS}, got {value}.", code="range")
    return value


def validate_perm(value: object) -> int:
    """RocketMQ's perm rule (:func:`brokers.engine.common.perm.is_valid_perm`) as a ValidationError."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError("must be an integer.", code="invalid")
    if not is_valid_perm(value):
        raise ValidationError(
            f"must be from {PERM_MIN} to {PERM_MAX} (4 read, 2 write, 1 inherit), got {value}.", code="range"
        )
    return value


def validate_message_type(value: object) -> str:
    if value not in MESSAGE_TYPES:
        raise ValidationError(f"must be one of {', '.join(MESSAGE_TYPES)}, got {value!r}.", code="invalid_choice")
    return value
