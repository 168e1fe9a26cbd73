"""A subscription's property filter (SQL92) for PULL_MESSAGE and CHECK_CLIENT_CONFIG, with RocketMQ's answers.

TAG subscriptions (the type TAG, empty or missing) have no property filter: the consume queue's
tag codes do their filtering. Any other type needs ``enable_property_filter`` (RocketMQ's
enablePropertyFilter); without it both requests answer ``1 SYSTEM_ERROR`` with Apache's remark
``The broker does not support consumer to filter message by SQL92``. With it, the expression is
compiled once (``brokers/engine/filter/selector_cache.py``); one that does not compile, or a type
other than SQL92, answers ``23 SUBSCRIPTION_PARSE_FAILED`` naming the problem
(``Invalid MessageSelector. unexpected 'b' at line 1, column 7 ...``). Nothing changes on a refusal.
"""

from __future__ import annotations

from brokers.engine.broker.processors.base import RequestError
from brokers.engine.common.subscription import EXPRESSION_TAG, SubscriptionData
from brokers.engine.filter.errors import InvalidSelectorError
from brokers.engine.filter.selector_cache import compile_expression
from brokers.engine.filter.sql92_eval import CompiledSelector
from brokers.engine.remoting.codes import ResponseCode
from brokers.engine.store.message_store import MessageFilter

__all__ = ["compiled_filter", "is_tag_type", "pull_message_filter"]

INVALID_SELECTOR = "Invalid MessageSelector."  # the start of RocketMQ's MQFilterException message


def is_tag_type(expression_type: str | None) -> bool:
    """RocketMQ's ExpressionType.isTagType: TAG, or no type at all."""
    return not expression_type or expression_type.strip().upper() == EXPRESSION_TAG


def compiled_filter(expression_type: str, expression: str | None, *, enabled: bool) -> CompiledSelector:
    """The compiled filter of a non-TAG expression; RequestError with RocketMQ's code when refused."""
    kind = expression_type.strip().upper()
    if not enabled:
        raise RequestError(
            ResponseCode.SYSTEM_ERROR,
            f"The broker does not support consumer to filter message by {kind} (enablePropertyFilter is false)",
        )
    try:
        return compile_expression(kind, expression or "")
    except InvalidSelectorError as exc:
        raise RequestError(ResponseCode.SUBSCRIPTION_PARSE_FAILED, f"{INVALID_SELECTOR} {exc}") from None


def pull_message_filter(subscription: SubscriptionData, *, enabled: bool) -> MessageFilter | None:
    """What a pull hands the store as ``message_filter``: None for a TAG subscription, else the
    compiled selector's ``matches`` (RequestError when filtering is off or the expression is bad)."""
    if is_tag_type(subscription.expression_type):
        return None
    return compiled_filter(subscription.expression_type, subscription.sub_string, enabled=enabled).matches
