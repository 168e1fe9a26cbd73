"""SubscriptionData: one topic subscription of a consumer, as clients send it and brokers keep it.

The JSON form (in HEART_BEAT's ``subscriptionDataSet``, consumer connection and running-info
bodies)::

    {"topic":"T","subString":"TagA || TagB","tagsSet":["TagA","TagB"],"codeSet":[2598919,2598920],
     "subVersion":1700000000000,"expressionType":"TAG","classFilterMode":false}

``codeSet`` holds Java's ``String.hashCode`` of each tag, in the order of ``tagsSet``. A missing
``expressionType`` means TAG (non-Java clients omit it); missing tags are rebuilt from
``subString`` and missing codes from the tags, the way ``FilterAPI.buildSubscriptionData`` builds
them: ``*`` (or nothing) subscribes to every message and has no tags.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from brokers.engine.common.message import tag_hash

__all__ = [
    "EXPRESSION_SQL92", "EXPRESSION_TAG", "SUB_ALL", "InvalidSubscriptionError", "SubscriptionData",
    "build_subscription_data", "parse_tags",
]

SUB_ALL = "*"
EXPRESSION_TAG = "TAG"
EXPRESSION_SQL92 = "SQL92"


class InvalidSubscriptionError(ValueError):
    """A subscription body that cannot be understood; the message says why."""


def parse_tags(sub_string: str | None) -> tuple[str, ...]:
    """Split a TAG expression as FilterAPI does: ``"TagA || TagB"`` -> ("TagA", "TagB"); ``"*"`` or empty -> ()."""
    text = (sub_string or "").strip()
    if not text or text == SUB_ALL:
        return ()
    return tuple(dict.fromkeys(part.strip() for part in text.split("||") if part.strip()))


@dataclass(frozen=True, slots=True)
class SubscriptionData:
    """One topic subscription: the expression, its tags and their hash codes, and its version."""

    topic: str
    sub_string: str = SUB_ALL
    tags_set: tuple[str, ...] = ()
    code_set: tuple[int, ...] = ()
    sub_version: int = 0
    expression_type: str = EXPRESSION_TAG
    class_filter_mode: bool = False

    @property
    def matches_all(self) -> bool:
        return self.expression_type == EXPRESSION_TAG and (not self.tags_set or SUB_ALL in self.tags_set)

    def tag_codes(self) -> set[int] | None:
        """The tag hash codes to filter the consume queue by, or None for "every message"."""
        if self.expression_type != EXPRESSION_TAG or self.matches_all:
            return None
        return set(self.code_set)

    def to_json(self) -> dict:
        return {
            "classFilterMode": self.class_filter_mode,
            "codeSet": list(self.code_set),
            "expressionType": self.expression_type,
            "subString": self.sub_string,
            "subVersion": self.sub_version,
            "tagsSet": list(self.tags_set),
            "topic": self.topic,
        }

    @classmethod
    def from_json(cls, data: Any) -> SubscriptionData:
        """Read the JSON form; InvalidSubscriptionError without a topic or with a non-numeric subVersion."""
        if not isinstance(data, dict) or not isinstance(data.get("topic"), str):
            raise InvalidSubscriptionError("a subscription needs a topic")
        expression_type = str(data.get("expressionType") or EXPRESSION_TAG).upper()
        sub_string = str(data.get("subString") if data.get("subString") is not None else SUB_ALL)
        try:
            sub_version = int(data.get("subVersion") or 0)
        except (TypeError, ValueError):
            raise InvalidSubscriptionError(f"subVersion {data.get('subVersion')!r} is not a number") from None
        class_filter_mode = bool(data.get("classFilterMode", False))
        if expression_type != EXPRESSION_TAG:
            return cls(data["topic"], sub_string, (), (), sub_version, expression_type, class_filter_mode)
        tags = data.get("tagsSet")
        tags_set = tuple(str(t) for t in tags) if isinstance(tags, list) and tags else parse_tags(sub_string)
        codes = data.get("codeSet")
        code_set: tuple[int, ...] | None = None
        if isinstance(codes, list) and codes and len(codes) == len(tags_set):
            try:
                code_set = tuple(int(c) for c in codes)
            except (TypeError, ValueError):
                code_set = None
        if code_set is None:
            code_set = tuple(tag_hash(t) for t in tags_set if t != SUB_ALL)
        return cls(data["topic"], sub_string, tags_set, code_set, sub_version, EXPRESSION_TAG, class_filter_mode)


def build_subscription_data(topic: str, sub_string: str | None, expression_type: str | None = EXPRESSION_TAG,
                            sub_version: int = 0) -> SubscriptionData:
    """Build a subscription from an expression, as ``FilterAPI.build`` does.

    A TAG expression ``a || b`` has the tags ``a`` and ``b`` (trimmed, each once); ``*`` or an
    empty one has none and matches every message. Other types keep the expression as given.
    """
    kind = (expression_type or EXPRESSION_TAG).upper()
    if kind != EXPRESSION_TAG:
        return SubscriptionData(topic, sub_string or "", (), (), sub_version, kind)
    tags = parse_tags(sub_string)
    if not tags:
        return SubscriptionData(topic, SUB_ALL, (), (), sub_version)
    return SubscriptionData(topic, (sub_string or "").strip(), tags, tuple(tag_hash(t) for t in tags), sub_version)
