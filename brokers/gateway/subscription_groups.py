"""Subscription group configs through the shared admin client: every master's table at once, writes per broker.

The plans are :mod:`brokers.engine.client.admin_subscription_groups`; here they run on the console's
client (its ACL keys, TLS and timeouts).
"""

from __future__ import annotations

from collections.abc import Iterable

from brokers.engine.client.admin_subscription_groups import (
    SubscriptionGroupConfig,
    delete_subscription_group,
    parse_subscription_group_configs,
    update_subscription_group,
)
from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.errors import RemotingError
from brokers.gateway.client import answered, fanout_to_brokers, run

__all__ = [
    "SubscriptionGroupConfig",
    "all_subscription_group_configs",
    "subscription_group_delete_on",
    "subscription_group_write",
]


def all_subscription_group_configs(
    addrs: Iterable[str],
) -> dict[str, dict[str, SubscriptionGroupConfig] | RemotingError]:
    """Each broker's subscription group table (GET_ALL_SUBSCRIPTIONGROUP_CONFIG), one request per broker, all at once."""
    out: dict[str, dict[str, SubscriptionGroupConfig] | RemotingError] = {}
    for addr, reply in run(fanout_to_brokers(RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, addrs)).items():
        answer = answered(reply, RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG)
        out[addr] = answer if isinstance(answer, RemotingError) else parse_subscription_group_configs(answer.body)
    return out


def subscription_group_write(addr: str, config: SubscriptionGroupConfig) -> None:
    """UPDATE_AND_CREATE_SUBSCRIPTIONGROUP on one broker."""
    run(update_subscription_group(addr, config))


def subscription_group_delete_on(addr: str, group: str, remove_offset: bool) -> None:
    """DELETE_SUBSCRIPTIONGROUP on one broker."""
    run(delete_subscription_group(addr, group, remove_offset))
