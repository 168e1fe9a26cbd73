"""SendResult and SendStatus: what a stored send answers (RocketMQ's classes of those names)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from brokers.engine.common.message_queue import MessageQueue

__all__ = ["SendResult", "SendStatus"]


class SendStatus(str, Enum):
    SEND_OK = "SEND_OK"
    FLUSH_DISK_TIMEOUT = "FLUSH_DISK_TIMEOUT"
    FLUSH_SLAVE_TIMEOUT = "FLUSH_SLAVE_TIMEOUT"
    SLAVE_NOT_AVAILABLE = "SLAVE_NOT_AVAILABLE"


@dataclass(frozen=True, slots=True)
class SendResult:
    """Outcome of a stored send; ``msg_id`` is the UNIQ_KEY (comma-joined for a batch)."""

    status: SendStatus
    msg_id: str
    offset_msg_id: str  # store host + commit-log offset; comma-joined for a batch
    message_queue: MessageQueue
    queue_offset: int  # of the first message for a batch
    region_id: str = "DefaultRegion"
