"""RocketMQ 5's attribute modification rules (AttributeParser, AttributeUtil) and message types."""

from __future__ import annotations

import pytest

from brokers.engine.common.topic_attributes import (
    InvalidAttributeError,
    alter_attributes,
    format_attribute_modification,
    parse_attribute_modification,
)
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.common.topic_message_type import (
    accepted_message_types,
    message_type_conflict,
    message_type_of,
    topic_message_type,
)


def test_parse_and_format_round_trip():
    mods = parse_attribute_modification("+message.type=FIFO,-reserve.time")
    assert mods == {"+message.type": "FIFO", "-reserve.time": ""}
    assert format_attribute_modification(mods) == "+message.type=FIFO,-reserve.time"
    assert parse_attribute_modification(None) == {} == parse_attribute_modification("")


@pytest.mark.parametrize(
    "text, named",
    [
        ("message.type=FIFO", "message.type"),  # a value without '+'
        ("message.type", "message.type"),  # no value and no '-'
        ("+message.type=", "message.type"),  # an empty value
        ("+message.type=FIFO,+message.type=NORMAL", "message.type"),
    ],
)
def test_parse_refuses_naming_the_attribute(text, named):
    with pytest.raises(InvalidAttributeError, match=named.replace(".", r"\.")):
        parse_attribute_modification(text)


def alter(create, current, text):
    return alter_attributes(create=create, current=current, modification=parse_attribute_modification(text))


def test_create_takes_additions_of_every_known_attribute_but_reserve_time():
    assert alter(True, {}, "+message.type=FIFO,+queue.type=BatchCQ,+cleanup.policy=COMPACTION") == {
        "message.type": "FIFO",
        "queue.type": "BatchCQ",
        "cleanup.policy": "COMPACTION",
    }
    for text, named in [
        ("-message.type", "message.type"),
        ("+color=red", "color"),
        ("+message.type=fifo", "message.type"),
        ("+queue.type=Other", "queue.type"),
        ("+reserve.time=10", "reserve.time"),
    ]:
        with pytest.raises(InvalidAttributeError, match=named.replace(".", r"\.")):
            alter(True, {}, text)


def test_update_changes_message_type_and_keeps_creation_only_attributes_fixed():
    current = {"message.type": "FIFO", "queue.type": "SimpleCQ"}
    assert alter(False, current, "+message.type=DELAY") == {"message.type": "DELAY", "queue.type": "SimpleCQ"}
    assert alter(False, current, "-message.type") == {"queue.type": "SimpleCQ"}
    assert alter(False, current, "") == current
    with pytest.raises(InvalidAttributeError, match=r"queue\.type: can be set only when the topic is created"):
        alter(False, current, "+queue.type=SimpleCQ")
    with pytest.raises(InvalidAttributeError, match=r"cleanup\.policy: cannot remove it"):
        alter(False, current, "-cleanup.policy")
    with pytest.raises(InvalidAttributeError, match=r"message\.type"):
        alter(False, current, "+message.type=DELAY,-message.type")


def test_topic_message_type_reads_the_attribute_normal_when_unset():
    assert topic_message_type(TopicConfig("T")) == "NORMAL"
    assert topic_message_type(TopicConfig("T", attributes={"message.type": "FIFO"})) == "FIFO"
    assert topic_message_type(TopicConfig("T", attributes={"message.type": "bogus"})) == "UNSPECIFIED"
    assert topic_message_type(None) == "UNSPECIFIED"


def test_topic_config_json_carries_attributes():
    tc = TopicConfig("T", 4, 4, attributes={"message.type": "TRANSACTION"})
    assert tc.to_json()["attributes"] == {"message.type": "TRANSACTION"}
    assert TopicConfig.from_json(tc.to_json()) == tc
    assert TopicConfig("T").to_json()["attributes"] == {}
    assert TopicConfig.from_json({"topicName": "T"}).attributes == {}  # a 4.x topics.json entry
    assert hash(tc) == hash(TopicConfig("T", 4, 4))  # hashable whatever its attributes


def test_message_types_of_properties_and_the_proxy_rule():
    assert message_type_of({"TRAN_MSG": "true", "DELAY": "3"}) == "TRANSACTION"
    assert message_type_of({"TIMER_DELIVER_MS": "1"}) == "DELAY"
    assert message_type_of({"__SHARDINGKEY": "g1"}) == "FIFO"
    assert message_type_of({"KEYS": "k"}) == "NORMAL"
    assert message_type_conflict("FIFO", "FIFO") is None
    assert message_type_conflict("MIXED", "DELAY") is None
    assert "FIFO" in message_type_conflict("FIFO", "NORMAL")
    assert message_type_conflict("MIXED", "UNSPECIFIED") is not None
    assert accepted_message_types("MIXED") == ("NORMAL", "FIFO", "DELAY", "TRANSACTION")
    assert accepted_message_types("DELAY") == ("DELAY",)
    assert accepted_message_types("UNSPECIFIED") == ("UNSPECIFIED",)
