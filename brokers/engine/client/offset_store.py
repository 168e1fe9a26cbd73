"""Consumer offset stores: on the broker (clustering) or in a local JSON file (broadcasting).

Both keep the offsets in memory (``update_offset`` from listener threads) and write them out
with ``persist``/``persist_all`` (the client instance's 5 s timer, a queue's drop, shutdown):

- :class:`RemoteBrokerOffsetStore` (RocketMQ's RemoteBrokerOffsetStore): QUERY_CONSUMER_OFFSET
  and UPDATE_CONSUMER_OFFSET on the queue's broker;
- :class:`LocalFileOffsetStore`: ``<dir>/<client id>/<group>/offsets.json``, RocketMQ's
  OffsetSerializeWrapper ``{"offsetTable":{<MessageQueue>:<offset>}}`` with inline MessageQueue
  keys, written atomically (temporary file, fsync, rename, fsync of the directory).

``read_offset`` returns -1 when there is no offset (the consumer then starts from its
consume-from-where) and -2 when the broker could not be asked (the queue is left for a later
rebalance rather than started from a guess).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from enum import Enum
from pathlib import Path
from typing import Protocol

from brokers.engine.client.client_instance import MQClientInstance
from brokers.engine.client.errors import MQBrokerError
from brokers.engine.client.puller import PullPlans
from brokers.engine.common import json_compat
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.remoting.errors import RemotingError

__all__ = ["LocalFileOffsetStore", "OffsetStore", "ReadOffsetType", "RemoteBrokerOffsetStore"]

log = logging.getLogger("brokers.engine.client")

NO_OFFSET = -1
OFFSET_UNKNOWN = -2  # the broker did not answer


class ReadOffsetType(str, Enum):
    READ_FROM_MEMORY = "READ_FROM_MEMORY"
    READ_FROM_STORE = "READ_FROM_STORE"
    MEMORY_FIRST_THEN_STORE = "MEMORY_FIRST_THEN_STORE"


class OffsetStore(Protocol):
    def update_offset(self, mq: MessageQueue, offset: int, increase_only: bool) -> None: ...

    async def read_offset(self, mq: MessageQueue, how: ReadOffsetType) -> int: ...

    def read_from_memory(self, mq: MessageQueue) -> int: ...

    async def persist(self, mq: MessageQueue) -> None: ...

    async def persist_all(self, mqs: set[MessageQueue]) -> None: ...

    def remove_offset(self, mq: MessageQueue) -> None: ...


class _MemoryTable:
    def __init__(self) -> None:
        self.offset_table: dict[MessageQueue, int] = {}
        self._lock = threading.Lock()

    def update_offset(self, mq: MessageQueue, offset: int, increase_only: bool) -> None:
        with self._lock:
            old = self.offset_table.get(mq)
            if old is None or not increase_only or offset > old:
                self.offset_table[mq] = offset

    def read_from_memory(self, mq: MessageQueue) -> int:
        return self.offset_table.get(mq, NO_OFFSET)

    def remove_offset(self, mq: MessageQueue) -> None:
        with self._lock:
            self.offset_table.pop(mq, None)


class RemoteBrokerOffsetStore(_MemoryTable):
    """Offsets kept by the brokers, per (group, topic, queue)."""

    def __init__(self, instance: MQClientInstance, plans: PullPlans) -> None:
        super().__init__()
        self.instance = instance
        self.plans = plans

    async def read_offset(self, mq: MessageQueue, how: ReadOffsetType) -> int:
        if how is not ReadOffsetType.READ_FROM_STORE:
            offset = self.read_from_memory(mq)
            if offset >= 0 or how is ReadOffsetType.READ_FROM_MEMORY:
                return offset
        try:
            offset = await self.instance.driver.run(self.plans.query_offset(mq))
        except MQBrokerError as exc:
            log.debug("no offset of %s on the broker: %s", mq, exc)
            return NO_OFFSET
        except RemotingError as exc:
            log.warning("offset of %s not read: %s", mq, exc)
            return OFFSET_UNKNOWN
        if offset >= 0:
            self.update_offset(mq, offset, False)
        return offset

    async def persist(self, mq: MessageQueue) -> None:
        offset = self.read_from_memory(mq)
        if offset < 0:
            return
        try:
            await self.instance.driver.run(self.plans.update_offset(mq, offset))
        except RemotingError as exc:
            log.warning("offset %d of %s not committed: %s", offset, mq, exc)

    async def persist_all(self, mqs: set[MessageQueue]) -> None:
        await asyncio.gather(*(self.persist(mq) for mq in mqs if mq in self.offset_table))


class LocalFileOffsetStore(_MemoryTable):
    """Offsets in a local JSON file (broadcasting: each client consumes every queue itself)."""

    def __init__(self, root_dir: str | os.PathLike[str], client_id: str, group: str) -> None:
        super().__init__()
        self.path = Path(root_dir) / client_id / group / "offsets.json"
        self._file_lock = threading.Lock()
        self._stored: dict[MessageQueue, int] = {}

    def load(self) -> None:
        """Read the file (a missing one means no offsets; a broken one is logged and ignored)."""
        try:
            data = json_compat.loads(self.path.read_bytes())
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            log.warning("offset file %s unreadable, starting without offsets: %s", self.path, exc)
            return
        table = data.get("offsetTable") if isinstance(data, dict) else None
        for key, value in (table or {}).items():
            if isinstance(key, MessageQueue):
                self._stored[key] = int(value)
                self.update_offset(key, int(value), False)

    async def read_offset(self, mq: MessageQueue, how: ReadOffsetType) -> int:
        offset = self.read_from_memory(mq)
        if offset >= 0 or how is ReadOffsetType.READ_FROM_MEMORY:
            return offset
        return self._stored.get(mq, NO_OFFSET)

    async def persist(self, mq: MessageQueue) -> None:
        await self.persist_all({mq})

    async def persist_all(self, mqs: set[MessageQueue]) -> None:
        with self._file_lock:
            for mq in mqs:
                offset = self.offset_table.get(mq)
                if offset is not None and offset >= 0:
                    self._stored[mq] = offset
            snapshot = dict(self._stored)
        await asyncio.get_running_loop().run_in_executor(None, self._write, snapshot)

    def _write(self, table: dict[MessageQueue, int]) -> None:
        with self._file_lock:
            write_atomic(self.path, json_compat.dumps({"offsetTable": table}).encode("utf-8"))


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so a crash leaves the old file or the new one, never half of one."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
