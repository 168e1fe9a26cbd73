"""SubscriptionData: one topic subscription of a consumer, as clients send it and brokers keep it.

The JSON form (in HEART_BEAT's ``subscriptionDataSet``, consumer connection and running-info
bodies)::

    {"topic":"T","subString":"TagA || TagB","tagsSet":["TagA","TagB"],"codeSet":[2598919,2598920],
     "subVersion":1700000000000,"expressionType":"TAG","classFilterMode":false}

``codeSet`` holds Java's ``String.hashCode`` of each tag, in the order of ``tagsSet``. A missing
``expressionType`` means TAG (non-Java clients omit it); missing tags are rebuilt from
``subString`` and missing codes from the tags, the way ``FilterAPI.buildSubscriptionData`` builds
them: ``*`` (or nothing) subscribes to every message and has no tags.

Parsing is linear in the input. A broker passes :class:`SubscriptionLimits` (tags per
subscription, expression length): one over them is refused with InvalidSubscriptionError
before any tag is split or hashed, so a request naming 100k tags costs the broker a length
check, not a second of its event loop. Clients parse without limits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from brokers.engine.common.message import tag_hash

__all__ = [
    "EXPRESSION_SQL92",
    "EXPRESSION_TAG",
    "NO_LIMITS",
    "SUB_ALL",
    "InvalidSubscriptionError",
    "SubscriptionData",
    "SubscriptionLimits",
    "build_subscription_data",
    "parse_tags",
]

SUB_ALL = "*"
EXPRESSION_TAG = "TAG"
EXPRESSION_SQL92 = "SQL92"


class InvalidSubscriptionError(ValueError):
    """A subscription body that cannot be understood; the message says why."""


@dataclass(frozen=True, slots=True)
class SubscriptionLimits:
    """Caps on one subscription: tags named, characters of its expression (None: no cap)."""

    max_tags: int | None = None
    max_expression_length: int | None = None

    def check_expression(self, sub_string: str) -> None:
        if self.max_expression_length is not None and len(sub_string) > self.max_expression_length:
            raise InvalidSubscriptionError(
                f"the subscription expression has {len(sub_string)} characters, more than the limit of {self.max_expression_length}"
            )

    def check_tag_count(self, count: int) -> None:
        if self.max_tags is not None and count > self.max_tags:
            raise InvalidSubscriptionError(
                f"the subscription names {count} tags, more than the limit of {self.max_tags}"
            )


NO_LIMITS = SubscriptionLimits()


def parse_tags(sub_string: str | None, limits: SubscriptionLimits = NO_LIMITS) -> tuple[str, ...]:
    """Split a TAG expression as FilterAPI does: ``"TagA || TagB"`` -> ("TagA", "TagB"); ``"*"`` or empty -> ().

    InvalidSubscriptionError when the expression or its tag count (counted before splitting)
    passes ``limits``.
    """
    text = (sub_string or "").strip()
    if not text or text == SUB_ALL:
        return ()
    limits.check_expression(text)
    limits.check_tag_count(text.count("||") + 1)
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

    def to_json(self) -> dict[str, Any]:
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
    def from_json(cls, data: Any, limits: SubscriptionLimits = NO_LIMITS) -> SubscriptionData:
        """Read the JSON form; InvalidSubscriptionError without a topic, with a non-numeric
        subVersion, or past ``limits`` (checked before the tags are read)."""
        if not isinstance(data, dict) or not isinstance(data.get("topic"), str):
            raise InvalidSubscriptionError("a subscription needs a topic")
        expression_type = str(data.get("expressionType") or EXPRESSION_TAG).upper()
        sub_string = str(data.get("subString") if data.get("subString") is not None else SUB_ALL)
        try:
            sub_version = int(data.get("subVersion") or 0)
        except (TypeError, ValueError, OverflowError):
            raise InvalidSubscriptionError(f"subVersion {data.get('subVersion')!r} is not a number") from None
        class_filter_mode = bool(data.get("classFilterMode", False))
        limits.check_expression(sub_string)
        if expression_type != EXPRESSION_TAG:
            return cls(data["topic"], sub_string, (), (), sub_version, expression_type, class_filter_mode)
        tags = data.get("tagsSet")
        if isinstance(tags, list):
            limits.check_tag_count(len(tags))
        tags_set = tuple(str(t) for t in tags) if isinstance(tags, list) and tags else parse_tags(sub_string, limits)
        codes = data.get("codeSet")
        code_set: tuple[int, ...] | None = None
        if isinstance(codes, list) and codes and len(codes) == len(tags_set):
            try:
                code_set = tuple(int(c) for c in codes)
            except (TypeError, ValueError, OverflowError):
                code_set = None
        if code_set is None:
            code_set = tuple(tag_hash(t) for t in tags_set if t != SUB_ALL)
        return cls(data["topic"], sub_string, tags_set, code_set, sub_version, EXPRESSION_TAG, class_filter_mode)


def build_subscription_data(
    topic: str,
    sub_string: str | None,
    expression_type: str | None = EXPRESSION_TAG,
    sub_version: int = 0,
    limits: SubscriptionLimits = NO_LIMITS,
) -> SubscriptionData:
    """Build a subscription from an expression, as ``FilterAPI.build`` does.

    A TAG expression ``a || b`` has the tags ``a`` and ``b`` (trimmed, each once); ``*`` or an
    empty one has none and matches every message. Other types keep the expression as given.
    InvalidSubscriptionError past ``limits``.
    """
    kind = (expression_type or EXPRESSION_TAG).upper()
    limits.check_expression(sub_string or "")
    if kind != EXPRESSION_TAG:
        return SubscriptionData(topic, sub_string or "", (), (), sub_version, kind)
    tags = parse_tags(sub_string, limits)
    if not tags:
        return SubscriptionData(topic, SUB_ALL, (), (), sub_version)
    return SubscriptionData(topic, (sub_string or "").strip(), tags, tuple(tag_hash(t) for t in tags), sub_version)
