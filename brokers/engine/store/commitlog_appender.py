"""CommitLogAppender: the write path of the store (validate, encode into the commit log, dispatch);
RocketMQ's ``CommitLog.putMessage`` with its ``DefaultAppendMessageCallback``.

Everything that can be computed without the lock (checks, encoded topic/properties/hosts,
body CRC, index key hashes) is done before taking it; under the lock a put only assigns the
queue offset, makes sure the disk has room for everything it will write (the consume queue unit,
the index items, the record: :meth:`CommitLog.reserve` and the ``ensure_room`` methods), writes
the record with ``pwrite``, and writes the consume queue unit and index items. TOTALSIZE and
MAGICCODE are written after the rest of each record, so a process killed mid-write leaves bytes
that recovery does not take for a record.

A full disk (ENOSPC) or a failing write answers the put with an error status and changes nothing
visible: no position moved, no unit points at bytes that are not there, and the next record goes
at the same offset once space returns.

The appender owns nothing of the store: it is handed the commit log, the consume queue table
(for queue offsets), the dispatcher, the running flags, the stats and the clock, and answers each
put with (result, flush target, arrivals) for the store to wait on and announce.
"""

from __future__ import annotations

import errno
import logging
import struct
import zlib

from brokers.engine.common.clock import Clock
from brokers.engine.common.constants import SCHEDULE_TOPIC
from brokers.engine.common.message import (
    PROPERTY_KEYS,
    PROPERTY_SEPARATOR,
    PROPERTY_TAGS,
    PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX,
    properties_to_string,
    string_to_properties,
)
from brokers.engine.common.message_codec import (
    HOST_V6_SIZE,
    MESSAGE_MAGIC_CODE,
    MAX_PROPERTIES_BYTES,
    RECORD_FIXED_SIZE_V4,
    TRANSACTION_PREPARED_TYPE,
    TRANSACTION_ROLLBACK_TYPE,
    TRANSACTION_TYPE_MASK,
    RecordFormatError,
    body_crc,
    encode_record_tail,
    host_to_bytes,
    iter_batch_body,
    offset_msg_id_of,
    record_size,
    tags_code,
)
from brokers.engine.common.topic_validator import InvalidNameError, validate_topic
from brokers.engine.store.commitlog import CommitLog, CreateMappedFileError, RecordTooLargeError
from brokers.engine.store.commitlog_dispatcher import CommitLogDispatcher
from brokers.engine.store.consume_queue_table import ConsumeQueueTable
from brokers.engine.store.index import IndexService
from brokers.engine.store.mapped_file import MappedFile
from brokers.engine.store.dispatch import (
    consume_queue_tags_code,
    goes_to_consume_queue,
    goes_to_index,
    index_key_hashes,
)
from brokers.engine.store.message_inner import MessageExtBatch, MessageExtBrokerInner
from brokers.engine.store.results import PutMessageResult, PutMessageStatus
from brokers.engine.store.running_flags import RunningFlags
from brokers.engine.store.stats import StoreStats

log = logging.getLogger(__name__)

Arrival = tuple[str, int, int, int]
PutOutcome = tuple[PutMessageResult, int, list[Arrival]]  # result, flush target (-1: none), arrivals
_UNPUBLISHED_PREFIX = bytes(8)  # TOTALSIZE and MAGICCODE until the record is complete
_PREFIX = struct.Struct(">iI")


class CommitLogAppender:
    """Validates, encodes and appends puts to the commit log, then dispatches them."""

    def __init__(
        self,
        *,
        commitlog: CommitLog,
        queues: ConsumeQueueTable,
        index: IndexService,
        dispatcher: CommitLogDispatcher,
        flags: RunningFlags,
        stats: StoreStats,
        clock: Clock,
        max_message_size: int,
        store_host_bytes: bytes,
    ) -> None:
        self._commitlog = commitlog
        self._queues = queues
        self._index = index
        self._dispatcher = dispatcher
        self._flags = flags
        self._stats = stats
        self._clock = clock
        self._max_message_size = max_message_size
        self._store_host_bytes = store_host_bytes
        self._topics: dict[str, bytes] = {}  # validated topic name -> UTF-8 bytes

    def _topic_bytes(self, topic: str) -> bytes | None:
        encoded = self._topics.get(topic)
        if encoded is None:
            try:
                validate_topic(topic)
            except InvalidNameError:
                return None
            encoded = self._topics[topic] = topic.encode("utf-8")
        return encoded

    def _fail(self, status: PutMessageStatus, why: str = "") -> PutOutcome:
        self._stats.put_message_failed_times += 1
        if why:
            log.warning("put rejected (%s): %s", status.name, why)
        return PutMessageResult(status), -1, []

    def _precheck(self, topic: str, queue_id: int, born_host: str) -> tuple[bytes, bytes] | PutMessageStatus:
        if not self._flags.writeable:
            return PutMessageStatus.SERVICE_NOT_AVAILABLE
        topic_b = self._topic_bytes(topic)
        if topic_b is None or queue_id < 0:
            return PutMessageStatus.MESSAGE_ILLEGAL
        try:
            return topic_b, host_to_bytes(born_host)
        except (ValueError, TypeError):
            return PutMessageStatus.MESSAGE_ILLEGAL

    def _dispatch_failed(self, exc: Exception) -> None:
        # The record is in the commit log but a queue or the index missed it: stop taking puts
        # (their offsets would diverge); the next open re-dispatches from the commit log.
        log.exception("dispatch failed; the store refuses further puts until restarted")
        self._flags.make_unhealthy(f"dispatch failed: {exc}")

    def _room(
        self, topic: str, queue_id: int, first_offset: int, units: int, index_items: int, size: int
    ) -> tuple[MappedFile, int] | PutOutcome:
        """Reserve ``size`` bytes of the commit log and make sure the consume queue and the index
        have room for ``units`` units and ``index_items`` items: (segment, position), or the
        failed outcome (a full disk: nothing was written)."""
        where = f"consume queue {topic}/{queue_id}"
        try:
            if units:
                self._queues.ensure_room(topic, queue_id, first_offset, units)
            where = "index"
            if index_items:
                self._index.ensure_room(index_items)
            return self._commitlog.reserve(size)
        except RecordTooLargeError as exc:
            return self._fail(PutMessageStatus.MESSAGE_ILLEGAL, str(exc))
        except CreateMappedFileError as exc:
            return self._fail(PutMessageStatus.CREATE_MAPED_FILE_FAILED, str(exc))
        except OSError as exc:  # ENOSPC on a consume queue or index file
            return self._fail(PutMessageStatus.CREATE_MAPED_FILE_FAILED, f"no room in the {where}: {exc}")

    def _write_failed(self, exc: OSError) -> PutOutcome:
        """A commit log write failed before the record was published: a full disk is answered as
        one (CREATE_MAPED_FILE_FAILED, as RocketMQ does), any other error as UNKNOWN_ERROR."""
        status = (
            PutMessageStatus.CREATE_MAPED_FILE_FAILED
            if exc.errno in (errno.ENOSPC, errno.EDQUOT)
            else PutMessageStatus.UNKNOWN_ERROR
        )
        return self._fail(status, f"writing the commit log failed: {exc}")

    def _count(self, messages: int, size: int, started: float) -> None:
        stats = self._stats
        stats.put_message_times_total += messages
        stats.put_message_size_total += size
        elapsed = (self._clock.monotonic() - started) * 1000
        if elapsed > stats.put_message_entire_time_max_ms:
            stats.put_message_entire_time_max_ms = elapsed

    def put_one(self, msg: MessageExtBrokerInner) -> PutOutcome:
        started = self._clock.monotonic()
        if not self._flags.writeable:
            return self._fail(PutMessageStatus.SERVICE_NOT_AVAILABLE)
        topic, queue_id, sys_flag = msg.topic, msg.queue_id, msg.sys_flag
        topic_b = self._topics.get(topic) or self._topic_bytes(topic)
        if topic_b is None or queue_id < 0:
            return self._fail(PutMessageStatus.MESSAGE_ILLEGAL, f"topic {topic!r}, queue {queue_id}")
        try:
            born_b = host_to_bytes(msg.born_host)
        except (ValueError, TypeError):
            return self._fail(PutMessageStatus.MESSAGE_ILLEGAL, f"born host {msg.born_host!r}")
        body = msg.body
        if len(body) > self._max_message_size:
            return self._fail(PutMessageStatus.MESSAGE_ILLEGAL, f"body of {len(body)} bytes")
        props = msg.properties
        text = msg.properties_string
        if text is None:
            text = properties_to_string(props)
        props_b = text.encode("utf-8")
        if len(props_b) > MAX_PROPERTIES_BYTES:
            return self._fail(PutMessageStatus.PROPERTIES_SIZE_EXCEEDED, f"{len(props_b)} bytes")
        tran = sys_flag & TRANSACTION_TYPE_MASK
        to_cq = tran != TRANSACTION_PREPARED_TYPE and tran != TRANSACTION_ROLLBACK_TYPE
        hashes = None
        if tran != TRANSACTION_ROLLBACK_TYPE and (
            PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX in props or PROPERTY_KEYS in props
        ):
            hashes = index_key_hashes(topic, props)
        store_b = self._store_host_bytes
        size = (
            RECORD_FIXED_SIZE_V4
            + len(body)
            + len(topic_b)
            + len(props_b)
            + (12 if len(born_b) == HOST_V6_SIZE else 0)
            + (12 if len(store_b) == HOST_V6_SIZE else 0)
        )
        crc = zlib.crc32(body) & 0x7FFFFFFF
        tags = msg.tags_code
        if tags is None and topic != SCHEDULE_TOPIC:
            tags = tags_code(props.get(PROPERTY_TAGS))
        cl = self._commitlog
        arrivals: list[Arrival] = []
        with cl.lock:
            if not self._flags.running:
                return self._fail(PutMessageStatus.SERVICE_NOT_AVAILABLE)
            queue_offset = self._queues.next_queue_offset(topic, queue_id) if to_cq else 0
            now = self._clock.now_ms()
            room = self._room(topic, queue_id, queue_offset, 1 if to_cq else 0, len(hashes) if hashes else 0, size)
            if len(room) == 3:  # a failed outcome
                return room
            mf, pos = room
            phys = mf.file_from_offset + pos
            try:
                tail, _size = encode_record_tail(
                    topic_b,
                    queue_id,
                    body,
                    props_b,
                    msg.flag,
                    queue_offset,
                    phys,
                    sys_flag,
                    msg.born_timestamp,
                    born_b,
                    now,
                    store_b,
                    msg.reconsume_times,
                    msg.prepared_transaction_offset,
                    crc,
                )
            except (struct.error, TypeError, OverflowError) as exc:
                return self._fail(PutMessageStatus.MESSAGE_ILLEGAL, f"cannot encode: {exc}")
            try:
                mf.write(pos, _UNPUBLISHED_PREFIX + tail)  # complete, but not a record yet
                mf.write(pos, _PREFIX.pack(size, MESSAGE_MAGIC_CODE))
            except OSError as exc:  # nothing published: the next record goes at the same offset
                return self._write_failed(exc)
            cl.advance(mf, pos + size, now)
            try:
                unit_tags = None
                if to_cq:
                    if tags is None or topic == SCHEDULE_TOPIC:
                        tags = consume_queue_tags_code(topic, props, now, msg.tags_code)
                    unit_tags = tags
                self._dispatcher.dispatch(topic, queue_id, queue_offset, phys, size, unit_tags, hashes, now)
                if unit_tags is not None:
                    arrivals.append((topic, queue_id, queue_offset + 1, unit_tags))
            except Exception as exc:
                self._dispatch_failed(exc)
        self._count(1, size, started)
        msg_id = offset_msg_id_of(store_b, phys)
        return (
            PutMessageResult(PutMessageStatus.PUT_OK, msg_id, queue_offset, phys, size, 1, now),
            phys + size,
            arrivals,
        )

    def put_batch(self, batch: MessageExtBatch) -> PutOutcome:
        started = self._clock.monotonic()
        checked = self._precheck(batch.topic, batch.queue_id, batch.born_host)
        if isinstance(checked, PutMessageStatus):
            return self._fail(checked)
        topic_b, born_b = checked
        try:
            entries = batch.entries if batch.entries is not None else list(iter_batch_body(batch.body))
        except RecordFormatError as exc:
            return self._fail(PutMessageStatus.MESSAGE_ILLEGAL, f"batch body: {exc}")
        if not entries:
            return self._fail(PutMessageStatus.MESSAGE_ILLEGAL, "empty batch")
        topic, queue_id, sys_flag = batch.topic, batch.queue_id, batch.sys_flag
        to_cq = goes_to_consume_queue(sys_flag)
        to_index = goes_to_index(sys_flag)
        store_b = self._store_host_bytes
        born_v6, store_v6 = len(born_b) == HOST_V6_SIZE, len(store_b) == HOST_V6_SIZE
        batch_text = properties_to_string(batch.properties)
        items = []
        total = 0
        max_size = self._max_message_size
        for flag, body, text in entries:
            if len(body) > max_size:
                return self._fail(PutMessageStatus.MESSAGE_ILLEGAL, f"body of {len(body)} bytes")
            if batch_text:
                if text and not text.endswith(PROPERTY_SEPARATOR):
                    text += PROPERTY_SEPARATOR
                text += batch_text
            props_b = text.encode("utf-8")
            if len(props_b) > MAX_PROPERTIES_BYTES:
                return self._fail(PutMessageStatus.PROPERTIES_SIZE_EXCEEDED, f"{len(props_b)} bytes")
            props = string_to_properties(text)
            size = record_size(len(body), len(topic_b), len(props_b), born_v6, store_v6)
            items.append(
                (flag, body, props_b, props, size, body_crc(body), index_key_hashes(topic, props) if to_index else None)
            )
            total += size
        cl = self._commitlog
        arrivals: list[Arrival] = []
        ids: list[str] = []
        with cl.lock:
            if not self._flags.running:
                return self._fail(PutMessageStatus.SERVICE_NOT_AVAILABLE)
            first_offset = self._queues.next_queue_offset(topic, queue_id) if to_cq else 0
            now = self._clock.now_ms()
            n_keys = sum(len(item[6]) for item in items if item[6]) if to_index else 0
            room = self._room(topic, queue_id, first_offset, len(items) if to_cq else 0, n_keys, total)
            if len(room) == 3:  # a failed outcome
                return room
            mf, pos = room
            base = mf.file_from_offset
            parts = []  # the records with TOTALSIZE and MAGICCODE zero, written in one go
            phys = base + pos
            try:
                for i, (flag, body, props_b, _props, size, crc, _hashes) in enumerate(items):
                    tail, _size = encode_record_tail(
                        topic_b,
                        queue_id,
                        body,
                        props_b,
                        flag,
                        first_offset + i if to_cq else 0,
                        phys,
                        sys_flag,
                        batch.born_timestamp,
                        born_b,
                        now,
                        store_b,
                        batch.reconsume_times,
                        0,
                        crc,
                    )
                    parts.append(_UNPUBLISHED_PREFIX)
                    parts.append(tail)
                    ids.append(offset_msg_id_of(store_b, phys))
                    phys += size
            except (struct.error, TypeError, OverflowError) as exc:
                return self._fail(PutMessageStatus.MESSAGE_ILLEGAL, f"cannot encode: {exc}")
            data = b"".join(parts)
            buf = bytearray(data)
            at = 0
            for item in items:  # every record complete first, then visible in order (one rewrite)
                _PREFIX.pack_into(buf, at, item[4], MESSAGE_MAGIC_CODE)
                at += item[4]
            try:
                mf.write(pos, data)
                mf.write(pos, buf)
            except OSError as exc:
                return self._write_failed(exc)
            at += pos
            cl.advance(mf, at, now)
            try:
                phys = base + pos
                index_items: list[tuple[int, int]] = []
                units = []
                for i, (_flag, _body, _props_b, props, size, _crc, hashes) in enumerate(items):
                    if to_cq:
                        tags = consume_queue_tags_code(topic, props, now)
                        units.append((phys, size, tags))
                        arrivals.append((topic, queue_id, first_offset + i + 1, tags))
                    if hashes:
                        for h in hashes:  # a loop, not extend(genexpr): most messages have one key
                            index_items.append((h, phys))
                    phys += size
                self._dispatcher.dispatch_batch(topic, queue_id, first_offset, units, index_items, now)
            except Exception as exc:
                self._dispatch_failed(exc)
        self._count(len(items), total, started)
        result = PutMessageResult(
            PutMessageStatus.PUT_OK, ",".join(ids), first_offset, base + pos, total, len(items), now
        )
        return result, base + at, arrivals
