"""Subscription group writes: create, update, delete, per cluster or per broker, as RocketMQ's
``mqadmin updateSubGroup`` / ``deleteSubGroup`` do. Each checks the actor's role (operator), refuses
bad input (naming the field) before any broker changes, writes to the masters and records an audit
entry with each broker's settings before and after.

Targets: ``cluster`` (every master of it) or ``broker`` (one master), never both. Create needs
one; update without either changes every broker that holds the group. Values: a create, or an
update with ``replace`` (PUT), gives every setting left out RocketMQ's default; a partial update
(PATCH) keeps each broker's current value of a setting left out (a broker that gets the group for
the first time starts from the defaults). System groups (RocketMQ's tool groups) are refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from brokers.gateway.cluster import cluster_info
from brokers.gateway.subscription_groups import (
    SubscriptionGroupConfig,
    subscription_group_delete_on,
    subscription_group_write,
)
from console.actor import Actor
from console.audit import audited
from console.errors import Conflict, InvalidInput, NotFound, one_target
from console.roles import Role
from consumers.rules import checked_group
from consumers.subscription_groups.selectors import (
    BOOL_SETTINGS,
    DEFAULTS,
    RANGES,
    SETTINGS,
    Master,
    SubscriptionGroup,
    masters_of,
    settings_of,
    subscription_group_get,
)
from consumers.types import SYSTEM
from consumers.selectors import group_kind


@dataclass(frozen=True)
class SubscriptionGroupSpec:
    """What to write: the group, where (cluster or broker, or neither for an update), the settings given."""

    name: str
    cluster: str | None = None
    broker: str | None = None
    settings: Mapping[str, bool | int] = field(default_factory=dict)
    replace: bool = True  # settings left out take the defaults (create, PUT); False: each broker keeps its own (PATCH)


@dataclass(frozen=True)
class SubscriptionGroupDeletion:
    name: str
    brokers: tuple[str, ...]  # deleted on
    remove_offsets: bool
    remaining: tuple[str, ...]  # brokers that still hold the group


def checked_settings(settings: Mapping[str, object]) -> dict[str, bool | int]:
    """The settings, each checked (InvalidInput naming the first bad one)."""
    out: dict[str, bool | int] = {}
    for name, value in settings.items():
        if name not in SETTINGS:
            raise InvalidInput(name, "unknown setting.")
        if name in BOOL_SETTINGS:
            if not isinstance(value, bool):
                raise InvalidInput(name, "must be true or false.")
        else:
            low, high = RANGES[name]
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise InvalidInput(name, f"must be an integer within {low}..{high}.")
        out[name] = value
    return out


def _checked_name(name: str) -> str:
    checked_group(name, "name")
    if group_kind(name) == SYSTEM:
        raise InvalidInput("name", f"{name} is a system group; it cannot be changed here.")
    return name


def _targets(masters: dict[str, Master], cluster: str | None, broker: str | None) -> list[Master] | None:
    """The masters named (None when neither cluster nor broker is given); InvalidInput for unknown names."""
    one_target(cluster, broker)
    if cluster is not None:
        clusters = sorted({m.cluster for m in masters.values()})
        if cluster not in clusters:
            raise InvalidInput("cluster", f"unknown cluster {cluster!r}; known: {', '.join(clusters) or 'none'}.")
        return [m for m in masters.values() if m.cluster == cluster]
    if broker is not None:
        if broker not in masters:
            raise InvalidInput("broker", f"unknown broker {broker!r}; known: {', '.join(masters) or 'none'}.")
        return [masters[broker]]
    return None


def _write(name: str, plan: list[tuple[Master, SubscriptionGroupConfig]]) -> None:
    for master, config in plan:
        subscription_group_write(master.addr, config)


def _get_or_none(name: str, info) -> SubscriptionGroup | None:
    try:
        return subscription_group_get(name=name, info=info)
    except NotFound:
        return None


def subscription_group_create(*, actor: Actor, spec: SubscriptionGroupSpec) -> SubscriptionGroup:
    """Create the group on every master of the cluster, or on one broker; Conflict (409) when any master holds it already."""
    actor.require(Role.OPERATOR)
    with audited(actor=actor, action="subscription_group.create", target_type="group", target=spec.name) as note:
        _checked_name(spec.name)
        settings = checked_settings(spec.settings)
        info = cluster_info()
        targets = _targets(masters_of(info), spec.cluster, spec.broker)
        if targets is None:
            raise InvalidInput("cluster", "give a cluster (every master of it) or a broker.")
        if not targets:
            raise InvalidInput("cluster", f"cluster {spec.cluster!r} has no master to write to.")
        existing = _get_or_none(spec.name, info)
        if existing is not None:
            raise Conflict(
                f"subscription group {spec.name} exists already on {', '.join(existing.broker_names)}; edit it instead"
            )
        config = SubscriptionGroupConfig(spec.name, **{**settings_of(DEFAULTS), **settings})
        note.after = {m.broker_name: settings_of(config) for m in targets}
        _write(spec.name, [(m, config) for m in targets])
        group = subscription_group_get(name=spec.name, info=info)
        note.after = group.state()
    return group


def subscription_group_update(*, actor: Actor, spec: SubscriptionGroupSpec) -> SubscriptionGroup:
    """Change the group's settings on the brokers named, or on every broker that holds it (NotFound, 404, when none does)."""
    actor.require(Role.OPERATOR)
    with audited(actor=actor, action="subscription_group.update", target_type="group", target=spec.name) as note:
        _checked_name(spec.name)
        info = cluster_info()
        current = subscription_group_get(name=spec.name, info=info)
        note.before = current.state()
        settings = checked_settings(spec.settings)
        masters = masters_of(info)
        targets = _targets(masters, spec.cluster, spec.broker)
        if targets is None:
            targets = [masters[b] for b in current.broker_names if b in masters]
        if not targets:
            raise InvalidInput("cluster", f"cluster {spec.cluster!r} has no master to write to.")
        plan = []
        for m in targets:
            held = current.on(m.broker_name)
            base = settings_of(DEFAULTS) if spec.replace or held is None else held.settings()
            plan.append((m, SubscriptionGroupConfig(spec.name, **{**base, **settings})))
        _write(spec.name, plan)
        group = subscription_group_get(name=spec.name, info=info)
        note.after = group.state()
    return group


def subscription_group_delete(
    *, actor: Actor, name: str, cluster: str | None = None, broker: str | None = None, remove_offsets: bool = False
) -> SubscriptionGroupDeletion:
    """Delete the group from every broker that holds it, from one cluster's, or from one broker; with
    ``remove_offsets`` its committed offsets there go too (else members that come back resume from them)."""
    actor.require(Role.OPERATOR)
    with audited(actor=actor, action="subscription_group.delete", target_type="group", target=name) as note:
        _checked_name(name)
        info = cluster_info()
        current = subscription_group_get(name=name, info=info)
        note.before = {**current.state(), "remove_offsets": remove_offsets}
        targets = _targets(masters_of(info), cluster, broker)
        if targets is None:
            targets = [m for m in masters_of(info).values() if m.broker_name in current.broker_names]
        else:
            targets = [m for m in targets if m.broker_name in current.broker_names]
            if not targets:
                field_name = "broker" if broker is not None else "cluster"
                raise InvalidInput(field_name, f"subscription group {name} is not on {broker or cluster}.")
        for m in targets:
            subscription_group_delete_on(m.addr, name, remove_offsets)
        deleted = tuple(m.broker_name for m in targets)
        remaining = tuple(b for b in current.broker_names if b not in deleted)
        note.after = {b: s for b, s in current.state().items() if b in remaining}
    return SubscriptionGroupDeletion(name, deleted, remove_offsets, remaining)
