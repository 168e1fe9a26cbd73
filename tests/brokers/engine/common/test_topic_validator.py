"""RocketMQ's name rule: 1 to 127 (topics) / 255 (groups) characters of %|a-zA-Z0-9_-, system topics apart."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brokers.engine.common.topic_validator import (
    NOT_ALLOWED_SEND_TOPICS,
    SYSTEM_TOPICS,
    SYSTEM_TOPICS_4_9,
    SYSTEM_TOPICS_5,
    InvalidNameError,
    broker_system_topics,
    is_dlq_topic,
    is_not_allowed_send_topic,
    is_retry_topic,
    is_system_topic,
    validate_broker_name,
    validate_group,
    validate_new_topic,
    validate_topic,
)
from tests.brokers.engine.common.topic_names import ACCEPT, BROKERS, CLUSTER, TOPIC_NAMES, Row, row_id

HERE = broker_system_topics([CLUSTER], BROKERS)


@pytest.mark.parametrize("row", TOPIC_NAMES, ids=row_id)
def test_update_topic_answers_as_rocketmq(row: Row) -> None:
    if row.answer == ACCEPT:
        assert validate_new_topic(row.name, HERE) == row.name
    else:
        with pytest.raises(InvalidNameError):
            validate_new_topic(row.name, HERE)


def test_broker_and_cluster_names_follow_the_topic_rule_and_errors_name_them() -> None:
    """A broker registers its broker and cluster names as topics: the topic rule, the right word."""
    assert validate_broker_name("broker-a") == "broker-a" and validate_broker_name("a" * 127, "cluster") == "a" * 127
    for name, kind, says in (
        ("broker a", "broker", "the broker name contains a space at position 7"),
        ("a" * 128, "broker", "the broker name is 128 characters long, longer than 127"),
        ("", "cluster", "the cluster name is empty"),
        (None, "cluster", "the cluster name must be a string"),
    ):
        with pytest.raises(InvalidNameError) as caught:
            validate_broker_name(name, kind)
        assert str(caught.value).startswith(says), caught.value


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


@pytest.mark.parametrize(
    ("name", "says", "code"),
    [
        ("a b", "a space at position 2", "invalid"),
        ("a..b", "'.' at position 2", "invalid"),
        ("abc\n", "a newline at position 4", "invalid"),
        ("a\x00", "a NUL character at position 2", "invalid"),
        ("１", "U+FF11 FULLWIDTH DIGIT ONE", "invalid"),
        ("", "empty", "blank"),
        ("x" * 128, "128 characters long, longer than 127", "max_length"),
        ("é" * 200, "U+00E9", "invalid"),  # characters first, as TopicValidator checks them
        ("TBW102", "system topic", "reserved"),
    ],
)
def test_the_message_names_the_problem(name: str, says: str, code: str) -> None:
    with pytest.raises(InvalidNameError) as info:
        validate_new_topic(name)
    assert says in str(info.value) and info.value.code == code


def test_group_limit_is_255() -> None:
    assert validate_group("g" * 255)
    with pytest.raises(InvalidNameError):
        validate_group("g" * 256)
    with pytest.raises(InvalidNameError):
        validate_group("g\n")


@pytest.mark.parametrize("name", ["TBW102", "SCHEDULE_TOPIC_XXXX", "rmq_sys_anything", "CHECKPOINT_TOPIC"])
def test_system_topics_are_not_for_users(name: str) -> None:
    assert validate_topic(name) == name
    with pytest.raises(InvalidNameError, match="system topic"):
        validate_new_topic(name)


def test_the_system_sets_of_both_versions() -> None:
    assert len(SYSTEM_TOPICS_4_9) == 9 and SYSTEM_TOPICS_5 - SYSTEM_TOPICS_4_9 == {"CHECKPOINT_TOPIC"}
    assert SYSTEM_TOPICS == SYSTEM_TOPICS_5 and NOT_ALLOWED_SEND_TOPICS < SYSTEM_TOPICS
    assert not is_not_allowed_send_topic("TBW102") and is_not_allowed_send_topic("SCHEDULE_TOPIC_XXXX")


def test_the_brokers_own_names_are_system_topics_only_where_those_brokers_are() -> None:
    assert HERE == {CLUSTER, f"{CLUSTER}_REPLY_TOPIC", *BROKERS}
    assert is_system_topic("broker-a", HERE) and not is_system_topic("broker-a")


def test_retry_and_dlq_topics_are_recognised_and_creatable() -> None:
    assert is_retry_topic("%RETRY%g") and is_dlq_topic("%DLQ%g") and not is_retry_topic("%DLQ%g")
    assert validate_new_topic("%RETRY%g") == "%RETRY%g" and validate_new_topic("%DLQ%g") == "%DLQ%g"


@given(st.text(max_size=140))
def test_the_rule_is_the_regex_and_the_length(name: str) -> None:
    import re

    legal = bool(re.fullmatch(r"[%|a-zA-Z0-9_-]+", name, re.ASCII)) and len(name.encode("utf-16-le")) // 2 <= 127
    try:
        validate_topic(name)
    except InvalidNameError:
        assert not legal
    else:
        assert legal
