"""argparse types for the mqadmin flags: each rejects a bad value with a message naming the rule."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from brokers.engine.common.perm import PERM_MAX, PERM_MIN, is_valid_perm
from brokers.engine.common.queue_nums import MAX_QUEUE_NUMS, MIN_QUEUE_NUMS, is_valid_queue_nums
from brokers.engine.common.topic_validator import validate_broker_name, validate_group, validate_topic


def _checked_name(validate: Callable[[str], str], what: str) -> Callable[[str], str]:
    """An argparse type: ``validate``'s value, or its reason as an "illegal <what> name" error."""

    def checked(value: str) -> str:
        try:
            return validate(value)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"illegal {what} name: {exc}") from None

    checked.__name__ = f"{what}_name"
    return checked


topic_name = _checked_name(validate_topic, "topic")
broker_name = _checked_name(validate_broker_name, "broker")
group_name = _checked_name(validate_group, "group")


def queue_nums(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"queue number {value!r} is not an integer") from None
    if not is_valid_queue_nums(number):
        raise argparse.ArgumentTypeError(f"queue number {number} is outside {MIN_QUEUE_NUMS}..{MAX_QUEUE_NUMS}")
    return number


def perm_value(value: str) -> int:
    try:
        perm = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"perm {value!r} is not an integer (2 = W, 4 = R, 6 = RW)") from None
    if not is_valid_perm(perm):
        raise argparse.ArgumentTypeError(f"perm {perm} is outside {PERM_MIN}..{PERM_MAX} (2 = W, 4 = R, 6 = RW)")
    return perm


def bool_value(value: str) -> bool:
    text = value.strip().lower()
    if text not in ("true", "false"):
        raise argparse.ArgumentTypeError(f"expected true or false, got {value!r}")
    return text == "true"


def non_negative(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not an integer") from None
    if number < 0:
        raise argparse.ArgumentTypeError(f"{number} is negative")
    return number
