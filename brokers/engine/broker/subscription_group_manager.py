"""SubscriptionGroupManager: consumer group settings, persisted as ``config/subscriptionGroup.json``.

File format (protocol reference §4.13, §6.7)::

    {"dataVersion":{...},"subscriptionGroupTable":{"g1":{"brokerId":0,"consumeEnable":true,...}}}

Groups are created on their first heartbeat, pull or sendback when
``auto_create_subscription_group`` is on (RocketMQ's default); RocketMQ's own tool groups are
pre-created in memory. Auto-creation stops at ``max_groups`` groups in all (logged, rate-limited;
the admin protocol still creates groups past it). Changes are written by a
:class:`~brokers.engine.broker.config_flusher.ConfigFlusher`: coalesced over ``flush_delay_s`` and
stored in a thread, so a burst of auto-created groups costs one fsync, off the event loop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from brokers.engine.broker.config_file import read_json, write_json_atomic
from brokers.engine.store.file_io import OS_FILE_IO, FileIO
from brokers.engine.broker.config_flusher import ConfigFlusher
from brokers.engine.broker.data_version import DataVersion
from brokers.engine.common.clock import Clock
from brokers.engine.common.subscription_group_config import (  # noqa: F401 (re-exported: the broker's callers)
    BUILTIN_GROUPS,
    InvalidSubscriptionGroupError,
    SubscriptionGroupConfig,
)
from brokers.engine.common.topic_validator import InvalidNameError, validate_group

log = logging.getLogger("brokers.engine.broker")

SUBSCRIPTION_GROUP_FILE = "subscriptionGroup.json"
# (version before, version after, configs written by name, names deleted): one change, for the slaves
DeltaListener = Callable[[DataVersion, DataVersion, dict[str, dict[str, Any]], list[str]], None]


class SubscriptionGroupManager:
    def __init__(
        self,
        config_dir: Path,
        clock: Clock,
        *,
        auto_create: bool = True,
        max_groups: int | None = None,
        flush_delay_s: float = 0.1,
        file_io: FileIO = OS_FILE_IO,
    ) -> None:
        self.file_io = file_io
        self.path = Path(config_dir) / SUBSCRIPTION_GROUP_FILE
        self.clock = clock
        self.auto_create = auto_create
        self.max_groups = max_groups
        self.subscription_group_table: dict[str, SubscriptionGroupConfig] = {}
        self.data_version = DataVersion()
        self.delta_listeners: list[DeltaListener] = []  # the master's ConfigPush (config_push.py)
        self.flusher = ConfigFlusher(self._snapshot, delay_s=flush_delay_s, name=str(self.path))
        self._refused_at = float("-inf")  # last "too many groups" log line

    def load(self) -> None:
        self.subscription_group_table = {g: SubscriptionGroupConfig(g) for g in BUILTIN_GROUPS}
        data = read_json(self.path)
        if not isinstance(data, dict):
            return
        self.data_version = DataVersion.from_json(data.get("dataVersion"))
        table = data.get("subscriptionGroupTable") or {}
        for name, entry in table.items() if isinstance(table, dict) else ():
            try:
                cfg = SubscriptionGroupConfig.from_json(entry).validate()
            except (InvalidNameError, InvalidSubscriptionGroupError, TypeError) as exc:
                log.warning("%s: skipping group %r: %s", self.path, name, exc)
                continue
            self.subscription_group_table[cfg.group_name] = cfg

    def encode(
        self, table: dict[str, SubscriptionGroupConfig] | None = None, version: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        table = self.subscription_group_table if table is None else table
        return {
            "dataVersion": version if version is not None else self.data_version.to_json(),
            "subscriptionGroupTable": {g: c.to_json() for g, c in sorted(table.items())},
        }

    def _snapshot(self) -> Callable[[], None]:
        """Copy the table on the loop (its values are frozen); encode and write it in the flusher's thread."""
        table, version = dict(self.subscription_group_table), self.data_version.to_json()
        return lambda: write_json_atomic(self.path, self.encode(table, version), io=self.file_io)

    def persist(self) -> None:
        """Write the file now (at shutdown; changes are otherwise written by the flusher)."""
        self.flusher.flush_now()

    def find_subscription_group_config(self, group: str) -> SubscriptionGroupConfig | None:
        """Return the group's config, auto-creating it when allowed; None when unknown."""
        cfg = self.subscription_group_table.get(group)
        if cfg is None and self.auto_create:
            try:
                validate_group(group)
            except InvalidNameError:
                return None
            if self.max_groups is not None and len(self.subscription_group_table) >= self.max_groups:
                now = self.clock.monotonic()
                if now - self._refused_at >= 10.0:
                    self._refused_at = now
                    log.warning(
                        "limit subscription-groups: %d groups exist; group %s not auto-created",
                        len(self.subscription_group_table),
                        group,
                    )
                return None
            cfg = SubscriptionGroupConfig(group)
            self.subscription_group_table[group] = cfg
            log.info("auto-created subscription group %s", group)
            self._changed(cfg)
        return cfg

    def update_subscription_group_config(self, cfg: SubscriptionGroupConfig) -> None:
        cfg.validate()
        old = self.subscription_group_table.get(cfg.group_name)
        self.subscription_group_table[cfg.group_name] = cfg
        log.info("subscription group %s: %s -> %s", "updated" if old else "created", old, cfg)
        self._changed(cfg)

    def delete_subscription_group_config(self, group: str) -> SubscriptionGroupConfig | None:
        old = self.subscription_group_table.pop(group, None)
        if old is not None:
            log.info("subscription group deleted: %s", old)
            self._changed(deleted=group)
        return old

    def _changed(self, cfg: SubscriptionGroupConfig | None = None, *, deleted: str | None = None) -> None:
        previous = self.data_version.copy()
        self.data_version.next_version(self.clock)
        self.flusher.request()
        for delta in self.delta_listeners:
            delta(
                previous,
                self.data_version.copy(),
                {cfg.group_name: cfg.to_json()} if cfg is not None else {},
                [deleted] if deleted is not None else [],
            )
