"""DefaultMessageStore: the local store behind the broker's :class:`MessageStore` Protocol
(RocketMQ's ``DefaultMessageStore``).

A put appends the record to the commit log and dispatches it at once, under one lock: the
consume queue unit, the index entries, then the arrival listeners (outside the lock, for long
polling). Queue offsets are assigned here from a per (topic, queue id) counter recovered from
the consume queues at open. With SYNC_FLUSH, ``put_message`` answers only after the group
commit has synced the record (see ``flush.py``).

Parts: the commit log, the consume queue table (``consume_queue_table.py``), the index, the
checkpoint; the put path (``commitlog_appender.py``) is handed those it writes and dispatches
through ``commitlog_dispatcher.py``; ``running_flags.py`` says whether puts are taken.

Thread model: puts and gets normally run on the broker's asyncio thread; the flush threads run
beside them and take the commit log lock only to snapshot positions. Every public method is safe
to call from any thread (``put_message_sync`` is for tools and tests without a loop).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import replace

from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.common.message_codec import host_to_bytes
from brokers.engine.common.topic_validator import InvalidNameError, validate_topic
from brokers.engine.store.checkpoint import StoreCheckpoint
from brokers.engine.store.commitlog import CommitLog
from brokers.engine.store import message_reader
from brokers.engine.store.commitlog_appender import CommitLogAppender, PutOutcome
from brokers.engine.store.commitlog_dispatcher import CommitLogDispatcher
from brokers.engine.store.config import StoreConfig
from brokers.engine.store.consume_queue import ConsumeQueue
from brokers.engine.store.consume_queue_table import ConsumeQueueTable
from brokers.engine.store.errors import StoreNotOpenError
from brokers.engine.store.file_io import OS_FILE_IO, FileIO, makedirs_private
from brokers.engine.store.flush import FlushCommitLogService, PeriodicService
from brokers.engine.store.ha.replica_appender import ReplicaAppender
from brokers.engine.store.ha.tail_truncation import TruncationReport, truncate_tail
from brokers.engine.store.index import IndexService
from brokers.engine.store.lock import StoreLock
from brokers.engine.store.logics_flush import flush_logics
from brokers.engine.store.mapped_file import raise_open_file_limit
from brokers.engine.store.message_inner import MessageExtBatch, MessageExtBrokerInner
from brokers.engine.store.message_store import DEFAULT_MAX_TOTAL_BYTES, ArrivalListener, MessageFilter
from brokers.engine.store.recovery import RecoveryReport, recover
from brokers.engine.store.retention import StoreRetention
from brokers.engine.store.results import GetMessageResult, PutMessageResult, PutMessageStatus
from brokers.engine.store.running_flags import RunningFlags
from brokers.engine.store.stats import StoreStats, store_runtime_info

log = logging.getLogger(__name__)

# After a crash, this many bytes past the end of each consume queue are checked for stray units
# (pages written out of order before the crash); more would read megabytes per queue.
CRASH_CHECK_WINDOW = 1 << 20


class DefaultMessageStore:
    """One broker's store directory (see docs/engine-internals.md, ``store``). Every file
    operation goes through ``file_io`` (``file_io.py``); failures: ``running_flags.py``.

    ``open()`` before use, ``close()`` after (or use it as a context manager). Puts are
    ``put_message``/``put_messages`` (async) or their ``_sync`` twins; reads are
    ``get_message``, the offset and time lookups, ``look_message_by_offset`` and
    ``query_message``. ``recovery_report`` says what the last ``open()`` found.
    """

    broker_role = "ASYNC_MASTER"  # a lone local store; HAMessageStore gives a group member its role

    def __init__(self, config: StoreConfig, clock: Clock = SYSTEM_CLOCK, file_io: FileIO = OS_FILE_IO) -> None:
        self.config = config
        self.clock = clock
        self.file_io = file_io
        self._flags = RunningFlags()
        self._lock_file = StoreLock(config.lock_path, config.abort_path, file_io)
        self._commitlog = CommitLog(
            config.commitlog_dir,
            config.commitlog_file_size,
            max_message_size=config.max_message_size,
            io=file_io,
            on_flush_failed=self._flags.make_unwritable,
        )
        self._index = IndexService(
            config.index_dir, config.max_index_hash_slots, config.max_index_count, clock.now_ms, io=file_io
        )
        self._queues = ConsumeQueueTable(config.consume_queue_dir, config.consume_queue_units_per_file, io=file_io)
        self._checkpoint: StoreCheckpoint | None = None
        self._listeners: list[ArrivalListener] = []
        self._stats = StoreStats(clock.monotonic)
        self._dispatcher = CommitLogDispatcher(self._queues, self._index)
        self._appender = CommitLogAppender(
            commitlog=self._commitlog,
            queues=self._queues,
            index=self._index,
            dispatcher=self._dispatcher,
            flags=self._flags,
            stats=self._stats,
            clock=clock,
            max_message_size=config.max_message_size,
            store_host_bytes=host_to_bytes(config.store_host),
        )
        self._retention = StoreRetention(
            config=config,
            commitlog=self._commitlog,
            queues=self._queues,
            index=self._index,
            flags=self._flags,
            clock=clock,
            file_io=file_io,
        )
        self._flush_commitlog: FlushCommitLogService | None = None
        self._flush_logics_service: PeriodicService | None = None
        self._boot_ms = 0
        self.recovery_report: RecoveryReport | None = None

    # --- lifecycle --------------------------------------------------------------------------

    def open(self) -> None:
        """Lock the directory, recover, create the abort file and start the flush threads."""
        if self._flags.running:
            return
        cfg = self.config
        makedirs_private(cfg.store_dir)
        self._lock_file.acquire()
        try:
            self._flags.reset()
            abnormal = self._lock_file.abort_exists()
            raise_open_file_limit()
            self._checkpoint = StoreCheckpoint(cfg.checkpoint_path, self.file_io)
            self._commitlog.load()
            self._queues.load(CRASH_CHECK_WINDOW if abnormal else 0, -1 if abnormal else self._checkpoint.physic_offset)
            self._index.load()
            self.recovery_report = recover(
                commitlog=self._commitlog,
                checkpoint=self._checkpoint,
                queues=self._queues.queues(),
                queue_for=self.consume_queue,
                index=self._index,
                abnormal=abnormal,
                check_crc=cfg.check_crc_on_recover,
            )
            self._queues.reset_queue_offsets()
            self._dispatcher.last_dispatch_timestamp = self._commitlog.last_store_timestamp
            self._dispatcher.dispatched_offset = self._commitlog.max_offset
            if not abnormal:  # after a crash the flush services sync what recovery marked, soon
                self._flush_all()
            self._lock_file.create_abort()
        except BaseException:
            self._close_parts()
            self._lock_file.release()
            raise
        self._flush_commitlog = FlushCommitLogService(
            self._commitlog, sync=cfg.sync_flush, interval_ms=cfg.flush_interval_commitlog_ms
        )
        self._flush_logics_service = PeriodicService(
            "FlushConsumeQueueService", cfg.flush_interval_consume_queue_ms, self._flush_logics
        )
        self._flush_commitlog.start()
        self._flush_logics_service.start()
        self._retention.start()
        self._boot_ms = self.clock.now_ms()
        self._stats.sample()
        self._flags.running = True

    def close(self) -> None:
        """Flush everything, write the checkpoint, remove the abort file and release the lock."""
        if not self._lock_file.held:
            return
        self._flags.running = False
        with self._commitlog.lock:  # let a put already past its check finish
            pass
        clean = True
        try:
            if self._flush_commitlog is not None:
                self._flush_commitlog.shutdown()
            if self._flush_logics_service is not None:
                self._flush_logics_service.shutdown()
            self._retention.shutdown()
            self._flush_all()
            self._queues.record_ends(self._commitlog.max_offset)
        except OSError:
            log.exception("final flush or queue ends record failed; leaving the abort file so the next open recovers")
            clean = False
        self._close_parts()
        if clean and self._flags.healthy_error is None and self._flags.write_error is None:
            self._lock_file.remove_abort()
        self._lock_file.release()

    def __enter__(self) -> DefaultMessageStore:
        self.open()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _close_parts(self) -> None:
        self._queues.close()
        self._index.close()
        self._commitlog.close()
        if self._checkpoint is not None:
            self._checkpoint.close()

    def consume_queue(self, topic: str, queue_id: int, create: bool = True) -> ConsumeQueue | None:
        """The consume queue of (topic, queue id), created when asked; None for a topic name that
        fails ``validate_topic`` (never a path from it)."""
        return self._queues.find_or_create(topic, queue_id, create)

    def _require_open(self) -> None:
        if not self._flags.running:
            raise StoreNotOpenError("the message store is not open")

    # --- flushing ---------------------------------------------------------------------------

    def _flush_logics(self) -> None:
        """Flush consume queues and index, then record in the checkpoint what is on disk (logics_flush.py)."""
        flush_logics(
            commitlog=self._commitlog,
            dispatcher=self._dispatcher,
            queues=self._queues.queues,
            index=self._index,
            flags=self._flags,
            checkpoint=self._checkpoint,
            stats=self._stats,
        )

    def _flush_all(self) -> None:
        self._commitlog.flush()
        self._flush_logics()

    def flush(self) -> None:
        """Put everything written so far on disk now (commit log, queues, index, checkpoint)."""
        self._require_open()
        self._flush_all()

    @property
    def flush_service(self) -> FlushCommitLogService:
        """The commit log flush service (its counters instrument group commit)."""
        self._require_open()
        assert self._flush_commitlog is not None
        return self._flush_commitlog

    # --- puts -------------------------------------------------------------------------------

    async def put_message(self, msg: MessageExtBrokerInner) -> PutMessageResult:
        """Store one message; with SYNC_FLUSH return after its group commit."""
        return await self.flushed(*self.put_message_started(msg))

    async def put_messages(self, batch: MessageExtBatch) -> PutMessageResult:
        """Store a batch (consecutive queue offsets); with SYNC_FLUSH return after its flush."""
        return await self.flushed(*self.put_messages_started(batch))

    def put_message_started(self, msg: MessageExtBrokerInner) -> tuple[PutMessageResult, asyncio.Future[bool] | None]:
        """Store and start the group commit on this loop (``flush.py``) without waiting for it:
        (result, its future or None); :meth:`flushed` finishes the put. A SYNC_MASTER starts its
        slave wait in between, so the flush and the slave's ack run at once."""
        return self._started(*self._after_put(self._appender.put_one(msg), msg.wait_store_msg_ok))

    def put_messages_started(self, batch: MessageExtBatch) -> tuple[PutMessageResult, asyncio.Future[bool] | None]:
        return self._started(*self._after_put(self._appender.put_batch(batch), batch.wait_store_msg_ok))

    def _started(self, result: PutMessageResult, target: int) -> tuple[PutMessageResult, asyncio.Future[bool] | None]:
        if target < 0 or self._flush_commitlog is None:
            return result, None
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._flush_commitlog.commit_on_loop(target, fut)
        return result, fut

    async def flushed(self, result: PutMessageResult, flush: asyncio.Future[bool] | None) -> PutMessageResult:
        """``result`` once ``flush`` (if any) is done, else :meth:`_not_flushed`."""
        return result if flush is None or await flush else self._not_flushed(result)

    def _not_flushed(self, result: PutMessageResult) -> PutMessageResult:
        """UNKNOWN_ERROR when the sync failed (the record may be lost), else FLUSH_DISK_TIMEOUT."""
        status = (
            PutMessageStatus.FLUSH_DISK_TIMEOUT if self._flags.write_error is None else PutMessageStatus.UNKNOWN_ERROR
        )
        return replace(result, status=status)

    def put_message_sync(self, msg: MessageExtBrokerInner) -> PutMessageResult:
        """Blocking ``put_message`` for tools and threads without an event loop."""
        result, target = self._after_put(self._appender.put_one(msg), msg.wait_store_msg_ok)
        return result if target < 0 else self._wait_flush(result, target)

    def put_messages_sync(self, batch: MessageExtBatch) -> PutMessageResult:
        """Blocking ``put_messages``."""
        result, target = self._after_put(self._appender.put_batch(batch), batch.wait_store_msg_ok)
        return result if target < 0 else self._wait_flush(result, target)

    def _after_put(self, outcome: PutOutcome, wait_store_msg_ok: bool) -> tuple[PutMessageResult, int]:
        """Announce the arrivals; return the result and the offset to wait for on disk (-1: none)."""
        result, target, arrivals = outcome
        self._notify(arrivals)
        return result, target if target >= 0 and self.config.sync_flush and wait_store_msg_ok else -1

    def _wait_flush(self, result: PutMessageResult, target: int) -> PutMessageResult:
        assert self._flush_commitlog is not None
        ok = self._flush_commitlog.wait_flushed_blocking(target, self.config.sync_flush_timeout_ms / 1000.0)
        return result if ok else self._not_flushed(result)

    def replica_appender(self, max_pending: int) -> ReplicaAppender:
        """A slave's put path over this store's parts (see ``ha/replica_appender.py``: records are
        checked structurally on the way in, their body CRCs by recovery, as RocketMQ's slave does)."""
        return ReplicaAppender(
            commitlog=self._commitlog,
            dispatcher=self._dispatcher,
            flags=self._flags,
            notify=self._notify,
            check_crc=False,
            max_pending=max_pending,
        )

    def truncate_to(self, offset: int) -> TruncationReport:
        """Cut the commit log, consume queues and index past ``offset`` (a divergent tail)."""
        self._require_open()
        self._dispatcher.dispatched_offset = min(self._dispatcher.dispatched_offset, offset)  # nothing appends now
        report = truncate_tail(self._commitlog, self._queues, self._index, offset)
        if self._checkpoint is not None:  # vouch for nothing past the cut before writing past it
            self._checkpoint.lower_offsets(offset)
        return report

    def add_arrival_listener(self, listener: ArrivalListener) -> None:
        """Call ``listener(topic, queue_id, logic_offset, tags_code)`` after each dispatch, on the
        putting thread; ``logic_offset`` is the queue offset + 1 (RocketMQ's MessageArrivingListener)."""
        self._listeners.append(listener)

    def _notify(self, arrivals: list[tuple[str, int, int, int]]) -> None:
        if not arrivals or not self._listeners:
            return
        for listener in list(self._listeners):
            for topic, queue_id, logic_offset, tags in arrivals:
                try:
                    listener(topic, queue_id, logic_offset, tags)
                except Exception:
                    log.exception("arrival listener failed")

    # --- gets -------------------------------------------------------------------------------

    def get_message(
        self,
        group: str,
        topic: str,
        queue_id: int,
        offset: int,
        max_msg_nums: int,
        tag_codes: set[int] | None = None,
        max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
        *,
        message_filter: MessageFilter | None = None,
    ) -> GetMessageResult:
        """Read up to ``max_msg_nums`` records of a queue from logical ``offset``.

        ``tag_codes`` None matches every message; otherwise units whose tag hash (as a Java int) is
        not in the set, and records whose properties ``message_filter`` (SQL92) refuses, are skipped
        and counted in ``next_begin_offset``. Stops before ``max_total_bytes`` (the first record is
        always returned). Statuses and ``next_begin_offset`` follow RocketMQ's getMessage on a master
        (see ``message_reader.read_queue``).
        """
        self._require_open()
        started = self.clock.monotonic()
        status, next_begin, min_offset, max_offset, records = message_reader.read_queue(
            self._commitlog,
            self._queues.get(topic, queue_id),
            offset,
            max_msg_nums,
            tag_codes,
            max_total_bytes,
            message_filter,
        )
        self._stats.count_get(len(records), (self.clock.monotonic() - started) * 1000)
        return GetMessageResult(status, next_begin, min_offset, max_offset, records, len(records))

    def get_max_offset_in_queue(self, topic: str, queue_id: int) -> int:
        """Number of units in the queue = the offset the next message gets (0 if unknown)."""
        q = self._queues.get(topic, queue_id)
        return q.max_offset if q is not None else 0

    def get_min_offset_in_queue(self, topic: str, queue_id: int) -> int:
        q = self._queues.get(topic, queue_id)
        return q.min_offset if q is not None else 0

    def get_message_store_timestamp(self, topic: str, queue_id: int, offset: int) -> int:
        """Store time of the message at a logical offset, or -1."""
        return message_reader.store_timestamp(self._commitlog, self._queues.get(topic, queue_id), offset)

    def get_earliest_message_time(self, topic: str, queue_id: int) -> int:
        """Store time of the first available message of the queue, or -1."""
        return message_reader.earliest_time(self._commitlog, self._queues.get(topic, queue_id))

    def get_offset_in_queue_by_time(self, topic: str, queue_id: int, timestamp: int) -> int:
        """Logical offset of the message stored at ``timestamp``, else the nearer of its two
        neighbours by store time (the earlier one on a tie); 0 for an unknown or empty queue."""
        return message_reader.offset_by_time(self._commitlog, self._queues.get(topic, queue_id), timestamp)

    def look_message_by_offset(self, commit_log_offset: int) -> bytes | None:
        """Return the raw record starting at a commit log offset, or None."""
        self._require_open()
        return self._commitlog.read_record(commit_log_offset)

    def query_message(
        self, topic: str, key: str, max_num: int, begin_ts: int, end_ts: int, max_total_bytes: int | None = None
    ) -> list[bytes]:
        """Return raw records of ``topic`` whose UNIQ_KEY or one of whose KEYS is ``key``,
        stored within [begin_ts, end_ts], newest first, at most ``max_num`` and (after the
        first) ``max_total_bytes``."""
        self._require_open()
        return message_reader.query_by_key(
            self._commitlog, self._index, topic, key, max_num, begin_ts, end_ts, max_total_bytes
        )

    def index_last_update(self) -> tuple[int, int]:
        """(store time, commit log offset) of the last indexed message, for QUERY_MESSAGE."""
        files = self._index.files
        if not files:
            return 0, 0
        return files[-1].end_timestamp, files[-1].end_phy_offset

    # --- admin ------------------------------------------------------------------------------

    def queue_counts(self) -> dict[str, int]:
        """Each topic that has consume queues: its highest queue id + 1."""
        return self._queues.queue_counts()

    def delete_topics(self, topics: set[str]) -> None:
        """Remove the consume queues of these topics (their records stay in the commit log)."""
        self._require_open()
        for topic in topics:
            try:
                validate_topic(topic)
            except InvalidNameError:
                log.warning("delete_topics: skipping invalid topic name %r", topic)
                continue
            with self._commitlog.lock:
                self._queues.detach_topic(topic)
            self._queues.remove_topic_files(topic)

    @property
    def max_phy_offset(self) -> int:
        return self._commitlog.max_offset

    @property
    def min_phy_offset(self) -> int:
        return self._commitlog.min_offset

    def runtime_info(self) -> dict[str, str]:
        """Store keys of GET_BROKER_RUNTIME_INFO (values are strings, as in RocketMQ)."""
        self._require_open()
        return {
            **store_runtime_info(
                self._stats,
                self._commitlog,
                self.config,
                uptime_ms=self.clock.now_ms() - self._boot_ms,
                boot_ms=self._boot_ms,
                fsync_count=self._flush_commitlog.fsync_count if self._flush_commitlog else 0,
                healthy_error=self.healthy_error,
                write_error=self._flags.write_error,
            ),
            **self._retention.runtime_info(),
        }

    @property
    def retention(self) -> StoreRetention:  # passes now (requests 306, 329), disk usage, the disk-full remark
        return self._retention

    @property
    def stats(self) -> StoreStats:
        return self._stats

    @property
    def commitlog(self) -> CommitLog:
        return self._commitlog

    @property
    def index_service(self) -> IndexService:
        return self._index

    @property
    def running(self) -> bool:
        return self._flags.running

    @property
    def healthy_error(self) -> str | None:
        """Why the store refuses puts until reopened (a dispatch failed), or None."""
        return self._flags.healthy_error

    @property
    def queue_put_bytes(self) -> Mapping[tuple[str, int], int]:
        """Record bytes put to each (topic, queue id) since this store opened (restarts at 0)."""
        return self._queues.queue_put_bytes
