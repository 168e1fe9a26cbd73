"""HeartbeatData: what clients tell the broker about themselves (SubscriptionData is brokers.engine.common.subscription's).

HEART_BEAT body (protocol reference §4.6)::

    {"clientID":"192.168.0.5@12345#81516278012345",
     "consumerDataSet":[{"groupName":"g1","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING",
                         "consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","unitMode":false,
                         "subscriptionDataSet":[{"topic":"T","subString":"TagA || TagB","tagsSet":[...],
                                                 "codeSet":[...],"subVersion":1700000000000,
                                                 "expressionType":"TAG","classFilterMode":false}]}],
     "producerDataSet":[{"groupName":"CLIENT_INNER_PRODUCER"}]}

Note the capital ``ID`` in ``clientID``. Subscriptions are read by
:meth:`brokers.engine.common.subscription.SubscriptionData.from_json`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from brokers.engine.common.subscription import (  # SUB_ALL, EXPRESSION_*, build_subscription_data re-exported
    EXPRESSION_SQL92 as EXPRESSION_SQL92,
    EXPRESSION_TAG as EXPRESSION_TAG,
    SUB_ALL as SUB_ALL,
    NO_LIMITS as NO_LIMITS,
    InvalidSubscriptionError as InvalidSubscriptionError,
    SubscriptionData as SubscriptionData,
    SubscriptionLimits as SubscriptionLimits,
    build_subscription_data as build_subscription_data,
)


class InvalidHeartbeatError(ValueError):
    """A heartbeat or subscription body that cannot be understood; the message says why."""


@dataclass(frozen=True, slots=True)
class HeartbeatLimits:
    """What one heartbeat may name, counted before any entry is read (the broker's config names them)."""

    max_groups: int = 1_000  # max_heartbeat_groups: producer groups, and consumer groups, each
    max_subscriptions: int = 10_000  # max_heartbeat_subscriptions: of all consumer groups together


NO_HEARTBEAT_LIMITS = HeartbeatLimits(max_groups=1 << 62, max_subscriptions=1 << 62)


def _check_counts(data: dict[str, Any], limits: HeartbeatLimits) -> None:
    """InvalidHeartbeatError naming the limit when the body names more groups or subscriptions than allowed."""
    producers, consumers = data.get("producerDataSet") or [], data.get("consumerDataSet") or []
    for what, items in (("producer", producers), ("consumer", consumers)):
        if not isinstance(items, list):
            raise InvalidHeartbeatError(f"{what}DataSet is not a list")
        if len(items) > limits.max_groups:
            raise InvalidHeartbeatError(
                f"the heartbeat names {len(items)} {what} groups, more than the limit of "
                f"{limits.max_groups} (max_heartbeat_groups)"
            )
    subscriptions = sum(
        len(item.get("subscriptionDataSet") or ())
        for item in consumers
        if isinstance(item, dict) and isinstance(item.get("subscriptionDataSet") or (), list)
    )
    if subscriptions > limits.max_subscriptions:
        raise InvalidHeartbeatError(
            f"the heartbeat names {subscriptions} subscriptions, more than the limit of "
            f"{limits.max_subscriptions} (max_heartbeat_subscriptions)"
        )


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
    def from_json(
        cls,
        data: Any,
        limits: SubscriptionLimits = NO_LIMITS,
        max_total_tags: int | None = None,
        counts: HeartbeatLimits = NO_HEARTBEAT_LIMITS,
    ) -> HeartbeatData:
        """Read a heartbeat body; ``limits`` caps each subscription, ``max_total_tags`` the tags of
        all of them and ``counts`` its groups and subscriptions (all counted before any is parsed:
        the work of one heartbeat stays bounded)."""
        if not isinstance(data, dict):
            raise InvalidHeartbeatError("the heartbeat body is not a JSON object")
        _check_counts(data, counts)
        client_id = data.get("clientID") or data.get("clientId")
        if not isinstance(client_id, str) or not client_id:
            raise InvalidHeartbeatError("the heartbeat body has no clientID")
        producers = []
        for item in data.get("producerDataSet") or ():
            if isinstance(item, dict) and isinstance(item.get("groupName"), str) and item["groupName"]:
                producers.append(item["groupName"])
        consumers = []
        if max_total_tags is not None:
            _check_total_tags(data.get("consumerDataSet"), max_total_tags)
        for item in data.get("consumerDataSet") or ():
            if not isinstance(item, dict) or not isinstance(item.get("groupName"), str) or not item["groupName"]:
                raise InvalidHeartbeatError("a consumerDataSet entry has no groupName")
            try:
                subs = tuple(SubscriptionData.from_json(s, limits) for s in item.get("subscriptionDataSet") or ())
            except InvalidSubscriptionError as exc:
                raise InvalidHeartbeatError(str(exc)) from None
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


def _check_total_tags(consumer_data_set: Any, max_total_tags: int) -> None:
    """InvalidHeartbeatError when the subscriptions name more than ``max_total_tags`` tags in all."""
    total = 0
    for item in consumer_data_set if isinstance(consumer_data_set, list) else ():
        subs = item.get("subscriptionDataSet") if isinstance(item, dict) else None
        for sub in subs if isinstance(subs, list) else ():
            if isinstance(sub, dict):
                tags, text = sub.get("tagsSet"), sub.get("subString")
                total += (
                    len(tags)
                    if isinstance(tags, list) and tags
                    else (text.count("||") + 1 if isinstance(text, str) else 1)
                )
        if total > max_total_tags:
            raise InvalidHeartbeatError(f"the heartbeat's subscriptions name more than {max_total_tags} tags in all")
