"""ConsumeQueueTable: every consume queue of a store by (topic, queue id), with the next queue
offset of each (RocketMQ's ``consumeQueueTable`` and the commit log's ``topicQueueTable``).

Layout on disk: ``<consume_queue_dir>/<topic>/<queue id>/`` (see ``consume_queue.py``). A topic
directory is deleted by renaming it to ``.deleting.<topic>.<unique>`` first (atomic), so a crash
mid-delete never leaves a queue with holes; ``load()`` finishes such interrupted deletes. The
prefix has a dot, which no legal topic name has, so it never collides with a queue.

A clean shutdown records every queue's end in ``<store_dir>/consumequeue_ends.json`` (with the
commit log end it goes with), so the next clean open takes the ends instead of searching
thousands of queue files for them; after a crash the file is not used (the ``abort`` file says
so) and the ends are searched as before.

Thread model: the put path and ``delete_topic`` change the table under the commit log lock; the
readers take a queue with ``get`` (a dict lookup) and read it without the lock.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import uuid

from brokers.engine.common.topic_validator import InvalidNameError, validate_topic
from brokers.engine.store.consume_queue import ConsumeQueue
from brokers.engine.store.file_io import OS_FILE_IO, FileIO, makedirs_private, write_file_atomically

log = logging.getLogger(__name__)

DELETING_PREFIX = ".deleting."  # not a legal topic name (has a dot)

QueueKey = tuple[str, int]  # (topic, queue id)
QueueEnds = dict[QueueKey, tuple[int, int]]  # (max offset, commit log offset past its last record)
QUEUE_ENDS_FILE = "consumequeue_ends.json"  # in the store directory


def write_queue_ends(path: str, commitlog_end: int, ends: QueueEnds, io: FileIO = OS_FILE_IO) -> None:
    """Record the queues' ends at a clean shutdown, for the commit log ending at ``commitlog_end``."""
    body = {
        "commitLogOffset": commitlog_end,
        "queues": [[topic, queue_id, end, phys] for (topic, queue_id), (end, phys) in sorted(ends.items())],
    }
    write_file_atomically(io, path, json.dumps(body, separators=(",", ":")).encode("utf-8"), 0o600)


def read_queue_ends(path: str, commitlog_end: int) -> QueueEnds | None:
    """The ends recorded for a commit log ending at ``commitlog_end``; None if there are none
    (no file, unreadable, or recorded for another end)."""
    try:
        with open(path, "rb") as f:
            body = json.loads(f.read())
        if body["commitLogOffset"] != commitlog_end:
            return None
        return {(str(t), int(q)): (int(end), int(phys)) for t, q, end, phys in body["queues"]}
    except (OSError, ValueError, KeyError, TypeError):
        return None


class ConsumeQueueTable:
    """The consume queues under one directory; ``load()`` before use, ``close()`` after."""

    def __init__(
        self, root: str, units_per_file: int, *, io: FileIO = OS_FILE_IO, ends_path: str | None = None
    ) -> None:
        self.root = root
        self.io = io
        # Beside the queue directory (in the store directory) unless given.
        self.ends_path = ends_path or os.path.join(os.path.dirname(os.path.abspath(root)), QUEUE_ENDS_FILE)
        self._units_per_file = units_per_file
        self._queues: dict[QueueKey, ConsumeQueue] = {}
        # The queue offset the next message of each queue gets (written by the put path).
        self.queue_offsets: dict[QueueKey, int] = {}
        # Record bytes put to each queue since the store opened (for bytes/s; restarts at 0).
        self.queue_put_bytes: dict[QueueKey, int] = {}

    def load(self, check_window: int, clean_end: int = -1) -> None:
        """Open every queue directory; ``check_window`` bytes past each end are checked for
        stray units after a crash; ``clean_end`` >= 0 is the commit log end a clean shutdown
        recorded, whose queue ends are taken if recorded. Finishes deletes a crash
        interrupted; skips bad names."""
        known_ends = (read_queue_ends(self.ends_path, clean_end) if clean_end >= 0 and self.ends_path else None) or {}
        self._queues = {}
        makedirs_private(self.root)
        for topic in sorted(os.listdir(self.root)):
            if topic.startswith(DELETING_PREFIX):  # a delete_topic interrupted by a crash
                shutil.rmtree(os.path.join(self.root, topic), ignore_errors=True)
                continue
            try:
                validate_topic(topic)
            except InvalidNameError:
                log.warning("ignoring consume queue directory %r: not a valid topic name", topic)
                continue
            topic_dir = os.path.join(self.root, topic)
            if not os.path.isdir(topic_dir):
                continue
            for name in os.listdir(topic_dir):
                if not name.isdigit():
                    continue
                q = ConsumeQueue(topic, int(name), os.path.join(topic_dir, name), self._units_per_file, io=self.io)
                q.load(check_window, known_ends.get((topic, int(name))))
                self._queues[(topic, int(name))] = q
        self.reset_queue_offsets()

    def reset_queue_offsets(self) -> None:
        """Take each queue's next offset from its end (after load and recovery)."""
        self.queue_offsets = {k: q.max_offset for k, q in self._queues.items()}

    def get(self, topic: str, queue_id: int) -> ConsumeQueue | None:
        return self._queues.get((topic, queue_id))

    def find_or_create(self, topic: str, queue_id: int, create: bool = True) -> ConsumeQueue | None:
        """Return the queue of (topic, queue id), creating it when asked.

        Returns None for a topic name that fails ``validate_topic`` (never a path from it).
        """
        q = self._queues.get((topic, queue_id))
        if q is not None or not create:
            return q
        try:
            validate_topic(topic)
        except InvalidNameError:
            return None
        if queue_id < 0:
            return None
        q = ConsumeQueue(
            topic, queue_id, os.path.join(self.root, topic, str(queue_id)), self._units_per_file, io=self.io
        )
        self._queues[(topic, queue_id)] = q
        return q

    def ends(self) -> QueueEnds:
        """Every queue's (max offset, commit log offset past its last record)."""
        return {k: (q.max_offset, q.max_phys_end) for k, q in self._queues.items() if q.files}

    def record_ends(self, commitlog_end: int) -> None:
        """At a clean shutdown (queues flushed), record every queue's end for the next open."""
        if self.ends_path:
            write_queue_ends(self.ends_path, commitlog_end, self.ends(), self.io)

    def queues(self) -> list[ConsumeQueue]:
        return list(self._queues.values())

    def queue_counts(self) -> dict[str, int]:
        """Each topic that has consume queues here: its highest queue id + 1."""
        counts: dict[str, int] = {}
        for topic, queue_id in list(self._queues):
            if queue_id >= counts.get(topic, 0):
                counts[topic] = queue_id + 1
        return counts

    def next_queue_offset(self, topic: str, queue_id: int) -> int:
        return self.queue_offsets.get((topic, queue_id), 0)

    def ensure_room(self, topic: str, queue_id: int, first_offset: int, count: int) -> None:
        """Make sure the queue can take ``count`` units from ``first_offset`` without running out
        of disk (see :meth:`ConsumeQueue.ensure_room`); raise OSError (ENOSPC) otherwise."""
        q = self._queues.get((topic, queue_id)) or self.find_or_create(topic, queue_id)
        if q is not None:
            q.ensure_room(first_offset, count)

    def put_unit(self, topic: str, queue_id: int, queue_offset: int, phys: int, size: int, tags: int) -> None:
        """Write the unit of the record at ``phys`` as ``queue_offset`` of its queue."""
        q = self.find_or_create(topic, queue_id)
        assert q is not None  # the put path validated the topic
        if q.max_offset == queue_offset:
            q.put(phys, size, tags)
        else:
            q.put_recovered(phys, size, tags, queue_offset)
        key = (topic, queue_id)
        self.queue_offsets[key] = queue_offset + 1
        self.queue_put_bytes[key] = self.queue_put_bytes.get(key, 0) + size

    def put_units(self, topic: str, queue_id: int, first_offset: int, units: list[tuple[int, int, int]]) -> None:
        """:meth:`put_unit` for consecutive queue offsets from ``first_offset`` (a batch)."""
        q = self.find_or_create(topic, queue_id)
        assert q is not None  # the put path validated the topic
        if q.max_offset == first_offset:
            q.put_many(units)
        else:
            for i, (phys, size, tags) in enumerate(units):
                q.put_recovered(phys, size, tags, first_offset + i)
        key = (topic, queue_id)
        self.queue_offsets[key] = first_offset + len(units)
        self.queue_put_bytes[key] = self.queue_put_bytes.get(key, 0) + sum(unit[1] for unit in units)

    def detach_topic(self, topic: str) -> None:
        """Forget and close the queues of ``topic`` (call under the commit log lock)."""
        keys = [k for k in self._queues if k[0] == topic]
        removed = [self._queues.pop(k) for k in keys]
        for k in keys:
            self.queue_offsets.pop(k, None)
            self.queue_put_bytes.pop(k, None)
        for q in removed:
            q.close()

    def remove_topic_files(self, topic: str) -> None:
        """Delete the directory of a detached topic: rename (atomic), fsync the parent, remove."""
        path = os.path.join(self.root, topic)
        if not os.path.isdir(path):
            return
        doomed = os.path.join(self.root, f"{DELETING_PREFIX}{topic}.{uuid.uuid4().hex}")
        self.io.replace(path, doomed)
        self.io.sync_dir(self.root)
        shutil.rmtree(doomed, ignore_errors=True)

    def close(self) -> None:
        for q in self._queues.values():
            q.close()
        self._queues = {}
