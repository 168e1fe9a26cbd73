"""What the store answers: put and get statuses and results (RocketMQ's names)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class PutMessageStatus(Enum):
    PUT_OK = "PUT_OK"
    FLUSH_DISK_TIMEOUT = "FLUSH_DISK_TIMEOUT"  # stored, but the sync flush did not confirm in time
    FLUSH_SLAVE_TIMEOUT = "FLUSH_SLAVE_TIMEOUT"  # stored on the master; no slave ack within syncFlushTimeout
    SLAVE_NOT_AVAILABLE = "SLAVE_NOT_AVAILABLE"  # stored on the master; no slave connected (or too far behind)
    CREATE_MAPED_FILE_FAILED = "CREATE_MAPED_FILE_FAILED"  # RocketMQ's spelling
    MESSAGE_ILLEGAL = "MESSAGE_ILLEGAL"
    PROPERTIES_SIZE_EXCEEDED = "PROPERTIES_SIZE_EXCEEDED"
    SERVICE_NOT_AVAILABLE = "SERVICE_NOT_AVAILABLE"
    UNKNOWN_ERROR = "UNKNOWN_ERROR"


class GetMessageStatus(Enum):
    FOUND = "FOUND"
    NO_MATCHED_MESSAGE = "NO_MATCHED_MESSAGE"
    MESSAGE_WAS_REMOVING = "MESSAGE_WAS_REMOVING"
    OFFSET_FOUND_NULL = "OFFSET_FOUND_NULL"
    OFFSET_OVERFLOW_BADLY = "OFFSET_OVERFLOW_BADLY"
    OFFSET_OVERFLOW_ONE = "OFFSET_OVERFLOW_ONE"
    OFFSET_TOO_SMALL = "OFFSET_TOO_SMALL"
    NO_MATCHED_LOGIC_QUEUE = "NO_MATCHED_LOGIC_QUEUE"
    NO_MESSAGE_IN_QUEUE = "NO_MESSAGE_IN_QUEUE"


@dataclass(frozen=True, slots=True)
class PutMessageResult:
    """Outcome of a put. For a batch ``msg_id`` joins the offset msg ids with ``,`` and
    ``queue_offset``/``wrote_offset`` are the first message's."""

    status: PutMessageStatus
    msg_id: str = ""
    queue_offset: int = 0
    wrote_offset: int = 0
    wrote_bytes: int = 0
    msg_num: int = 0
    store_timestamp: int = 0

    @property
    def ok(self) -> bool:
        return self.status is PutMessageStatus.PUT_OK

    @property
    def stored(self) -> bool:
        """True when the message is in the store, whatever the flush or the slave said."""
        return self.status in STORED_STATUSES


@dataclass(frozen=True, slots=True)
class GetMessageResult:
    """Outcome of a pull: raw records (concatenate them for a pull body) and the offsets."""

    status: GetMessageStatus
    next_begin_offset: int
    min_offset: int
    max_offset: int
    records: list[bytes] = field(default_factory=list)
    message_count: int = 0
    # RocketMQ's suggestPullingFromSlave: what is left to read after this batch is more than
    # accessMessageInMemoryMaxRatio of the RAM (likely off the page cache); set by HAMessageStore.
    suggest_pulling_from_slave: bool = False

    @property
    def buffer_total_size(self) -> int:
        return sum(len(r) for r in self.records)


STORED_STATUSES = frozenset(
    {
        PutMessageStatus.PUT_OK,
        PutMessageStatus.FLUSH_DISK_TIMEOUT,
        PutMessageStatus.FLUSH_SLAVE_TIMEOUT,
        PutMessageStatus.SLAVE_NOT_AVAILABLE,
    }
)
