"""HeartbeatData and SubscriptionData: what clients tell the broker about themselves.

HEART_BEAT body (protocol reference §4.6)::

    {"clientID":"192.168.0.5@12345#81516278012345",
     "consumerDataSet":[{"groupName":"g1","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING",
                         "consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","unitMode":false,
                         "subscriptionDataSet":[{"topic":"T","subString":"TagA || TagB","tagsSet":[...],
                                                 "codeSet":[...],"subVersion":1700000000000,
                                                 "expressionType":"TAG","classFilterMode":false}]}],
     "producerDataSet":[{"groupName":"CLIENT_INNER_PRODUCER"}]}

Note the capital ``ID`` in ``clientID``. A missing ``expressionType`` means TAG (non-Java
clients omit it); a missing ``codeSet`` is rebuilt from the tags.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from brokers.engine.common.message import tag_hash

SUB_ALL = "*"
EXPRESSION_TAG = "TAG"
EXPRESSION_SQL92 = "SQL92"


class InvalidHeartbeatError(ValueError):
    """A heartbeat or subscription body that cannot be understood; the message says why."""


@dataclass(frozen=True, slots=True)
class SubscriptionData:
    topic: str
    sub_string: str = SUB_ALL
    tags_set: tuple[str, ...] = ()
    code_set: frozenset[int] = frozenset()
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
            "codeSet": sorted(self.code_set),
            "expressionType": self.expression_type,
            "subString": self.sub_string,
            "subVersion": self.sub_version,
            "tagsSet": list(self.tags_set),
            "topic": self.topic,
        }

    @classmethod
    def from_json(cls, data: Any) -> SubscriptionData:
        if not isinstance(data, dict) or not isinstance(data.get("topic"), str):
            raise InvalidHeartbeatError("a subscription needs a topic")
        expression_type = str(data.get("expressionType") or EXPRESSION_TAG).upper()
        sub_string = str(data.get("subString") if data.get("subString") is not None else SUB_ALL)
        try:
            sub_version = int(data.get("subVersion") or 0)
        except (TypeError, ValueError):
            raise InvalidHeartbeatError(f"subVersion {data.get('subVersion')!r} is not a number") from None
        if expression_type != EXPRESSION_TAG:
            return cls(data["topic"], sub_string, (), frozenset(), sub_version, expression_type, bool(data.get("classFilterMode")))
        tags = data.get("tagsSet")
        if isinstance(tags, list) and tags:
            tags_set = tuple(str(t) for t in tags)
        else:
            tags_set = parse_tags(sub_string)
        codes = data.get("codeSet")
        if isinstance(codes, list) and codes and len(codes) == len(tags_set):
            try:
                code_set = frozenset(int(c) for c in codes)
            except (TypeError, ValueError):
                code_set = frozenset(tag_hash(t) for t in tags_set)
        else:
            code_set = frozenset(tag_hash(t) for t in tags_set if t != SUB_ALL)
        return cls(data["topic"], sub_string, tags_set, code_set, sub_version, EXPRESSION_TAG, bool(data.get("classFilterMode")))


def parse_tags(sub_string: str | None) -> tuple[str, ...]:
    """Split a TAG expression: ``"TagA || TagB"`` -> ("TagA", "TagB"); ``"*"``/empty -> ("*",)."""
    if sub_string is None or not sub_string.strip() or sub_string.strip() == SUB_ALL:
        return (SUB_ALL,)
    tags: list[str] = []
    for part in sub_string.split("||"):
        tag = part.strip()
        if tag and tag not in tags:
            tags.append(tag)
    return tuple(tags) or (SUB_ALL,)


def build_subscription_data(topic: str, sub_string: str | None, expression_type: str | None, sub_version: int = 0) -> SubscriptionData:
    """Build a subscription from a pull request's expression (PULL_MESSAGE with sysFlag bit 2)."""
    kind = (expression_type or EXPRESSION_TAG).upper()
    if kind != EXPRESSION_TAG:
        return SubscriptionData(topic, sub_string or "", (), frozenset(), sub_version, kind)
    tags = parse_tags(sub_string)
    codes = frozenset(tag_hash(t) for t in tags if t != SUB_ALL)
    return SubscriptionData(topic, sub_string or SUB_ALL, tags, codes, sub_version, EXPRESSION_TAG)


@dataclass(frozen=True, slots=True)
class ConsumerData:
    group_name: str
    consume_type: str = "CONSUME_PASSIVELY"
    message_model: str = "CLUSTERING"
    consume_from_where: str = "CONSUME_FROM_LAST_OFFSET"
    subscriptions: tuple[SubscriptionData, ...] = ()
    unit_mode: bool = False


@dataclass(frozen=True, slots=True)
class HeartbeatData:
    client_id: str
    producer_groups: tuple[str, ...] = ()
    consumers: tuple[ConsumerData, ...] = field(default_factory=tuple)

    @classmethod
    def from_json(cls, data: Any) -> HeartbeatData:
        if not isinstance(data, dict):
            raise InvalidHeartbeatError("the heartbeat body is not a JSON object")
        client_id = data.get("clientID") or data.get("clientId")
        if not isinstance(client_id, str) or not client_id:
            raise InvalidHeartbeatError("the heartbeat body has no clientID")
        producers = []
        for item in data.get("producerDataSet") or ():
            if isinstance(item, dict) and isinstance(item.get("groupName"), str) and item["groupName"]:
                producers.append(item["groupName"])
        consumers = []
        for item in data.get("consumerDataSet") or ():
            if not isinstance(item, dict) or not isinstance(item.get("groupName"), str) or not item["groupName"]:
                raise InvalidHeartbeatError("a consumerDataSet entry has no groupName")
            subs = tuple(SubscriptionData.from_json(s) for s in item.get("subscriptionDataSet") or ())
            consumers.append(
                ConsumerData(
                    group_name=item["groupName"],
                    consume_type=str(item.get("consumeType") or "CONSUME_PASSIVELY"),
                    message_model=str(item.get("messageModel") or "CLUSTERING"),
                    consume_from_where=str(item.get("consumeFromWhere") or "CONSUME_FROM_LAST_OFFSET"),
                    subscriptions=subs,
                    unit_mode=bool(item.get("unitMode", False)),
                )
            )
        return cls(client_id, tuple(producers), tuple(consumers))
