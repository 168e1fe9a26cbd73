"""TopicConfigManager: the broker's topic table, persisted as ``config/topics.json``.

File format (RocketMQ's TopicConfigSerializeWrapper, protocol reference §6.7)::

    {"dataVersion":{"counter":12,"timestamp":1700000000000},
     "topicConfigTable":{"TopicTest":{"order":false,"perm":6,"readQueueNums":4,...},...}}

At start the broker's own topics are created (§6.8): SELF_TEST_TOPIC, the cluster-name and
broker-name topics, OFFSET_MOVED_EVENT, SCHEDULE_TOPIC_XXXX (18 queues, one per delay level),
the transaction half/op topics, ``<cluster>_REPLY_TOPIC``, RMQ_SYS_TRACE_TOPIC (``trace_topic_enable``), and TBW102 (perm 7, the template of
automatic topic creation, §7.6) only when ``auto_create_topic_enable`` is on. Every change bumps
the DataVersion, is written to disk at once, and tells the change listeners (the controller
re-registers with the name servers).

A write that fails (a full disk: ENOSPC) is logged, not raised, as RocketMQ's
``ConfigManager.persist`` does: the change stays in memory and takes effect (a send that
auto-created its topic goes on to the store, which answers for itself), and the controller calls
:meth:`TopicConfigManager.retry_persist` every few seconds until the file is written (and writes
it at a clean stop). The old file stays whole meanwhile (``write_json_atomic``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from brokers.engine.broker.config import BrokerConfig
from brokers.engine.broker.config_file import read_json, write_json_atomic
from brokers.engine.store.file_io import OS_FILE_IO, FileIO
from brokers.engine.broker.data_version import DataVersion
from brokers.engine.common.clock import Clock
from brokers.engine.common.constants import (
    AUTO_CREATE_TOPIC_KEY_TOPIC,
    OFFSET_MOVED_EVENT,
    RMQ_SYS_TRANS_HALF_TOPIC,
    RMQ_SYS_TRANS_OP_HALF_TOPIC,
    SCHEDULE_TOPIC,
    SELF_TEST_TOPIC,
)
from brokers.engine.common.perm import PERM_INHERIT, PERM_READ, PERM_RW, PERM_WRITE, is_inherited
from brokers.engine.common.topic_config import InvalidTopicConfigError, TopicConfig
from brokers.engine.common.topic_validator import (
    InvalidNameError,
    broker_system_topics,
    is_system_topic,
    validate_topic,
)

log = logging.getLogger("brokers.engine.broker")

TOPICS_FILE = "topics.json"
SCHEDULE_QUEUE_NUMS = 18  # one queue per delay level (messageDelayLevel has 18 entries)

ChangeListener = Callable[[TopicConfig | None], None]
# (version before, version after, configs written by name, names deleted): one change, for the slaves
DeltaListener = Callable[[DataVersion, DataVersion, dict[str, dict[str, Any]], list[str]], None]


class TopicConfigManager:
    def __init__(self, config: BrokerConfig, config_dir: Path, clock: Clock, *, file_io: FileIO = OS_FILE_IO) -> None:
        self.config = config
        self.file_io = file_io
        self.path = Path(config_dir) / TOPICS_FILE
        self.clock = clock
        self.topic_config_table: dict[str, TopicConfig] = {}
        self.data_version = DataVersion()
        self._listeners: list[ChangeListener] = []
        self.delta_listeners: list[DeltaListener] = []  # the master's ConfigPush (config_push.py)
        self.persist_pending = False  # a change is not on disk yet (its write failed)
        # Topics made at start from the broker's own names are system topics too (Java adds
        # them to TopicValidator's set): admins may neither create nor delete them.
        self.broker_system_topics = broker_system_topics([config.cluster_name], [config.broker_name])

    # -- lifecycle ----------------------------------------------------------------------------

    def load(self) -> None:
        """Create the system topics, then overlay what topics.json holds."""
        self.topic_config_table = {tc.topic_name: tc for tc in self._system_topic_configs()}
        data = read_json(self.path)
        if isinstance(data, dict):
            self.data_version = DataVersion.from_json(data.get("dataVersion"))
            table = data.get("topicConfigTable") or {}
            for name, entry in table.items() if isinstance(table, dict) else ():
                try:
                    tc = TopicConfig.from_json(entry).validate()
                    validate_topic(tc.topic_name)
                except (InvalidNameError, InvalidTopicConfigError, KeyError, TypeError, ValueError) as exc:
                    log.warning("%s: skipping topic %r: %s", self.path, name, exc)
                    continue
                self.topic_config_table[tc.topic_name] = tc
        template = self.topic_config_table.get(AUTO_CREATE_TOPIC_KEY_TOPIC)
        if self.config.auto_create_topic_enable:
            if template is None or not is_inherited(template.perm):
                self.topic_config_table[AUTO_CREATE_TOPIC_KEY_TOPIC] = self._auto_create_template()
        elif template is not None and is_inherited(template.perm):
            # A leftover template must not invite producers to auto-create (§7.6).
            self.topic_config_table[AUTO_CREATE_TOPIC_KEY_TOPIC] = template.with_changes(
                perm=template.perm & ~PERM_INHERIT
            )
        self.data_version.next_version(self.clock)
        self._persist_or_retry_later()

    def _auto_create_template(self) -> TopicConfig:
        n = self.config.default_topic_queue_nums
        return TopicConfig(AUTO_CREATE_TOPIC_KEY_TOPIC, n, n, PERM_RW | PERM_INHERIT)

    def _system_topic_configs(self) -> list[TopicConfig]:
        cluster, broker = self.config.cluster_name, self.config.broker_name
        configs = [
            TopicConfig(SELF_TEST_TOPIC, 1, 1, PERM_RW),
            TopicConfig(cluster, 16, 16, PERM_RW | PERM_INHERIT),
            TopicConfig(broker, 1, 1, PERM_RW | PERM_INHERIT),
            TopicConfig(OFFSET_MOVED_EVENT, 1, 1, PERM_RW),
            TopicConfig(SCHEDULE_TOPIC, SCHEDULE_QUEUE_NUMS, SCHEDULE_QUEUE_NUMS, PERM_RW),
            TopicConfig(RMQ_SYS_TRANS_HALF_TOPIC, 1, 1, PERM_RW),
            TopicConfig(RMQ_SYS_TRANS_OP_HALF_TOPIC, 1, 1, PERM_RW),
            TopicConfig(f"{cluster}_REPLY_TOPIC", 1, 1, PERM_RW),
        ]
        if self.config.trace_topic_enable and self.config.msg_trace_topic_name:
            # traceTopicEnable: message trace records (one queue, as RocketMQ's TopicConfigManager makes it)
            configs.append(TopicConfig(self.config.msg_trace_topic_name, 1, 1, PERM_RW))
        if self.config.auto_create_topic_enable:
            configs.append(self._auto_create_template())
        return configs

    def persist(self) -> None:
        """Write topics.json now; raises OSError (a full disk) and leaves the old file whole."""
        write_json_atomic(self.path, self.build_serialize_wrapper(), io=self.file_io)
        self.persist_pending = False

    def _persist_or_retry_later(self) -> None:
        try:
            self.persist()
        except OSError as exc:
            if not self.persist_pending:
                log.error(
                    "writing %s failed: %s; the topic table stays in memory and the write is retried", self.path, exc
                )
            self.persist_pending = True

    def retry_persist(self) -> bool:
        """Write topics.json if a change's write failed earlier; True when it is on disk now."""
        if not self.persist_pending:
            return False
        self._persist_or_retry_later()
        if not self.persist_pending:
            log.info("%s written after an earlier failure", self.path)
        return not self.persist_pending

    # -- reads --------------------------------------------------------------------------------

    def select_topic_config(self, topic: str) -> TopicConfig | None:
        return self.topic_config_table.get(topic)

    def is_system_topic(self, topic: str) -> bool:
        return is_system_topic(topic, self.broker_system_topics)

    def build_serialize_wrapper(self) -> dict[str, Any]:
        """TopicConfigSerializeWrapper: topics.json content, GET_ALL_TOPIC_CONFIG and registration body."""
        return {
            "dataVersion": self.data_version.to_json(),
            "topicConfigTable": {name: tc.to_json() for name, tc in sorted(self.topic_config_table.items())},
        }

    # -- writes -------------------------------------------------------------------------------

    def add_change_listener(self, listener: ChangeListener) -> None:
        self._listeners.append(listener)

    def _changed(self, tc: TopicConfig | None, *, notify: bool = True, deleted: str | None = None) -> None:
        previous = self.data_version.copy()
        self.data_version.next_version(self.clock)
        self._persist_or_retry_later()
        for delta in self.delta_listeners:
            delta(
                previous,
                self.data_version.copy(),
                {tc.topic_name: tc.to_json()} if tc is not None else {},
                [deleted] if deleted is not None else [],
            )
        if notify:
            for listener in self._listeners:
                try:
                    listener(tc)
                except Exception:
                    log.exception("topic change listener failed")

    def update_topic_config(self, tc: TopicConfig, *, notify: bool = False) -> TopicConfig:
        """Insert or replace a topic (already validated by the caller) and persist."""
        validate_topic(tc.topic_name)
        tc.validate()
        old = self.topic_config_table.get(tc.topic_name)
        self.topic_config_table[tc.topic_name] = tc
        log.info("topic config %s: %s -> %s", "updated" if old else "created", old, tc)
        self._changed(tc, notify=notify)
        return tc

    def delete_topic_config(self, topic: str) -> TopicConfig | None:
        old = self.topic_config_table.pop(topic, None)
        if old is not None:
            log.info("topic config deleted: %s", old)
            self._changed(None, notify=False, deleted=topic)
        return old

    def create_topic_in_send_message_method(
        self, topic: str, default_topic: str | None, client_default_topic_queue_nums: int, topic_sys_flag: int = 0
    ) -> TopicConfig | None:
        """Auto-create ``topic`` from its template on a producer's first send (§7.6), or return None.

        Only when ``auto_create_topic_enable`` is on and the template has the INHERIT bit:
        queues = min(client default, template write queues), perm = template perm without
        INHERIT, filter type copied.
        """
        existing = self.topic_config_table.get(topic)
        if existing is not None:
            return existing
        tc = self.build_auto_create_config(topic, default_topic, client_default_topic_queue_nums, topic_sys_flag)
        if tc is None:
            return None
        self.topic_config_table[topic] = tc
        log.info("auto-created topic %s from template %s", tc, default_topic)
        self._changed(tc)
        return tc

    def build_auto_create_config(
        self, topic: str, default_topic: str | None, client_default_topic_queue_nums: int, topic_sys_flag: int = 0
    ) -> TopicConfig | None:
        """The config an auto-created ``topic`` would get (nothing is stored), or None if not allowed."""
        if not self.config.auto_create_topic_enable or not default_topic:
            return None
        template = self.topic_config_table.get(default_topic)
        if template is None or not is_inherited(template.perm):
            return None
        validate_topic(topic)
        queue_nums = max(0, min(int(client_default_topic_queue_nums), template.write_queue_nums))
        if queue_nums == 0:
            return None
        return TopicConfig(
            topic, queue_nums, queue_nums, template.perm & ~PERM_INHERIT, template.topic_filter_type, topic_sys_flag
        )

    def create_topic_in_send_message_back_method(
        self, topic: str, queue_nums: int, perm: int = PERM_READ | PERM_WRITE, topic_sys_flag: int = 0
    ) -> TopicConfig:
        """Return ``topic`` (a retry or DLQ topic), creating it with ``queue_nums`` queues when missing."""
        existing = self.topic_config_table.get(topic)
        if existing is not None:
            return existing
        validate_topic(topic)
        tc = TopicConfig(topic, queue_nums, queue_nums, perm, "SINGLE_TAG", topic_sys_flag).validate()
        self.topic_config_table[topic] = tc
        log.info("created topic %s", tc)
        self._changed(tc)
        return tc
