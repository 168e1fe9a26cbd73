"""Subscription groups as first-class objects: each group's config on every master, read live.

A subscription group is what RocketMQ's brokers keep per consumer group (``subscriptionGroup.json``):
whether it may consume, its retry settings and which broker it reads from. Each master holds its
own copy; the console shows them per broker, as they are (GET_ALL_SUBSCRIPTIONGROUP_CONFIG on
every master, all at once). The list of consumer groups (:mod:`consumers.selectors`) reads the
same tables for its consumeEnable.

The settings, their console names and the ranges the console accepts are :data:`SETTINGS` and
:data:`RANGES`: the API serializers, the form and the services read them from here.
"""

from __future__ import annotations

from typing import Any

from dataclasses import dataclass, fields

from django.utils.translation import gettext_noop

from brokers.gateway.cluster import cluster_info
from brokers.gateway.subscription_groups import SubscriptionGroupConfig, all_subscription_group_configs
from brokers.gateway.types import ClusterInfo
from console.errors import NotFound
from consumers.rules import checked_group
from consumers.selectors import group_kind

# console name -> (RocketMQ's name, help text); the order of the form and the table. The help stays English in
# the API; gettext_noop marks it for the catalogue, and the form translates it (subscription_group_forms).
SETTINGS: dict[str, tuple[str, str]] = {
    "consume_enable": (
        "consumeEnable",
        gettext_noop("Members may pull messages; off stops consumption on this broker (messages wait)."),
    ),
    "consume_from_min_enable": (
        "consumeFromMinEnable",
        gettext_noop("A new group starts at the queue's minimum offset rather than its end."),
    ),
    "consume_broadcast_enable": (
        "consumeBroadcastEnable",
        gettext_noop("Broadcasting consumers of the group may consume."),
    ),
    "retry_queue_nums": ("retryQueueNums", gettext_noop("Queues of the group's retry topic %RETRY%<group> (0..1024).")),
    "retry_max_times": (
        "retryMaxTimes",
        gettext_noop("Redeliveries before a message goes to %DLQ%<group> (-1..10000; -1: never retried)."),
    ),
    "broker_id": ("brokerId", gettext_noop("The broker id members pull from: 0 the master, 1.. a slave (0..1024).")),
    "which_broker_when_consume_slowly": (
        "whichBrokerWhenConsumeSlowly",
        gettext_noop("The broker id members pull from while they lag far behind (0..1024; RocketMQ: 1)."),
    ),
    "notify_consumer_ids_changed_enable": (
        "notifyConsumerIdsChangedEnable",
        gettext_noop("The broker tells members when one joins or leaves, so they rebalance at once."),
    ),
}
BOOL_SETTINGS = tuple(k for k in SETTINGS if k.endswith("_enable"))
RANGES: dict[str, tuple[int, int]] = {  # what the console accepts; the broker's own check is looser for the ids
    "retry_queue_nums": (0, 1024),
    "retry_max_times": (-1, 10_000),
    "broker_id": (0, 1024),
    "which_broker_when_consume_slowly": (0, 1024),
}
DEFAULTS = SubscriptionGroupConfig("x")  # RocketMQ's defaults, for a setting left out of a create or replace


def settings_of(config: SubscriptionGroupConfig) -> dict[str, Any]:
    """The console's settings of one broker's config (console names)."""
    return {name: getattr(config, name) for name in SETTINGS}


@dataclass(frozen=True)
class BrokerSubscriptionGroup:
    """One master's copy of a group's config."""

    broker_name: str
    cluster: str
    addr: str
    consume_enable: bool
    consume_from_min_enable: bool
    consume_broadcast_enable: bool
    retry_queue_nums: int
    retry_max_times: int
    broker_id: int
    which_broker_when_consume_slowly: int
    notify_consumer_ids_changed_enable: bool

    @classmethod
    def of(cls, broker_name: str, cluster: str, addr: str, config: SubscriptionGroupConfig) -> BrokerSubscriptionGroup:
        return cls(broker_name, cluster, addr, **settings_of(config))

    def settings(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in SETTINGS}

    def config(self, group: str) -> SubscriptionGroupConfig:
        return SubscriptionGroupConfig(group, **self.settings())


@dataclass(frozen=True)
class SubscriptionGroup:
    """A group and its config on each master that has one (sorted by broker name)."""

    name: str
    kind: str  # user, system (consumers.types)
    brokers: tuple[BrokerSubscriptionGroup, ...]

    @property
    def broker_names(self) -> tuple[str, ...]:
        return tuple(b.broker_name for b in self.brokers)

    @property
    def consume_enable(self) -> bool:
        """False when any broker's copy says so (as the group list shows it)."""
        return all(b.consume_enable for b in self.brokers)

    @property
    def uniform(self) -> bool:
        """Every broker holds the same settings."""
        return len({tuple(b.settings().items()) for b in self.brokers}) <= 1

    def on(self, broker_name: str) -> BrokerSubscriptionGroup | None:
        return next((b for b in self.brokers if b.broker_name == broker_name), None)

    def state(self) -> dict[str, dict[str, bool | int]]:
        """The audit form: broker name -> settings."""
        return {b.broker_name: b.settings() for b in self.brokers}


@dataclass(frozen=True)
class SubscriptionGroupList:
    rows: tuple[SubscriptionGroup, ...]
    total: int  # groups before filtering
    errors: tuple[str, ...] = ()


@dataclass(frozen=True)
class Master:
    broker_name: str
    cluster: str
    addr: str


def masters_of(info: ClusterInfo) -> dict[str, Master]:
    """Broker name -> its master (brokers without one left out), sorted by name."""
    out = {}
    for name in sorted(info.broker_datas):
        data = info.broker_datas[name]
        if data.master_addr:
            out[name] = Master(name, data.cluster, data.master_addr)
    return out


def _read(masters: dict[str, Master]) -> tuple[dict[str, list[BrokerSubscriptionGroup]], list[str]]:
    by_addr = {m.addr: m for m in masters.values()}
    groups: dict[str, list[BrokerSubscriptionGroup]] = {}
    errors = []
    for addr, table in all_subscription_group_configs(by_addr).items():
        m = by_addr[addr]
        if not isinstance(table, dict):
            errors.append(f"broker {m.broker_name} ({addr}) did not answer: {table}")
            continue
        for group, config in table.items():
            groups.setdefault(group, []).append(BrokerSubscriptionGroup.of(m.broker_name, m.cluster, addr, config))
    return groups, errors


def _group(name: str, copies: list[BrokerSubscriptionGroup]) -> SubscriptionGroup:
    return SubscriptionGroup(name, group_kind(name), tuple(sorted(copies, key=lambda b: b.broker_name)))


def subscription_group_list(*, search: str = "", kinds: frozenset[str] | None = None) -> SubscriptionGroupList:
    """Every subscription group any master holds, with each master's settings; ``search`` matches a part
    of the name (case-insensitive), ``kinds`` keeps user and/or system groups."""
    groups, errors = _read(masters_of(cluster_info()))
    needle = search.strip().lower()
    rows = tuple(
        _group(name, groups[name])
        for name in sorted(groups)
        if (not needle or needle in name.lower()) and (not kinds or group_kind(name) in kinds)
    )
    return SubscriptionGroupList(rows, len(groups), tuple(errors))


def subscription_group_get(*, name: str, info: ClusterInfo | None = None) -> SubscriptionGroup:
    """One group with its settings on each master that holds it; NotFound (404) when none does."""
    checked_group(name, "name")
    groups, errors = _read(masters_of(info or cluster_info()))
    if name not in groups:
        suffix = f" ({'; '.join(errors)})" if errors else ""
        raise NotFound(f"no master holds a subscription group named {name}{suffix}")
    return _group(name, groups[name])


assert [f.name for f in fields(BrokerSubscriptionGroup)][3:] == list(SETTINGS)  # one list of settings
