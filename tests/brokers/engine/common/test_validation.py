"""RocketMQ's name rule: 1 to 127 (topics) / 255 (groups) characters of %|a-zA-Z0-9_-."""
from __future__ import annotations

import pytest

from brokers.engine.common.validation import (
    InvalidNameError,
    validate_group,
    validate_topic,
    validate_user_topic,
)


@pytest.mark.parametrize("name", ["T", "a" * 127, "%RETRY%g", "a|b", "Topic_1-x"])
def test_legal_topics_pass(name: str) -> None:
    assert validate_topic(name) == name


@pytest.mark.parametrize(
    "name",
    ["", "a" * 128, "abc\n", "a b", "a/b", "..", "a\x00", "\uff11\uff12", "zażółć", "a.b", None, 5],
)
def test_illegal_topics_are_refused(name: object) -> None:
    with pytest.raises(InvalidNameError):
        validate_topic(name)


def test_group_limit_is_255() -> None:
    assert validate_group("g" * 255)
    with pytest.raises(InvalidNameError):
        validate_group("g" * 256)
    with pytest.raises(InvalidNameError):
        validate_group("g\n")


@pytest.mark.parametrize("name", ["TBW102", "SCHEDULE_TOPIC_XXXX", "rmq_sys_anything"])
def test_system_topics_are_not_for_users(name: str) -> None:
    assert validate_topic(name) == name
    with pytest.raises(InvalidNameError, match="system topic"):
        validate_user_topic(name)
