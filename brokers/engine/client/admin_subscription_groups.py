"""Subscription groups on one broker, as plans: read every config, create or update one, delete one.

The three admin requests RocketMQ's ``mqadmin updateSubGroup`` / ``deleteSubGroup`` and its
dashboard use:

- GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201): body ``{"subscriptionGroupTable": {name: config}}``,
  each config in the Java property names of :class:`SubscriptionGroupConfig` (``consumeEnable``,
  ``retryMaxTimes``, ...);
- UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200): body one config as JSON; the broker replaces the
  whole entry (a field left out takes its default);
- DELETE_SUBSCRIPTIONGROUP (207): ext ``groupName`` and ``cleanOffset`` (RocketMQ 4.x:
  ``removeOffset``; both are sent; "true" drops the group's committed offsets on that broker too).

Each is sent to a master's address; the caller picks the brokers (one, or every master of a
cluster). The config is checked (:meth:`SubscriptionGroupConfig.validate`) before anything leaves.
"""

from __future__ import annotations

from brokers.engine.common.subscription_group_config import InvalidSubscriptionGroupError, SubscriptionGroupConfig
from brokers.engine.client.admin_bodies import as_dict, load_object
from brokers.engine.client.plan import Call, Plan, check
from brokers.engine.common import json_compat
from brokers.engine.common.topic_validator import InvalidNameError, validate_group
from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.headers.groups import DeleteSubscriptionGroupRequestHeader

__all__ = [
    "SubscriptionGroupConfig",
    "delete_subscription_group",
    "get_all_subscription_group_config",
    "parse_subscription_group_configs",
    "update_subscription_group",
]


def parse_subscription_group_configs(body: bytes) -> dict[str, SubscriptionGroupConfig]:
    """Group name -> full config of a GET_ALL_SUBSCRIPTIONGROUP_CONFIG body (entries that do not parse are skipped)."""
    table = as_dict(load_object(body).get("subscriptionGroupTable"))
    out: dict[str, SubscriptionGroupConfig] = {}
    for name, entry in table.items():
        entry = as_dict(entry)
        try:
            out[str(name)] = SubscriptionGroupConfig.from_json({"groupName": str(name), **entry})
        except (InvalidSubscriptionGroupError, InvalidNameError, TypeError):
            continue
    return out


def get_all_subscription_group_config(addr: str) -> Plan[dict[str, SubscriptionGroupConfig]]:
    """Every subscription group config the broker at ``addr`` holds."""
    reply = check(
        (yield Call(RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, addr=addr)),
        request_code=RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG,
    )
    return parse_subscription_group_configs(reply.body)


def update_subscription_group(addr: str, config: SubscriptionGroupConfig) -> Plan[None]:
    """Create or replace the group's config on the broker at ``addr``."""
    config.validate()
    body = json_compat.dumps(config.to_json()).encode("utf-8")
    check(
        (yield Call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, body=body, addr=addr)),
        request_code=RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP,
    )


def delete_subscription_group(addr: str, group: str, remove_offset: bool = False) -> Plan[None]:
    """Delete the group's config on the broker at ``addr`` (and its committed offsets there with ``remove_offset``)."""
    validate_group(group)
    ext = DeleteSubscriptionGroupRequestHeader(group_name=group, clean_offset=remove_offset).encode()
    check(
        (yield Call(RequestCode.DELETE_SUBSCRIPTIONGROUP, ext, addr=addr)),
        request_code=RequestCode.DELETE_SUBSCRIPTIONGROUP,
    )
