"""The topic input rules shared by the console form and the API (no cluster, no database)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from hypothesis import given
from hypothesis import strategies as st

from brokers.engine.common.topic_validator import validate_topic  # the engine's rule, which this one adapts
from topics.rules import validate_new_topic_name, validate_perm, validate_queue_nums, validate_topic_name


@pytest.mark.parametrize("name", ["Orders", "a", "x" * 127, "%RETRY%group", "%DLQ%group", "a|b", "A-b_9"])
def test_legal_names_pass(name: str) -> None:
    assert validate_topic_name(name) == name


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("a b", "a space at position 2"),
        ("a..b", "'.' at position 2"),
        ("a/b", "'/' at position 2"),
        ("a\x00", "a NUL character"),
        ("abc\n", "a newline at position 4"),
        ("１", "U+FF11 FULLWIDTH DIGIT ONE"),
        ("é", "U+00E9"),
        ("", "empty"),
        ("x" * 128, "128 characters"),
    ],
)
def test_look_alikes_are_refused_with_the_reason(name: str, says: str) -> None:
    with pytest.raises(ValidationError) as info:
        validate_topic_name(name)
    assert says in info.value.messages[0]


@given(st.text(min_size=1, max_size=130))
def test_the_rule_never_lets_through_what_the_engine_refuses(name: str) -> None:
    try:
        validate_topic_name(name)
    except ValidationError:
        return
    validate_topic(name)  # raises if the engine's rule disagrees
    assert name.isascii() and "\n" not in name


@pytest.mark.parametrize("name", ["TBW102", "SCHEDULE_TOPIC_XXXX", "rmq_sys_x", "CHECKPOINT_TOPIC"])
def test_system_topics_cannot_be_created(name: str) -> None:
    validate_topic_name(name)
    with pytest.raises(ValidationError, match="system topic"):
        validate_new_topic_name(name)


@pytest.mark.parametrize("name", ["%RETRY%g", "%DLQ%g"])
def test_retry_and_dlq_topics_can_be_created_as_with_rocketmq(name: str) -> None:
    assert validate_new_topic_name(name) == name


def test_the_brokers_own_names_cannot_be_created() -> None:
    with pytest.raises(ValidationError, match="system topic"):
        validate_new_topic_name("broker-a", {"broker-a"})


@pytest.mark.parametrize("value", [-1, 1025, -3, "8", 8.0, True, None])
def test_queue_counts_are_integers_from_0_to_1024(value) -> None:
    """0 as RocketMQ takes it (brokers/engine/common/queue_nums.py): write queues lowered to 0 stop producers."""
    with pytest.raises(ValidationError):
        validate_queue_nums(value)
    assert [validate_queue_nums(v) for v in (0, 1, 1024)] == [0, 1, 1024]


@pytest.mark.parametrize("value", [-1, 8, "6", 6.0, False])
def test_perm_is_an_integer_from_0_to_7(value) -> None:
    with pytest.raises(ValidationError):
        validate_perm(value)
    assert [validate_perm(v) for v in range(8)] == list(range(8))
