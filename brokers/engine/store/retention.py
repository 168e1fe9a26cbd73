"""StoreRetention: the store's clean thread and what the broker asks of retention.

RocketMQ's ``cleanFilesPeriodically`` runs ``CleanCommitLogService`` then
``CleanConsumeQueueService`` every ``cleanResourceInterval`` ms on the store's scheduled
executor. Here a daemon thread (never the broker's event loop) runs :meth:`run_pass` as often;
a pass is bounded (``deleteFileBatchMax`` segments, as many files per consume queue and of the
index), takes the put lock only to drop one file from a list at a time, and ends by unmapping
the files deleted earlier that nobody reads any more (``file_reaper.py``). Passes never overlap:
the thread, mqadmin's ``deleteExpiredCommitLog`` (request 329) and ``cleanExpiredCQ`` (request
306) share one lock.

Request 306 (CLEAN_EXPIRED_CONSUMEQUEUE) runs the consume queue part now. RocketMQ's
``cleanExpiredConsumerQueue`` also destroys a queue whose every unit is below the commit log's
min offset, so its next message starts again at offset 0; here each queue keeps its last file
and so its offsets (its min offset moves up to its max offset instead).

``start`` (after recovery) moves every queue's min offset past units whose records an earlier
run deleted, and reads the disk once so a broker restarted on a full disk refuses sends at once.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from brokers.engine.common.clock import Clock
from brokers.engine.store.clean_commitlog_service import CleanCommitLogService, CommitLogCleanResult
from brokers.engine.store.clean_consume_queue_service import CleanConsumeQueueService, LogicsCleanResult
from brokers.engine.store.commitlog import CommitLog
from brokers.engine.store.config import StoreConfig
from brokers.engine.store.consume_queue_table import ConsumeQueueTable
from brokers.engine.store.disk_usage import DiskUsageFn, capacity_text, disk_util_text, os_disk_usage
from brokers.engine.store.file_io import OS_FILE_IO, FileIO
from brokers.engine.store.file_reaper import MappedFileReaper
from brokers.engine.store.index import IndexService
from brokers.engine.store.running_flags import RunningFlags

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class CleanReport:
    """One pass: what the commit log part decided and deleted, what the logics part followed."""

    commitlog: CommitLogCleanResult | None
    logics: LogicsCleanResult
    min_offset_before: int
    min_offset_after: int
    unmapped: int = 0
    errors: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        cl = self.commitlog
        return {
            "deletedCommitLogFiles": len(cl.deleted) if cl else 0,
            "deletedConsumeQueueFiles": self.logics.consume_queue_files,
            "deletedIndexFiles": self.logics.index_files,
            "commitLogMinOffsetBefore": self.min_offset_before,
            "commitLogMinOffsetAfter": self.min_offset_after,
            "diskRatio": cl.disk_ratio if cl else None,
            "errors": list(self.errors),
        }


class StoreRetention:
    """The clean services of one store, their thread, and their runtime figures."""

    def __init__(
        self,
        *,
        config: StoreConfig,
        commitlog: CommitLog,
        queues: ConsumeQueueTable,
        index: IndexService,
        flags: RunningFlags,
        clock: Clock,
        disk_usage: DiskUsageFn = os_disk_usage,
        file_io: FileIO = OS_FILE_IO,
    ) -> None:
        self._config = config
        self._commitlog = commitlog
        self._queues = queues
        self._clock = clock
        self.reaper = MappedFileReaper(clock.monotonic)
        self.commitlog_service = CleanCommitLogService(
            config=config,
            commitlog=commitlog,
            flags=flags,
            clock=clock,
            disk_usage=disk_usage,
            file_io=file_io,
            reaper=self.reaper,
        )
        self.logics_service = CleanConsumeQueueService(
            commitlog=commitlog,
            queues=queues,
            index=index,
            file_io=file_io,
            reaper=self.reaper,
            files_per_queue=config.delete_files_batch_max,
        )
        self._pass_lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.last_clean_timestamp = 0  # ms of the last pass that deleted something (0 = never)
        self.cleaned_files_total = 0  # commit log segments deleted since the store opened
        self.last_report: CleanReport | None = None

    @property
    def disk_usage(self) -> DiskUsageFn:
        return self.commitlog_service.disk_usage

    @disk_usage.setter
    def disk_usage(self, fn: DiskUsageFn) -> None:
        """Replace how disk usage is read (tests pretend a ratio)."""
        self.commitlog_service.disk_usage = fn

    # --- lifecycle --------------------------------------------------------------------------

    def start(self) -> None:
        """After recovery: correct every queue's min offset, read the disk once, and start the
        clean thread (a pass every ``cleanResourceInterval`` ms)."""
        min_phy = self._commitlog.min_offset
        for q in self._queues.queues():
            q.correct_min_offset(min_phy, self._commitlog.lock)
        self.commitlog_service.check_disk()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="CleanCommitLogService", daemon=True)
        self._thread.start()

    def shutdown(self) -> None:
        """Stop the thread (a pass under way finishes first) and unmap what can be."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None and self._thread.is_alive():
            self._thread.join()
        self._thread = None
        with self._pass_lock:
            self.reaper.close()

    def _run(self) -> None:
        interval = self._config.clean_resource_interval_ms / 1000.0
        while not self._stop.is_set():
            self._wake.wait(interval)
            self._wake.clear()
            if self._stop.is_set():
                return
            self.run_pass()

    # --- passes -----------------------------------------------------------------------------

    def run_pass(self) -> CleanReport:
        """One clean pass now, on the calling thread (never call it on the event loop)."""
        with self._pass_lock:
            before = self._commitlog.min_offset
            errors: list[str] = []
            cl_result: CommitLogCleanResult | None = None
            try:
                cl_result = self.commitlog_service.run()
            except Exception as exc:  # keep the thread; the next pass may succeed
                log.exception("commit log clean pass failed")
                errors.append(f"commit log: {exc}")
            return self._finish(before, cl_result, errors, force_logics=False)

    def execute_delete_files_manually(self) -> CleanReport:
        """mqadmin ``deleteExpiredCommitLog`` (request 329): expired segments go on this pass and
        the next 19, whatever the hour (RocketMQ's executeDeleteFilesManually); run one pass now."""
        self.commitlog_service.execute_delete_files_manually()
        return self.run_pass()

    def clean_expired_consume_queue(self) -> CleanReport:
        """Request 306: drop consume queue and index files below the commit log's min offset now."""
        with self._pass_lock:
            return self._finish(self._commitlog.min_offset, None, [], force_logics=True)

    def _finish(
        self, before: int, cl_result: CommitLogCleanResult | None, errors: list[str], *, force_logics: bool
    ) -> CleanReport:
        logics = LogicsCleanResult(self._commitlog.min_offset)
        try:
            logics = self.logics_service.run(force=force_logics)
        except Exception as exc:
            log.exception("consume queue clean pass failed")
            errors.append(f"consume queues: {exc}")
        unmapped = self.reaper.reap()
        deleted = len(cl_result.deleted) if cl_result else 0
        if deleted or logics.consume_queue_files or logics.index_files:
            self.last_clean_timestamp = self._clock.now_ms()
            self.cleaned_files_total += deleted
        report = CleanReport(cl_result, logics, before, self._commitlog.min_offset, unmapped, tuple(errors))
        self.last_report = report
        return report

    # --- what operators see -----------------------------------------------------------------

    def disk_util(self) -> str:
        """SendMessageProcessor's ``diskUtil()`` figures for the disk-full remark."""
        cfg, usage = self._config, self.disk_usage
        return disk_util_text(usage(cfg.commitlog_dir), usage(cfg.consume_queue_dir), usage(cfg.index_dir))

    def runtime_info(self) -> dict[str, str]:
        """The retention keys of GET_BROKER_RUNTIME_INFO (see docs: the runtime-info contract)."""
        cfg, ratios = self._config, self.commitlog_service.ratios
        cl_usage = self.disk_usage(cfg.commitlog_dir)
        cq_usage = self.disk_usage(cfg.consume_queue_dir)
        return {
            "commitLogDiskRatio": repr(cl_usage.ratio),
            "consumeQueueDiskRatio": repr(cq_usage.ratio),
            "commitLogDirCapacity": capacity_text(cl_usage),
            "diskTotalBytes": str(cl_usage.total),
            "diskUsedBytes": str(cl_usage.used),
            "fileReservedTime": f"{cfg.file_reserved_time_hours:g}",
            "deleteWhen": cfg.delete_when,
            "diskMaxUsedSpaceRatio": repr(ratios.max_used),
            "diskSpaceCleanForciblyRatio": repr(ratios.clean_forcibly),
            "diskSpaceWarningLevelRatio": repr(ratios.warning_level),
            "diskFull": "true" if self.commitlog_service.disk_full else "false",
            "lastCleanTimeStamp": str(self.last_clean_timestamp),
            "cleanedFilesTotal": str(self.cleaned_files_total),
        }


def retention_properties(config: StoreConfig) -> dict[str, str]:
    """The retention settings under RocketMQ's names and units, for GET_BROKER_CONFIG (ratios in
    percent, as MessageStoreConfig holds them)."""
    return {
        "fileReservedTime": f"{config.file_reserved_time_hours:g}",
        "deleteWhen": config.delete_when,
        "diskMaxUsedSpaceRatio": f"{config.disk_max_used_space_ratio * 100:g}",
        "diskSpaceCleanForciblyRatio": f"{config.disk_space_clean_forcibly_ratio * 100:g}",
        "diskSpaceWarningLevelRatio": f"{config.disk_space_warning_level_ratio * 100:g}",
        "cleanResourceInterval": str(config.clean_resource_interval_ms),
        "deleteFileBatchMax": str(config.delete_files_batch_max),
        "cleanFileForciblyEnable": str(config.clean_file_forcibly_enable).lower(),
    }
