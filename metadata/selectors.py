"""Reads of the metadata tools: the export, and the dry run of an import (what it would change).

Export (:func:`metadata_export`) reads every topic table and subscription group table of the
masters in scope (all at once, through brokers.gateway) and merges them as ``mqadmin
exportMetadata -c`` does: one entry per name, the largest read and write queue counts (and retry
queues and times) of any broker, the other properties of the first broker by name. System topics
and groups are left out; retry and DLQ topics only with ``include_special`` (mqadmin's ``-s``).

Dry run (:func:`metadata_plan`) compares a document with what each target master holds now:
per topic and group ``create`` (no target holds it), ``update`` (with each broker's changed
properties, before and after) or ``unchanged``. An import never deletes and never shrinks: a
queue count lower than a broker's is kept at the broker's (shrinking hides messages; the shrink
page does it safely), and the plan says so. The plan's ``plan_id`` digests the writes and the
state they start from: apply refuses a plan whose state changed since its dry run.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from brokers.engine.common.constants import DLQ_GROUP_TOPIC_PREFIX, RETRY_GROUP_TOPIC_PREFIX
from brokers.engine.common.subscription_group_config import SubscriptionGroupConfig
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.common.topic_validator import broker_system_topics, is_system_topic
from brokers.gateway.cluster import cluster_info
from brokers.gateway.types import ClusterInfo
from brokers.gateway.subscription_groups import all_subscription_group_configs
from brokers.gateway.topics import all_topic_configs
from console.errors import InvalidInput, Unavailable, one_target
from metadata.document import GROUPS, TOPICS, MetadataDocument, Skipped, is_system_group

CREATE, UPDATE, UNCHANGED = "create", "update", "unchanged"
QUEUE_PROPS = ("readQueueNums", "writeQueueNums")


@dataclass(frozen=True)
class Master:
    broker_name: str
    cluster: str
    addr: str


@dataclass(frozen=True)
class Scope:
    """The masters an export reads or an import writes: a cluster's, one broker, or every one."""

    label: str  # "cluster DefaultCluster", "broker broker-a", "every cluster"
    masters: tuple[Master, ...]
    broker_topics: frozenset[str]  # topics the brokers make from their own names (system topics)


@dataclass(frozen=True)
class FieldChange:
    broker: str
    field: str  # RocketMQ's property name
    before: Any  # None: the broker does not hold the object yet
    after: Any

    @property
    def shown(self) -> tuple[str, str]:
        """Before and after as the JSON document writes them (true, not True)."""
        return json.dumps(self.before), json.dumps(self.after)


@dataclass(frozen=True)
class Write:
    """One write of the import: a topic or group config to one master."""

    broker: str
    addr: str
    config: TopicConfig | SubscriptionGroupConfig


@dataclass(frozen=True)
class ObjectChange:
    kind: str  # topic, group
    name: str
    action: str  # create, update, unchanged
    changes: tuple[FieldChange, ...]
    notes: tuple[str, ...]
    writes: tuple[Write, ...]


@dataclass(frozen=True)
class ImportPlan:
    target: str
    brokers: tuple[str, ...]
    objects: tuple[ObjectChange, ...]
    skipped: tuple[Skipped, ...]
    plan_id: str

    def count(self, action: str) -> int:
        return sum(1 for o in self.objects if o.action == action)

    @property
    def counts(self) -> dict[str, int]:
        return {a: self.count(a) for a in (CREATE, UPDATE, UNCHANGED)} | {"skipped": len(self.skipped)}

    @property
    def writes(self) -> tuple[Write, ...]:
        return tuple(w for o in self.objects for w in o.writes)


def metadata_scope(
    *, cluster: str | None = None, broker: str | None = None, info: ClusterInfo | None = None, default_all: bool = True
) -> Scope:
    """The masters named by ``cluster`` or ``broker`` (InvalidInput for unknown ones); neither: every
    master (``default_all``) or, for an import, the only cluster when there is one."""
    info = info or cluster_info()
    masters = [
        Master(name, data.cluster, data.master_addr)
        for name, data in sorted(info.broker_datas.items())
        if data.master_addr
    ]
    system = broker_system_topics(info.clusters, info.broker_datas)
    clusters = sorted(info.clusters)
    one_target(cluster or None, broker or None)
    if broker:
        chosen = [m for m in masters if m.broker_name == broker]
        if not chosen:
            raise InvalidInput(
                "broker",
                f"unknown broker {broker!r} (or it has no master); known: {', '.join(m.broker_name for m in masters) or 'none'}.",
            )
        return Scope(f"broker {broker}", tuple(chosen), system)
    if not cluster and not default_all:
        if len(clusters) != 1:
            raise InvalidInput(
                "cluster", f"give a cluster or a broker to import into; clusters: {', '.join(clusters) or 'none'}."
            )
        cluster = clusters[0]
    if cluster:
        if cluster not in info.clusters:
            raise InvalidInput("cluster", f"unknown cluster {cluster!r}; known: {', '.join(clusters) or 'none'}.")
        chosen = [m for m in masters if m.cluster == cluster]
        if not chosen:
            raise InvalidInput("cluster", f"cluster {cluster!r} has no master.")
        return Scope(f"cluster {cluster}", tuple(chosen), system)
    return Scope("every cluster", tuple(masters), system)


def _tables(scope: Scope) -> tuple[dict[str, dict[str, TopicConfig]], dict[str, dict[str, SubscriptionGroupConfig]]]:
    """Broker name -> its topic table and its group table; Unavailable (503) when a master does not answer."""
    by_addr = {m.addr: m.broker_name for m in scope.masters}
    topics, groups = all_topic_configs(by_addr), all_subscription_group_configs(by_addr)
    for table in (topics, groups):
        failed = [f"{by_addr[a]} ({a}): {t}" for a, t in table.items() if not isinstance(t, dict)]
        if failed:
            raise Unavailable(f"a master did not answer, nothing was compared: {'; '.join(failed)}")
    return ({by_addr[a]: t for a, t in topics.items()}, {by_addr[a]: g for a, g in groups.items()})  # type: ignore[misc]


def _special(topic: str) -> bool:
    return topic.startswith((RETRY_GROUP_TOPIC_PREFIX, DLQ_GROUP_TOPIC_PREFIX))


def metadata_export(*, scope: Scope, include_special: bool = False, now_ms: int | None = None) -> dict[str, Any]:
    """The scope's topics and groups as RocketMQ's exportMetadata JSON, merged across its masters."""
    topic_tables, group_tables = _tables(scope)
    topics: dict[str, TopicConfig] = {}
    for broker in sorted(topic_tables):
        for name, config in topic_tables[broker].items():
            if is_system_topic(name, scope.broker_topics) or (_special(name) and not include_special):
                continue
            seen = topics.get(name)
            topics[name] = (
                config
                if seen is None
                else seen.with_changes(
                    read_queue_nums=max(seen.read_queue_nums, config.read_queue_nums),
                    write_queue_nums=max(seen.write_queue_nums, config.write_queue_nums),
                )
            )
    groups: dict[str, dict[str, Any]] = {}
    for broker in sorted(group_tables):
        for name, group in group_tables[broker].items():
            if is_system_group(name):
                continue
            entry = groups.setdefault(name, group.to_json())
            for prop in ("retryQueueNums", "retryMaxTimes"):
                entry[prop] = max(entry[prop], group.to_json()[prop])
    return {
        TOPICS: {n: topics[n].to_json() for n in sorted(topics)},
        GROUPS: {n: groups[n] for n in sorted(groups)},
        "exportTime": int(time.time() * 1000) if now_ms is None else now_ms,
    }


def _topic_change(wanted: TopicConfig, scope: Scope, tables: dict[str, dict[str, TopicConfig]]) -> ObjectChange:
    changes, notes, writes = [], [], []
    for m in scope.masters:
        held = tables[m.broker_name].get(wanted.topic_name)
        config = wanted
        if held is not None:
            config = wanted.with_changes(
                read_queue_nums=max(wanted.read_queue_nums, held.read_queue_nums),
                write_queue_nums=max(wanted.write_queue_nums, held.write_queue_nums),
            )
            for prop, mine, theirs in (
                ("readQueueNums", wanted.read_queue_nums, held.read_queue_nums),
                ("writeQueueNums", wanted.write_queue_nums, held.write_queue_nums),
            ):
                if mine < theirs:
                    notes.append(
                        f"{m.broker_name}: {prop} stays {theirs} (the file says {mine}; an import never shrinks, "
                        "use the topic's shrink page)"
                    )
        before, after = (held.to_json() if held else {}), config.to_json()
        # attributes (RocketMQ 5's message.type, ...) are not imported: a write leaves a topic's as they are
        diff = [
            FieldChange(m.broker_name, p, before.get(p), v)
            for p, v in after.items()
            if p not in ("topicName", "attributes") and before.get(p) != v
        ]
        if diff:
            changes.extend(diff)
            writes.append(Write(m.broker_name, m.addr, config))
    return _change("topic", wanted.topic_name, tables, changes, notes, writes)


def _group_change(
    wanted: SubscriptionGroupConfig, scope: Scope, tables: dict[str, dict[str, SubscriptionGroupConfig]]
) -> ObjectChange:
    changes, writes = [], []
    for m in scope.masters:
        held = tables[m.broker_name].get(wanted.group_name)
        before, after = (held.to_json() if held else {}), wanted.to_json()
        diff = [
            FieldChange(m.broker_name, p, before.get(p), v)
            for p, v in after.items()
            if p != "groupName" and before.get(p) != v
        ]
        if diff:
            changes.extend(diff)
            writes.append(Write(m.broker_name, m.addr, wanted))
    return _change("group", wanted.group_name, tables, changes, [], writes)


def _change(kind: str, name: str, tables: dict[str, dict], changes: list, notes: list, writes: list) -> ObjectChange:
    held_anywhere = any(name in t for t in tables.values())
    action = UNCHANGED if not writes else (UPDATE if held_anywhere else CREATE)
    return ObjectChange(kind, name, action, tuple(changes), tuple(notes), tuple(writes))


def _plan_id(objects: list[ObjectChange]) -> str:
    """A digest of every write (each change names its broker) and the state it starts from: the same dry run
    gives the same id, and any change of the brokers' state in between a different one."""
    state = [[o.kind, o.name, o.action, [[c.broker, c.field, c.before, c.after] for c in o.changes]] for o in objects]
    return hashlib.sha256(json.dumps(state, sort_keys=True).encode()).hexdigest()[:32]


def metadata_plan(*, document: MetadataDocument, scope: Scope) -> ImportPlan:
    """The dry run of importing ``document`` into ``scope``: per object what would change, nothing written."""
    topic_tables, group_tables = _tables(scope)
    skipped = list(document.skipped)
    objects = []
    for topic in document.topics:
        if is_system_topic(topic.topic_name, scope.broker_topics):
            skipped.append(Skipped("topic", topic.topic_name, "a system topic of these brokers"))
        else:
            objects.append(_topic_change(topic, scope, topic_tables))
    objects.extend(_group_change(group, scope, group_tables) for group in document.groups)
    return ImportPlan(
        scope.label, tuple(m.broker_name for m in scope.masters), tuple(objects), tuple(skipped), _plan_id(objects)
    )
