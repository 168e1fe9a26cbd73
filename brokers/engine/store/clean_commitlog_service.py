"""CleanCommitLogService: delete expired commit log segments, and say when the disk is full
(RocketMQ's ``DefaultMessageStore.CleanCommitLogService``).

A pass deletes when one of three holds:

* **time**: the local hour is in ``deleteWhen`` (``delete_when.py``);
* **space**: the commit log's or the consume queues' filesystem is used above
  ``diskMaxUsedSpaceRatio``;
* **manual**: ``execute_delete_files_manually`` was called (mqadmin ``deleteExpiredCommitLog``,
  request 329) within the last 20 passes (RocketMQ's MAX_MANUAL_DELETE_FILE_TIMES).

It then deletes, oldest first and never the newest segment, segments last written at least
``fileReservedTime`` hours ago, stopping at the first younger one (no hole in the middle of the
log) and after ``deleteFileBatchMax`` segments. Above ``diskSpaceCleanForciblyRatio`` (with
``cleanFileForciblyEnable``) the age is ignored: the oldest segments go even if unexpired. Above
``diskSpaceWarningLevelRatio`` the store's disk-full bit is set, so puts answer
SERVICE_NOT_AVAILABLE until a later pass finds usage below it again.

As RocketMQ does, the three ratios are clamped to what it accepts: the warning level to
0.35..0.90, the forcible ratio to 0.30..0.85, the max used ratio to 0.10..0.95.

A segment's age comes from the store's clock (``CommitLog.last_modified_ms``), so tests age a
store by hours in milliseconds. Deleting a segment drops it from the log's list under the put
lock, unlinks it through the FileIO, and leaves the unmap to the reaper (``file_reaper.py``).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from brokers.engine.common.clock import Clock
from brokers.engine.store.commitlog import CommitLog
from brokers.engine.store.config import StoreConfig
from brokers.engine.store.delete_when import is_time_to_delete, parse_delete_when
from brokers.engine.store.disk_usage import DiskUsageFn
from brokers.engine.store.file_io import FileIO
from brokers.engine.store.file_reaper import MappedFileReaper
from brokers.engine.store.running_flags import RunningFlags

log = logging.getLogger(__name__)

MAX_MANUAL_DELETE_FILE_TIMES = 20  # passes a manual request keeps deleting expired segments


def _clamp(value: float, low: float, high: float) -> float:
    return min(max(value, low), high)


@dataclass(frozen=True, slots=True)
class RetentionRatios:
    """The three disk ratios a pass acts on (RocketMQ's clamps applied), as fractions."""

    max_used: float
    clean_forcibly: float
    warning_level: float

    @classmethod
    def of(cls, config: StoreConfig) -> RetentionRatios:
        return cls(
            _clamp(config.disk_max_used_space_ratio, 0.10, 0.95),
            _clamp(config.disk_space_clean_forcibly_ratio, 0.30, 0.85),
            _clamp(config.disk_space_warning_level_ratio, 0.35, 0.90),
        )


@dataclass(frozen=True, slots=True)
class CommitLogCleanResult:
    """What one pass decided and deleted."""

    time_up: bool
    space_to_delete: bool
    manual: bool
    clean_immediately: bool
    disk_ratio: float
    deleted: tuple[str, ...] = ()


class CleanCommitLogService:
    """Decide and delete; run by the store's clean thread (``retention.py``), one pass at a time."""

    def __init__(
        self,
        *,
        config: StoreConfig,
        commitlog: CommitLog,
        flags: RunningFlags,
        clock: Clock,
        disk_usage: DiskUsageFn,
        file_io: FileIO,
        reaper: MappedFileReaper,
    ) -> None:
        self._config = config
        self._commitlog = commitlog
        self._flags = flags
        self._clock = clock
        self.disk_usage = disk_usage  # replaceable: tests pretend a ratio
        self._file_io = file_io
        self._reaper = reaper
        self._hours = parse_delete_when(config.delete_when)
        self.ratios = RetentionRatios.of(config)
        self._manual_lock = threading.Lock()
        self._manual_times = 0

    def execute_delete_files_manually(self) -> None:
        """Delete expired segments on the next passes whatever the hour (RocketMQ's executeDeleteFilesManually)."""
        with self._manual_lock:
            self._manual_times = MAX_MANUAL_DELETE_FILE_TIMES
        log.info("executeDeleteFilesManually was invoked")

    @property
    def manual_delete_times(self) -> int:
        return self._manual_times

    @property
    def disk_full(self) -> bool:
        """The store's disk-full bit: sends are refused while it is set."""
        return self._flags.disk_full

    def disk_ratio(self) -> float:
        """The higher used ratio of the commit log's and the consume queues' filesystems (-1 unknown)."""
        return max(
            self.disk_usage(self._config.commitlog_dir).ratio, self.disk_usage(self._config.consume_queue_dir).ratio
        )

    def check_disk(self) -> tuple[float, bool, bool]:
        """Set or clear the disk-full bit; return (ratio, space to delete, clean immediately)."""
        ratio, r = self.disk_ratio(), self.ratios
        if ratio > r.warning_level:
            if self._flags.get_and_make_disk_full():
                log.error(
                    "disk maybe full soon: %.4f used (diskSpaceWarningLevelRatio %.2f), so mark disk full "
                    "and refuse sends",
                    ratio,
                    r.warning_level,
                )
            return ratio, True, True
        if not self._flags.get_and_make_disk_ok():
            log.info("disk space OK again: %.4f used, so mark disk ok and take sends", ratio)
        if ratio > r.clean_forcibly:
            return ratio, True, True
        return ratio, ratio > r.max_used, False

    def run(self) -> CommitLogCleanResult:
        """One pass: check the disk, then delete what the rules above allow."""
        ratio, space, immediately = self.check_disk()
        time_up = is_time_to_delete(self._hours, self._clock.now_ms())
        with self._manual_lock:
            manual = self._manual_times > 0
            if manual:
                self._manual_times -= 1
        if not (time_up or space or manual):
            return CommitLogCleanResult(time_up, space, manual, immediately, ratio)
        clean_at_once = self._config.clean_file_forcibly_enable and immediately
        deleted = self.delete_expired_files(int(self._config.file_reserved_time_hours * 3_600_000), clean_at_once)
        if deleted:
            log.info(
                "deleted %d commit log segment(s) (time %s, space %s at %.4f, manual %s, forcibly %s); min offset now %d",
                len(deleted),
                time_up,
                space,
                ratio,
                manual,
                clean_at_once,
                self._commitlog.min_offset,
            )
        elif space:
            log.warning("disk space will be full soon (%.4f used), but no commit log segment could be deleted", ratio)
        return CommitLogCleanResult(time_up, space, manual, immediately, ratio, tuple(deleted))

    def delete_expired_files(self, expired_ms: int, clean_at_once: bool) -> list[str]:
        """Delete up to ``deleteFileBatchMax`` of the oldest segments last written ``expired_ms``
        ago or more (any age with ``clean_at_once``); never the newest; return their paths."""
        cl, deleted = self._commitlog, list[str]()
        now = self._clock.now_ms()
        while len(deleted) < self._config.delete_files_batch_max:
            files = cl.files
            if len(files) < 2:
                break
            mf = files[0]
            if not clean_at_once and now < cl.last_modified_ms(mf) + expired_ms:
                break  # the oldest is not expired: nothing after it is either
            if not cl.retire_oldest(mf):
                break
            try:
                self._file_io.unlink(mf.path)
            except OSError as exc:  # the log no longer uses it; the next start finds it again
                log.error("could not delete commit log segment %s: %s", mf.path, exc)
            self._reaper.retire(mf)
            deleted.append(mf.path)
        if deleted:
            self._file_io.sync_dir(cl.directory)
        return deleted
