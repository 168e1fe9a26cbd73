"""StoreConfig: where the store lives, how it flushes, and its size limits.

Defaults are RocketMQ 4.9.x's MessageStoreConfig values (reference §6 and §7.2); each carries
its reason. The directory layout under ``store_dir`` is RocketMQ's::

    commitlog/<20-digit start offset>
    consumequeue/<topic>/<queue id>/<20-digit start byte offset>
    index/<yyyyMMddHHmmssSSS>
    checkpoint   abort   lock
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from brokers.engine.common.constants import MAX_MESSAGE_SIZE
from brokers.engine.common.message_codec import host_to_bytes

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

    def __post_init__(self) -> None:
        if not self.store_dir:
            raise ValueError("store_dir must be set")
        if self.flush_disk_type not in FLUSH_DISK_TYPES:
            raise ValueError(f"flush_disk_type must be one of {sorted(FLUSH_DISK_TYPES)}, got {self.flush_disk_type!r}")
        if self.commitlog_file_size < MIN_COMMITLOG_FILE_SIZE:
            raise ValueError(f"commitlog_file_size must be at least {MIN_COMMITLOG_FILE_SIZE}")
        for name in ("consume_queue_units_per_file", "flush_interval_commitlog_ms",
                     "flush_interval_consume_queue_ms", "sync_flush_timeout_ms", "max_message_size",
                     "max_index_hash_slots"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        if self.max_index_count < 2:
            raise ValueError("max_index_count must be at least 2 (index item 0 is unused)")
        host_to_bytes(self.store_host)  # raises ValueError unless "ip:port" with a literal IP

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
