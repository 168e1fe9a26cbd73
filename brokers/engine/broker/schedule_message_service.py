"""ScheduleMessageService: delayed delivery through SCHEDULE_TOPIC_XXXX (protocol reference §7.5).

A message with ``DELAY=<level>`` (1..18, capped at 18) is stored in SCHEDULE_TOPIC_XXXX queue
``level - 1`` with ``REAL_TOPIC``/``REAL_QID`` properties and, in its consume-queue tag slot,
its delivery time. A poller (every ``poll_interval_s``) walks each level's queue from the offset
in ``config/delayOffset.json`` and, for each message whose time has come (store time + the
level's delay; a level's queue is in delivery order), puts it into its real topic and queue
with ``DELAY`` removed (flag, sys flag, born info, reconsume times and the other properties
kept, the tag hash recomputed). ``delayOffset.json`` is ``{"offsetTable":{<level>:<offset>}}``
with bare integer keys, like RocketMQ's.

Levels (``messageDelayLevel``)::

    level  1  2  3   4   5  6  7  8  9  10 11 12 13 14  15  16  17 18
    delay  1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from brokers.engine.broker.config_file import read_json, write_json_atomic
from brokers.engine.store.file_io import OS_FILE_IO, FileIO
from brokers.engine.common.clock import Clock
from brokers.engine.common.constants import SCHEDULE_TOPIC
from brokers.engine.common.message import (
    PROPERTY_DELAY_TIME_LEVEL,
    PROPERTY_REAL_QUEUE_ID,
    PROPERTY_REAL_TOPIC,
    PROPERTY_TRANSACTION_PREPARED,
    MessageExt,
    properties_to_string,
)
from brokers.engine.common.message_codec import RecordFormatError, decode_record
from brokers.engine.store.message_inner import MessageExtBrokerInner
from brokers.engine.store.message_store import MessageStore
from brokers.engine.store.results import GetMessageStatus, PutMessageStatus

log = logging.getLogger("brokers.engine.broker")

DELAY_OFFSET_FILE = "delayOffset.json"
MESSAGE_DELAY_LEVEL = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"
_UNIT_MS = {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
DELAY_LEVEL_MS = {i + 1: int(t[:-1]) * _UNIT_MS[t[-1]] for i, t in enumerate(MESSAGE_DELAY_LEVEL.split())}
MAX_DELAY_LEVEL = len(DELAY_LEVEL_MS)
SCHEDULE_GROUP = "SCHEDULE_CONSUMER"  # name used for the store's reads; never a real group
BATCH = 32


def delay_level_of(properties: dict[str, str]) -> int:
    try:
        return int(properties.get(PROPERTY_DELAY_TIME_LEVEL, "0"))
    except ValueError:
        return 0


class ScheduleMessageService:
    def __init__(
        self,
        store_getter: Callable[[], MessageStore],
        config_dir: Path,
        clock: Clock,
        *,
        poll_interval_s: float = 0.1,
        file_io: FileIO = OS_FILE_IO,
    ) -> None:
        self._store = store_getter
        self.file_io = file_io
        self.path = Path(config_dir) / DELAY_OFFSET_FILE
        self.clock = clock
        self.poll_interval_s = poll_interval_s
        self.offset_table: dict[int, int] = {}
        self._dirty = False
        self._task: asyncio.Task[None] | None = None

    # -- persistence --------------------------------------------------------------------------

    def load(self) -> None:
        data = read_json(self.path)
        table = data.get("offsetTable") if isinstance(data, dict) else None
        self.offset_table = {}
        for level, offset in (table or {}).items():
            try:
                if 1 <= int(level) <= MAX_DELAY_LEVEL and int(offset) >= 0:
                    self.offset_table[int(level)] = int(offset)
            except (TypeError, ValueError):
                continue

    def encode(self) -> dict[str, Any]:
        return {"offsetTable": dict(self.offset_table)}

    def persist(self, *, force: bool = False) -> None:
        if self._dirty or force:
            self._dirty = False
            write_json_atomic(self.path, self.encode(), io=self.file_io)

    # -- the send side ------------------------------------------------------------------------

    def transform(self, msg: MessageExtBrokerInner) -> MessageExtBrokerInner:
        """Park a message carrying DELAY > 0 in SCHEDULE_TOPIC_XXXX; others pass unchanged."""
        level = delay_level_of(msg.properties)
        if level <= 0 or msg.topic == SCHEDULE_TOPIC or msg.properties.get(PROPERTY_TRANSACTION_PREPARED) == "true":
            return msg
        level = min(level, MAX_DELAY_LEVEL)
        props = dict(msg.properties)
        props[PROPERTY_DELAY_TIME_LEVEL] = str(level)
        props[PROPERTY_REAL_TOPIC] = msg.topic
        props[PROPERTY_REAL_QUEUE_ID] = str(msg.queue_id)
        return replace(
            msg,
            topic=SCHEDULE_TOPIC,
            queue_id=level - 1,
            properties=props,
            properties_string=properties_to_string(props),
            tags_code=self.clock.now_ms() + DELAY_LEVEL_MS[level],
        )

    # -- delivery -----------------------------------------------------------------------------

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        self.persist()

    async def _run(self) -> None:
        await asyncio.sleep(min(1.0, self.poll_interval_s * 10))  # RocketMQ's first run is 1 s after start
        while True:
            for level in range(1, MAX_DELAY_LEVEL + 1):
                try:
                    await self.deliver_level(level)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("delivering delay level %d failed", level)
            try:
                self.persist()
            except OSError as exc:
                log.warning("cannot write %s: %s", self.path, exc)
            await asyncio.sleep(self.poll_interval_s)

    async def deliver_level(self, level: int) -> int:
        """Deliver the due messages of one level; return how many went out."""
        store = self._store()
        queue_id = level - 1
        offset = self.offset_table.get(level, 0)
        if store.get_max_offset_in_queue(SCHEDULE_TOPIC, queue_id) <= offset:
            return 0
        delivered = 0
        now = self.clock.now_ms()
        while True:
            result = store.get_message(SCHEDULE_GROUP, SCHEDULE_TOPIC, queue_id, offset, BATCH, None)
            if not result.records:
                if result.next_begin_offset != offset and result.status is not GetMessageStatus.OFFSET_OVERFLOW_ONE:
                    offset = max(result.next_begin_offset, 0)  # skip a removed or filtered stretch
                    self._advance(level, offset)
                    if result.status is not GetMessageStatus.OFFSET_OVERFLOW_BADLY:
                        continue
                return delivered
            for record in result.records:
                try:
                    msg = decode_record(record)
                except RecordFormatError as exc:
                    log.error(
                        "undecodable record in %s queue %d at offset %d: %s", SCHEDULE_TOPIC, queue_id, offset, exc
                    )
                    offset += 1
                    self._advance(level, offset)
                    continue
                if msg.store_timestamp + DELAY_LEVEL_MS[level] > now:
                    return delivered
                if not await self._deliver(store, msg):
                    return delivered  # try again at the next poll
                delivered += 1
                offset = msg.queue_offset + 1
                self._advance(level, offset)

    def _advance(self, level: int, offset: int) -> None:
        if self.offset_table.get(level) != offset:
            self.offset_table[level] = offset
            self._dirty = True

    async def _deliver(self, store: MessageStore, msg: MessageExt) -> bool:
        props = dict(msg.properties)
        real_topic = props.get(PROPERTY_REAL_TOPIC)
        try:
            real_queue = int(props.get(PROPERTY_REAL_QUEUE_ID, "0"))
        except ValueError:
            real_queue = 0
        if not real_topic:
            log.error("scheduled message at %d has no REAL_TOPIC; dropped", msg.commit_log_offset)
            return True
        props.pop(PROPERTY_DELAY_TIME_LEVEL, None)
        inner = MessageExtBrokerInner(
            topic=real_topic,
            queue_id=real_queue,
            body=msg.body,
            properties=props,
            flag=msg.flag,
            sys_flag=msg.sys_flag & ~0x30,
            born_timestamp=msg.born_timestamp,
            born_host=msg.born_host,
            reconsume_times=msg.reconsume_times,
            properties_string=properties_to_string(props),
            wait_store_msg_ok=False,
        )
        result = await store.put_message(inner)
        if result.stored:  # a SYNC_MASTER's slave status still means stored: do not deliver twice
            return True
        log.warning("delivering a scheduled message to %s:%d failed: %s", real_topic, real_queue, result.status)
        return result.status in (PutMessageStatus.MESSAGE_ILLEGAL, PutMessageStatus.PROPERTIES_SIZE_EXCEEDED)
