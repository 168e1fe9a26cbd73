"""The one SubscriptionData: its JSON shape on the wire and FilterAPI's way of building it."""

from __future__ import annotations

import pytest

from brokers.engine.common.message import tag_hash
from brokers.engine.common.subscription import (
    InvalidSubscriptionError,
    SubscriptionData,
    build_subscription_data,
)


def test_the_json_shape_round_trips() -> None:
    sub = build_subscription_data("T", "TagB || TagA || TagB", sub_version=7)
    assert sub.to_json() == {
        "classFilterMode": False,
        "codeSet": [tag_hash("TagB"), tag_hash("TagA")],
        "expressionType": "TAG",
        "subString": "TagB || TagA || TagB",
        "subVersion": 7,
        "tagsSet": ["TagB", "TagA"],
        "topic": "T",
    }
    assert SubscriptionData.from_json(sub.to_json()) == sub


@pytest.mark.parametrize("expression", [None, "", " * ", "*", " || "])
def test_star_or_nothing_matches_every_message_and_has_no_tags(expression) -> None:
    sub = build_subscription_data("T", expression)
    assert sub.sub_string == "*" and sub.tags_set == () and sub.matches_all and sub.tag_codes() is None


def test_missing_tags_and_codes_are_rebuilt_and_the_type_defaults_to_tag() -> None:
    sub = SubscriptionData.from_json({"topic": "T", "subString": "a || b", "subVersion": "3"})
    assert sub.tags_set == ("a", "b") and sub.code_set == (tag_hash("a"), tag_hash("b")) and sub.sub_version == 3
    assert sub.tag_codes() == {tag_hash("a"), tag_hash("b")}


def test_sql92_keeps_its_expression() -> None:
    sub = build_subscription_data("T", "a > 1", "sql92")
    assert (sub.expression_type, sub.sub_string, sub.tag_codes()) == ("SQL92", "a > 1", None)


@pytest.mark.parametrize("body", [{}, {"topic": 5}, [], {"topic": "T", "subVersion": "x"}])
def test_a_body_without_a_topic_or_with_a_bad_version_is_refused(body) -> None:
    with pytest.raises(InvalidSubscriptionError):
        SubscriptionData.from_json(body)
