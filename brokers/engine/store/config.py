"""StoreConfig: where the store lives, how it flushes, and its size limits.

Defaults are RocketMQ 4.9.x's MessageStoreConfig values (reference §6 and §7.2); each carries
its reason. The directory layout under ``store_dir`` is RocketMQ's::

    commitlog/<20-digit start offset>
    consumequeue/<topic>/<queue id>/<20-digit start byte offset>
    index/<yyyyMMddHHmmssSSS>
    checkpoint   abort   lock
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from brokers.engine.common.constants import MAX_MESSAGE_SIZE
from brokers.engine.common.message_codec import host_to_bytes
from brokers.engine.store.delete_when import DEFAULT_DELETE_WHEN, parse_delete_when

ASYNC_FLUSH = "ASYNC_FLUSH"
SYNC_FLUSH = "SYNC_FLUSH"
FLUSH_DISK_TYPES = frozenset({ASYNC_FLUSH, SYNC_FLUSH})

# Smallest commit log segment we accept: room for a small record plus the blank marker.
MIN_COMMITLOG_FILE_SIZE = 256


@dataclass(frozen=True, slots=True)
class StoreConfig:
    store_dir: str
    # ASYNC_FLUSH answers producers once the record is in the page cache (RocketMQ default);
    # SYNC_FLUSH answers only after a group-commit fdatasync covered the record.
    flush_disk_type: str = ASYNC_FLUSH
    commitlog_file_size: int = 1 << 30  # mappedFileSizeCommitLog, 1 GiB
    consume_queue_units_per_file: int = 300_000  # 6,000,000-byte consume queue files
    flush_interval_commitlog_ms: int = 500  # flushIntervalCommitLog
    flush_interval_consume_queue_ms: int = 1000  # flushIntervalConsumeQueue
    sync_flush_timeout_ms: int = 5000  # syncFlushTimeout -> FLUSH_DISK_TIMEOUT (put_message_sync waits this long)
    max_message_size: int = MAX_MESSAGE_SIZE  # maxMessageSize, 4 MiB of body
    store_host: str = "127.0.0.1:10911"  # brokerIP1:listenPort, embedded in every record and msg id
    max_index_hash_slots: int = 5_000_000  # maxHashSlotNum
    max_index_count: int = 20_000_000  # maxIndexNum (item 0 unused)
    check_crc_on_recover: bool = True  # checkCRCOnRecover
    # Retention (``retention.py``). RocketMQ keeps the ratios as percentages (75, 85, 90); here they
    # are fractions, and GET_BROKER_CONFIG prints them RocketMQ's way.
    file_reserved_time_hours: float = 72  # fileReservedTime: a segment this old (since its last write) is expired
    delete_when: str = DEFAULT_DELETE_WHEN  # deleteWhen: hour(s) of the local day when expired segments go
    disk_max_used_space_ratio: float = 0.75  # diskMaxUsedSpaceRatio: above it, expired segments go at any hour
    disk_space_clean_forcibly_ratio: float = 0.85  # diskSpaceCleanForciblyRatio: above it, the oldest go unexpired
    disk_space_warning_level_ratio: float = 0.90  # diskSpaceWarningLevelRatio: above it, sends are refused
    clean_resource_interval_ms: int = 10_000  # cleanResourceInterval: one clean pass this often
    delete_files_batch_max: int = 10  # deleteFileBatchMax: commit log segments deleted per pass, at most
    clean_file_forcibly_enable: bool = True  # cleanFileForciblyEnable: above the forcible ratio, ignore expiry

    def __post_init__(self) -> None:
        if not self.store_dir:
            raise ValueError("store_dir must be set")
        if self.flush_disk_type not in FLUSH_DISK_TYPES:
            raise ValueError(f"flush_disk_type must be one of {sorted(FLUSH_DISK_TYPES)}, got {self.flush_disk_type!r}")
        if self.commitlog_file_size < MIN_COMMITLOG_FILE_SIZE:
            raise ValueError(f"commitlog_file_size must be at least {MIN_COMMITLOG_FILE_SIZE}")
        for name in (
            "consume_queue_units_per_file",
            "flush_interval_commitlog_ms",
            "flush_interval_consume_queue_ms",
            "sync_flush_timeout_ms",
            "max_message_size",
            "max_index_hash_slots",
        ):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        if self.max_index_count < 2:
            raise ValueError("max_index_count must be at least 2 (index item 0 is unused)")
        host_to_bytes(self.store_host)  # raises ValueError unless "ip:port" with a literal IP
        self._check_retention()

    def _check_retention(self) -> None:
        """Refuse retention settings RocketMQ would misread, naming the setting (both spellings)."""
        for name, java in (
            ("disk_max_used_space_ratio", "diskMaxUsedSpaceRatio"),
            ("disk_space_clean_forcibly_ratio", "diskSpaceCleanForciblyRatio"),
            ("disk_space_warning_level_ratio", "diskSpaceWarningLevelRatio"),
        ):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or math.isnan(value)
                or not 0 <= value <= 1
            ):
                raise ValueError(f"{java} ({name}) must be a fraction within 0..1 (0.75 = 75 %), got {value!r}")
        hours = self.file_reserved_time_hours
        if isinstance(hours, bool) or not isinstance(hours, (int, float)) or not 0 < hours < math.inf:
            raise ValueError(
                f"fileReservedTime (file_reserved_time_hours) must be a positive number of hours, got {hours!r}"
            )
        parse_delete_when(self.delete_when)
        for name, java in (
            ("clean_resource_interval_ms", "cleanResourceInterval"),
            ("delete_files_batch_max", "deleteFileBatchMax"),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"{java} ({name}) must be a positive integer, got {value!r}")

    @property
    def commitlog_dir(self) -> str:
        return os.path.join(self.store_dir, "commitlog")

    @property
    def consume_queue_dir(self) -> str:
        return os.path.join(self.store_dir, "consumequeue")

    @property
    def index_dir(self) -> str:
        return os.path.join(self.store_dir, "index")

    @property
    def checkpoint_path(self) -> str:
        return os.path.join(self.store_dir, "checkpoint")

    @property
    def abort_path(self) -> str:
        return os.path.join(self.store_dir, "abort")

    @property
    def lock_path(self) -> str:
        return os.path.join(self.store_dir, "lock")

    @property
    def sync_flush(self) -> bool:
        return self.flush_disk_type == SYNC_FLUSH
