"""Request headers as typed classes: every declared header through real frames of both serialize
types, and the refusals that name the field."""

from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import dataclass, field

import pytest

from brokers.engine.remoting import headers
from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.command import SERIALIZE_JSON, SERIALIZE_ROCKETMQ, RemotingCommand
from brokers.engine.remoting.errors import RemotingCommandError
from brokers.engine.remoting.headers import RequestHeader, header_fields, wire
from brokers.engine.remoting.headers import consume, groups, messages, offsets, produce, topics  # noqa: F401
from brokers.engine.remoting.headers.groups import DeleteSubscriptionGroupRequestHeader
from brokers.engine.remoting.headers.messages import QueryMessageRequestHeader
from brokers.engine.remoting.headers.offsets import ResetOffsetRequestHeader, UpdateConsumerOffsetRequestHeader

HEADER_MODULES = [  # every module of the package: a new one is checked without being named here
    importlib.import_module(f"{headers.__name__}.{info.name}")
    for info in pkgutil.iter_modules(headers.__path__)
    if info.name != "base"
]
HEADER_CLASSES = [
    c
    for m in HEADER_MODULES
    for c in (getattr(m, n) for n in m.__all__)
    if isinstance(c, type) and issubclass(c, RequestHeader)
]


def _sample(cls: type[RequestHeader]) -> RequestHeader:
    values: dict[str, object] = {}
    for f in header_fields(cls):
        values[f.attr] = {str: f"v-{f.attr}", int: -(1 << 40) - 7, bool: True}[f.kind]
    return cls(**values)


def _through_frame(header: RequestHeader, serialize_type: int) -> RemotingCommand:
    request = RemotingCommand.request(RequestCode.GET_MAX_OFFSET, header.encode())
    request.serialize_type = serialize_type
    return RemotingCommand.decode_frame(request.encode())


@pytest.mark.parametrize("serialize_type", [SERIALIZE_JSON, SERIALIZE_ROCKETMQ], ids=["json", "rocketmq"])
@pytest.mark.parametrize("cls", HEADER_CLASSES, ids=lambda c: c.__name__)
def test_every_header_round_trips_through_a_frame(cls: type[RequestHeader], serialize_type: int) -> None:
    header = _sample(cls)
    assert cls.decode(_through_frame(header, serialize_type)) == header


@pytest.mark.parametrize("cls", HEADER_CLASSES, ids=lambda c: c.__name__)
def test_only_required_fields_decode_to_the_defaults(cls: type[RequestHeader]) -> None:
    sample = _sample(cls)
    required = {f.attr: getattr(sample, f.attr) for f in header_fields(cls) if f.required}
    ext = {f.name: sample.encode()[f.name] for f in header_fields(cls) if f.required}
    assert cls.decode(ext) == cls(**required)


def test_wire_format_is_javas() -> None:
    header = UpdateConsumerOffsetRequestHeader(
        topic="T", queue_id=3, consumer_group="G", commit_offset=(1 << 62), broker_name="b1"
    )
    assert header.encode() == {
        "topic": "T",
        "queueId": "3",
        "bname": "b1",
        "consumerGroup": "G",
        "commitOffset": str(1 << 62),
    }
    reset = ResetOffsetRequestHeader(topic="T", group="G", timestamp=-1, is_force=False)
    assert reset.encode() == {"topic": "T", "group": "G", "timestamp": "-1", "isForce": "false", "queueId": "-1"}
    query = QueryMessageRequestHeader(topic="T", key="k", max_num=1, begin_timestamp=0, end_timestamp=9)
    assert query.encode()["_UNIQUE_KEY_QUERY"] == "false"


def test_missing_required_field_is_named() -> None:
    with pytest.raises(RemotingCommandError) as caught:
        UpdateConsumerOffsetRequestHeader.decode({"topic": "T", "queueId": "0", "consumerGroup": "G"})
    assert str(caught.value) == "the custom field <commitOffset> is missing"
    assert caught.value.field == "commitOffset"


def test_empty_value_counts_as_missing() -> None:
    with pytest.raises(RemotingCommandError, match=r"^the custom field <topic> is missing$"):
        topics.DeleteTopicRequestHeader.decode({"topic": ""})
    assert groups.GetConsumeStatsRequestHeader.decode({"consumerGroup": "G", "topic": ""}).topic is None


@pytest.mark.parametrize("value", ["many", "1.5", "0x10", ""])
def test_bad_int_is_named(value: str) -> None:
    ext = {"topic": "T", "queueId": "0", "consumerGroup": "G", "commitOffset": value}
    if value == "":
        with pytest.raises(RemotingCommandError, match="<commitOffset> is missing"):
            UpdateConsumerOffsetRequestHeader.decode(ext)
        return
    with pytest.raises(RemotingCommandError) as caught:
        UpdateConsumerOffsetRequestHeader.decode(ext)
    assert str(caught.value) == f"the custom field <commitOffset> is not an integer: {value!r}"
    assert caught.value.field == "commitOffset"


def test_bad_optional_int_is_named_too() -> None:
    with pytest.raises(RemotingCommandError, match=r"<queueId> is not an integer: 'x'"):
        ResetOffsetRequestHeader.decode({"topic": "T", "group": "G", "timestamp": "0", "queueId": "x"})


@pytest.mark.parametrize(("text", "expected"), [("true", True), ("TRUE", True), (" True ", True), ("yes", False)])
def test_booleans_parse_like_javas_parse_boolean(text: str, expected: bool) -> None:
    decoded = ResetOffsetRequestHeader.decode({"topic": "T", "group": "G", "timestamp": "0", "isForce": text})
    assert decoded.is_force is expected


def test_older_name_is_read_and_written() -> None:
    old = DeleteSubscriptionGroupRequestHeader.decode({"groupName": "G", "removeOffset": "true"})
    assert old.clean_offset is True
    assert DeleteSubscriptionGroupRequestHeader.decode({"groupName": "G", "cleanOffset": "true"}).clean_offset
    assert DeleteSubscriptionGroupRequestHeader(group_name="G", clean_offset=True).encode() == {
        "groupName": "G",
        "cleanOffset": "true",
        "removeOffset": "true",
    }


def test_unknown_fields_are_ignored() -> None:
    decoded = topics.GetTopicStatsInfoRequestHeader.decode({"topic": "T", "ns": "x", "lo": "true"})
    assert decoded == topics.GetTopicStatsInfoRequestHeader(topic="T")


def test_a_field_of_another_type_is_refused_at_first_use() -> None:
    @dataclass(frozen=True, slots=True, kw_only=True)
    class Odd(RequestHeader):
        ratio: float = field(default=0.5, metadata=wire("r"))

    with pytest.raises(TypeError, match="Odd.ratio"):
        Odd().encode()


def test_the_docstring_lists_exactly_the_declared_codes() -> None:
    doc = headers.__doc__ or ""
    converted = doc.split("Converted")[1].split("Not yet converted")[0]
    listed = {RequestCode[name] for name in re.findall(r"\b([A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9])\b", converted)}
    declared = {code for cls in HEADER_CLASSES for code in cls.CODES}
    assert declared == listed - {RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP}


def test_send_v2_uses_one_letter_keys_and_names_a_bad_field_as_v1_does() -> None:
    header = produce.SendMessageRequestHeaderV2(topic="T", queue_id=3, batch=True, broker_name="b")
    ext = header.encode()
    assert (ext["b"], ext["e"], ext["m"], ext["n"]) == ("T", "3", "true", "b") and "topic" not in ext
    assert isinstance(produce.SendMessageRequestHeaderV2.decode(ext), produce.SendMessageRequestHeader)
    with pytest.raises(RemotingCommandError, match=r"^the custom field <queueId> is not an integer: 'zero'$"):
        produce.SendMessageRequestHeaderV2.decode({**ext, "e": "zero"})
