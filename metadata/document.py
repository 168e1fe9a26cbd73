"""The metadata document: RocketMQ's ``mqadmin exportMetadata`` JSON, read and written.

RocketMQ's ExportMetadataCommand (4.9.x, 5.x) writes one JSON object::

    {
      "topicConfigTable": {"<topic>": {"topicName": ..., "readQueueNums": 8, "writeQueueNums": 8,
                                       "perm": 6, "topicFilterType": "SINGLE_TAG", "topicSysFlag": 0,
                                       "order": false}},
      "subscriptionGroupTable": {"<group>": {"groupName": ..., "consumeEnable": true,
                                             "consumeFromMinEnable": true, "consumeBroadcastEnable": true,
                                             "retryQueueNums": 1, "retryMaxTimes": 16, "brokerId": 0,
                                             "whichBrokerWhenConsumeSlowly": 1,
                                             "notifyConsumerIdsChangedEnable": true,
                                             "consumeMessageOrderly": false}},
      "exportTime": 1700000000000
    }

Reading it (:func:`parse_document`) checks every entry before anything is planned: a refusal
names the field as ``topicConfigTable.<name>.<property>`` and changes nothing. Keys an import
does not apply (5.x's ``attributes``, ``groupRetryPolicy``, a per-broker file's ``dataVersion``)
are ignored; an export writes each topic's ``attributes`` as the brokers hold them. System topics and groups are set aside as skipped, with the reason; retry and DLQ
topics are imported like any other (what ``updateTopic`` allows).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from brokers.engine.common.perm import PERM_MAX, PERM_MIN, is_valid_perm
from brokers.engine.common.queue_nums import MAX_QUEUE_NUMS, MIN_QUEUE_NUMS, is_valid_queue_nums
from brokers.engine.common.subscription_group_config import BUILTIN_GROUPS, SubscriptionGroupConfig
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.common.topic_validator import InvalidNameError, is_system_topic, validate_group, validate_topic
from console.errors import InvalidInput

TOPICS, GROUPS = "topicConfigTable", "subscriptionGroupTable"
# The console's body limit (settings.MAX_BODY_BYTES, 256 KiB) bounds the upload first; a document
# is refused above this, which leaves room for the form's other fields (about 1,500 topics).
MAX_DOCUMENT_BYTES = 240 * 1024
MAX_OBJECTS = 2000  # topics plus groups in one document: a dry run reads and compares each
MAX_ERRORS = 20  # refusals listed at once (the rest wait for the next try)
FILTER_TYPES = ("SINGLE_TAG", "MULTI_TAG")
# RocketMQ property -> (console range) of the integer settings of a group; booleans need true/false
GROUP_RANGES: dict[str, tuple[int, int]] = {
    "retryQueueNums": (0, 1024),
    "retryMaxTimes": (-1, 10_000),
    "brokerId": (0, 1024),
    "whichBrokerWhenConsumeSlowly": (0, 1024),
}
GROUP_BOOLS = (
    "consumeEnable",
    "consumeFromMinEnable",
    "consumeBroadcastEnable",
    "notifyConsumerIdsChangedEnable",
    "consumeMessageOrderly",
)  # the last: RocketMQ 5's FIFO groups


@dataclass(frozen=True)
class Skipped:
    """An entry the import leaves alone, and why."""

    kind: str  # topic, group
    name: str
    reason: str


@dataclass(frozen=True)
class MetadataDocument:
    """The checked definitions of one document, sorted by name."""

    topics: tuple[TopicConfig, ...]
    groups: tuple[SubscriptionGroupConfig, ...]
    skipped: tuple[Skipped, ...] = ()
    export_time: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The document in RocketMQ's form (what the apply step sends back)."""
        out: dict[str, Any] = {
            TOPICS: {t.topic_name: t.to_json() for t in self.topics},
            GROUPS: {g.group_name: g.to_json() for g in self.groups},
        }
        if self.export_time is not None:
            out["exportTime"] = self.export_time
        return out


def is_system_group(name: str) -> bool:
    """RocketMQ's tool groups and ``CID_RMQ_SYS_`` groups (MixAll.isSysConsumerGroup)."""
    return name in BUILTIN_GROUPS or name.startswith("CID_RMQ_SYS_")


class _Errors:
    """Refusals collected while reading, raised together as one InvalidInput."""

    def __init__(self) -> None:
        self.fields: dict[str, list[str]] = {}

    def add(self, field: str, reason: str) -> None:
        if len(self.fields) < MAX_ERRORS:
            self.fields.setdefault(field, []).append(reason)

    def raise_any(self) -> None:
        if self.fields:
            first, reasons = next(iter(self.fields.items()))
            error = InvalidInput(first, reasons[0])
            error.fields = dict(self.fields)
            raise error


def load_document(raw: bytes | str, field: str = "file") -> Any:
    """The JSON of an upload, bounded: InvalidInput naming ``field`` when too large or not JSON."""
    size = len(raw.encode("utf-8") if isinstance(raw, str) else raw)
    if size > MAX_DOCUMENT_BYTES:
        raise InvalidInput(field, f"the document is {size} bytes; the limit is {MAX_DOCUMENT_BYTES} bytes.")
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise InvalidInput(field, f"not JSON: {exc}.") from None


def _int(errors: _Errors, field: str, value: object, low: int, high: int) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        errors.add(field, f"must be an integer from {low} to {high}, got {value!r}.")
        return None
    return value


def _queue_nums(errors: _Errors, field: str, value: object) -> int | None:
    if not is_valid_queue_nums(value):
        errors.add(field, f"must be an integer from {MIN_QUEUE_NUMS} to {MAX_QUEUE_NUMS}, got {value!r}.")
        return None
    return value


def _topic(errors: _Errors, name: str, entry: Mapping[str, Any]) -> TopicConfig | None:
    at = f"{TOPICS}.{name}"
    before = len(errors.fields)
    if entry.get("topicName", name) != name:
        errors.add(f"{at}.topicName", f"must be the entry's key {name!r}, got {entry.get('topicName')!r}.")
    read = _queue_nums(errors, f"{at}.readQueueNums", entry.get("readQueueNums", 16))
    write = _queue_nums(errors, f"{at}.writeQueueNums", entry.get("writeQueueNums", 16))
    perm = entry.get("perm", 6)
    if not is_valid_perm(perm):
        errors.add(
            f"{at}.perm",
            f"unknown perm {perm!r}: an integer from {PERM_MIN} to {PERM_MAX} (4 read, 2 write, 1 inherit).",
        )
    filter_type = entry.get("topicFilterType", "SINGLE_TAG")
    if filter_type not in FILTER_TYPES:
        errors.add(f"{at}.topicFilterType", f"must be SINGLE_TAG or MULTI_TAG, got {filter_type!r}.")
    sys_flag = _int(errors, f"{at}.topicSysFlag", entry.get("topicSysFlag", 0), 0, 2**31 - 1)
    order = entry.get("order", False)
    if not isinstance(order, bool):
        errors.add(f"{at}.order", f"must be true or false, got {order!r}.")
    if len(errors.fields) > before or read is None or write is None or sys_flag is None:
        return None
    return TopicConfig(name, read, write, perm, filter_type, sys_flag, order)


def _group(errors: _Errors, name: str, entry: Mapping[str, Any]) -> SubscriptionGroupConfig | None:
    at = f"{GROUPS}.{name}"
    before = len(errors.fields)
    if entry.get("groupName", name) != name:
        errors.add(f"{at}.groupName", f"must be the entry's key {name!r}, got {entry.get('groupName')!r}.")
    defaults = SubscriptionGroupConfig(name).to_json()
    values: dict[str, Any] = {"groupName": name}
    for prop in GROUP_BOOLS:
        value = entry.get(prop, defaults[prop])
        if not isinstance(value, bool):
            errors.add(f"{at}.{prop}", f"must be true or false, got {value!r}.")
        values[prop] = value
    for prop, (low, high) in GROUP_RANGES.items():
        values[prop] = _int(errors, f"{at}.{prop}", entry.get(prop, defaults[prop]), low, high)
    if len(errors.fields) > before:
        return None
    return SubscriptionGroupConfig.from_json(values)


def _table(errors: _Errors, data: Mapping[str, Any], key: str) -> dict[str, Any]:
    table = data.get(key, {})
    if not isinstance(table, dict):
        errors.add(key, f"must be an object of name -> definition, got {type(table).__name__}.")
        return {}
    return table


def _name(errors: _Errors, key: str, name: str, validate) -> bool:
    try:
        validate(name)
    except InvalidNameError as exc:
        errors.add(f"{key}.{name}", f"{exc}.")
        return False
    return True


def parse_document(data: Any, broker_topics: Iterable[str] = ()) -> MetadataDocument:
    """Check a decoded document; InvalidInput naming every bad field (up to MAX_ERRORS), nothing half-read.

    ``broker_topics`` are the topics the brokers make from their own names (skipped as system topics).
    """
    errors = _Errors()
    if not isinstance(data, dict):
        raise InvalidInput(
            "metadata", f"must be a JSON object with {TOPICS} and/or {GROUPS}, got {type(data).__name__}."
        )
    if TOPICS not in data and GROUPS not in data:
        raise InvalidInput("metadata", f"has neither {TOPICS} nor {GROUPS}: not an exportMetadata document.")
    topic_table, group_table = _table(errors, data, TOPICS), _table(errors, data, GROUPS)
    errors.raise_any()
    count = len(topic_table) + len(group_table)
    if count > MAX_OBJECTS:
        raise InvalidInput("metadata", f"holds {count} topics and groups; the limit is {MAX_OBJECTS} per import.")
    system_names = frozenset(broker_topics)
    topics, groups, skipped = [], [], []
    for name in sorted(topic_table):
        entry = topic_table[name]
        if not isinstance(entry, dict):
            errors.add(f"{TOPICS}.{name}", f"must be an object, got {type(entry).__name__}.")
        elif _name(errors, TOPICS, name, validate_topic):
            if is_system_topic(name, system_names):
                skipped.append(Skipped("topic", name, "a system topic: the brokers make their own"))
            elif (config := _topic(errors, name, entry)) is not None:
                topics.append(config)
    for name in sorted(group_table):
        entry = group_table[name]
        if not isinstance(entry, dict):
            errors.add(f"{GROUPS}.{name}", f"must be an object, got {type(entry).__name__}.")
        elif _name(errors, GROUPS, name, validate_group):
            if is_system_group(name):
                skipped.append(Skipped("group", name, "a system group: the brokers make their own"))
            elif (group_config := _group(errors, name, entry)) is not None:
                groups.append(group_config)
    export_time = data.get("exportTime")
    if export_time is not None and (isinstance(export_time, bool) or not isinstance(export_time, int)):
        errors.add("exportTime", f"must be milliseconds since the epoch, got {export_time!r}.")
    errors.raise_any()
    return MetadataDocument(tuple(topics), tuple(groups), tuple(skipped), export_time)
