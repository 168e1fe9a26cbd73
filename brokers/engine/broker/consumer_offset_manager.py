"""ConsumerOffsetManager: committed consume offsets per (topic, group, queue).

Persisted as ``config/consumerOffset.json`` in RocketMQ's form (protocol reference §6.7)::

    {"offsetTable":{"TopicTest@g1":{0:250,1:248},"%RETRY%g1@g1":{0:0}}}

The inner keys are **bare** integers (fastjson's form; the file is not standard JSON). The
value is the next offset to consume. A negative commit means "no offset" (a non-Java client
sends -1 for 0, Java treats stored negatives as absent), so it removes the entry. The table is
written every ``consumer_offset_flush_interval_s`` when it changed, and on stop.

``masterless`` (:mod:`.masterless_offsets`) also records each commit a consumer makes while this
broker is a slave (it found no reachable master), for the master to take back when it returns;
it is written with the table.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from brokers.engine.broker.config_file import read_json, write_json_atomic
from brokers.engine.store.file_io import OS_FILE_IO, FileIO
from brokers.engine.broker.masterless_offsets import MasterlessOffsets

log = logging.getLogger("brokers.engine.broker")

CONSUMER_OFFSET_FILE = "consumerOffset.json"
TOPIC_GROUP_SEPARATOR = "@"


class ConsumerOffsetManager:
    def __init__(self, config_dir: Path, *, file_io: FileIO = OS_FILE_IO) -> None:
        self.file_io = file_io
        self.path = Path(config_dir) / CONSUMER_OFFSET_FILE
        self.offset_table: dict[str, dict[int, int]] = {}
        self._dirty = False
        self.masterless = MasterlessOffsets(Path(config_dir), file_io=file_io)

    @staticmethod
    def key(topic: str, group: str) -> str:
        return f"{topic}{TOPIC_GROUP_SEPARATOR}{group}"

    @staticmethod
    def split_key(key: str) -> tuple[str, str]:
        topic, _, group = key.partition(TOPIC_GROUP_SEPARATOR)
        return topic, group

    # -- persistence --------------------------------------------------------------------------

    def load(self) -> None:
        self.masterless.load()
        data = read_json(self.path)
        self.offset_table = {}
        table = data.get("offsetTable") if isinstance(data, dict) else None
        if not isinstance(table, dict):
            return
        for key, queues in table.items():
            if not isinstance(key, str) or TOPIC_GROUP_SEPARATOR not in key or not isinstance(queues, dict):
                log.warning("%s: skipping malformed entry %r", self.path, key)
                continue
            entry: dict[int, int] = {}
            for qid, offset in queues.items():
                try:
                    qid_i, offset_i = int(qid), int(offset)
                except (TypeError, ValueError):
                    continue
                if offset_i >= 0:
                    entry[qid_i] = offset_i
            if entry:
                self.offset_table[key] = entry

    def encode(self) -> dict[str, Any]:
        """The consumerOffset.json object (GET_ALL_CONSUMER_OFFSET body too)."""
        return {"offsetTable": {k: dict(v) for k, v in self.offset_table.items()}}

    def persist(self, *, force: bool = False) -> bool:
        """Write the file if anything changed since the last write; True when written."""
        self.masterless.persist(force=force)
        if not (self._dirty or force):
            return False
        self._dirty = False
        try:
            write_json_atomic(self.path, self.encode(), io=self.file_io)
        except OSError:
            self._dirty = True
            raise
        return True

    # -- offsets ------------------------------------------------------------------------------

    def commit_offset(self, client_host: str, group: str, topic: str, queue_id: int, offset: int) -> None:
        key = self.key(topic, group)
        if offset < 0:
            queues = self.offset_table.get(key)
            if queues is not None and queues.pop(queue_id, None) is not None:
                self._dirty = True
                if not queues:
                    del self.offset_table[key]
            return
        queues = self.offset_table.setdefault(key, {})
        if queues.get(queue_id) != offset:
            queues[queue_id] = offset
            self._dirty = True
        self.masterless.record(key, queue_id, offset)

    def query_offset(self, group: str, topic: str, queue_id: int) -> int:
        """The committed offset, or -1 when there is none."""
        return self.offset_table.get(self.key(topic, group), {}).get(queue_id, -1)

    def query_offsets(self, group: str, topic: str) -> dict[int, int]:
        return dict(self.offset_table.get(self.key(topic, group), {}))

    def which_topic_by_consumer(self, group: str) -> set[str]:
        return {t for t, g in map(self.split_key, self.offset_table) if g == group}

    def topics_by_group(self) -> dict[str, set[str]]:
        """which_topic_by_consumer of every group, in one pass over the table."""
        out: dict[str, set[str]] = {}
        for key in self.offset_table:
            topic, group = self.split_key(key)
            out.setdefault(group, set()).add(topic)
        return out

    def which_group_by_topic(self, topic: str) -> set[str]:
        return {g for t, g in map(self.split_key, self.offset_table) if t == topic}

    def remove_topic(self, topic: str) -> None:
        for key in [k for k in self.offset_table if self.split_key(k)[0] == topic]:
            del self.offset_table[key]
            self._dirty = True

    def remove_group(self, group: str) -> None:
        for key in [k for k in self.offset_table if self.split_key(k)[1] == group]:
            del self.offset_table[key]
            self._dirty = True
