"""MessageStore: what the broker asks of a store (RocketMQ's ``MessageStore`` interface).

The broker holds its store through this Protocol only, so another store can stand behind it
(the next one is a replicated store); :class:`~brokers.engine.store.default_message_store.DefaultMessageStore`
is the local one. Offsets are logical queue offsets unless named ``phy`` (commit log offsets);
times are store times in epoch milliseconds; ``-1`` means "none" where an int is returned.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from brokers.engine.store.message_inner import MessageExtBatch, MessageExtBrokerInner
from brokers.engine.store.results import GetMessageResult, PutMessageResult
from brokers.engine.store.retention import StoreRetention

ArrivalListener = Callable[[str, int, int, int], None]  # (topic, queue id, logic offset, tags code)
MessageFilter = Callable[[dict[str, str]], bool]  # a record's properties -> it matches (the SQL92 filter of a pull)
DEFAULT_MAX_TOTAL_BYTES = 256 * 1024  # maxTransferBytesOnMessageInMemory


class MessageStore(Protocol):
    """The calls the broker makes on its store."""

    broker_role: str  # ASYNC_MASTER, SYNC_MASTER or SLAVE (ha/ha_config.py); a lone local store is ASYNC_MASTER

    # --- lifecycle --------------------------------------------------------------------------

    def open(self) -> None:
        """Lock the directory, recover what the last run left, and start taking puts."""

    def close(self) -> None:
        """Flush everything and release the directory; puts are refused from now on."""

    def flush(self) -> None:
        """Put everything written so far on disk now."""

    def add_arrival_listener(self, listener: ArrivalListener) -> None:
        """Call ``listener(topic, queue_id, logic_offset, tags_code)`` after each dispatch
        (``logic_offset`` = the message's queue offset + 1), on the putting thread."""

    # --- puts -------------------------------------------------------------------------------

    async def put_message(self, msg: MessageExtBrokerInner) -> PutMessageResult:
        """Store one message; with SYNC_FLUSH return after it is on disk."""

    async def put_messages(self, batch: MessageExtBatch) -> PutMessageResult:
        """Store a batch under consecutive queue offsets."""

    def put_message_sync(self, msg: MessageExtBrokerInner) -> PutMessageResult:
        """Blocking ``put_message`` for tools and threads without an event loop."""

    def put_messages_sync(self, batch: MessageExtBatch) -> PutMessageResult:
        """Blocking ``put_messages``."""

    # --- gets and lookups -------------------------------------------------------------------

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
        """Read up to ``max_msg_nums`` records of a queue from ``offset`` (RocketMQ's getMessage), skipping
        those whose tag code is not in ``tag_codes`` or whose properties ``message_filter`` refuses."""

    def get_max_offset_in_queue(self, topic: str, queue_id: int) -> int:
        """The offset the next message of the queue gets (0 for an unknown queue)."""

    def get_min_offset_in_queue(self, topic: str, queue_id: int) -> int:
        """The first offset still readable in the queue."""

    def get_offset_in_queue_by_time(self, topic: str, queue_id: int, timestamp: int) -> int:
        """The offset of the message stored at (or nearest to) ``timestamp``."""

    def get_message_store_timestamp(self, topic: str, queue_id: int, offset: int) -> int:
        """Store time of the message at ``offset``, or -1."""

    def get_earliest_message_time(self, topic: str, queue_id: int) -> int:
        """Store time of the first readable message of the queue, or -1."""

    def look_message_by_offset(self, commit_log_offset: int) -> bytes | None:
        """The raw record starting at a commit log offset, or None."""

    def query_message(
        self, topic: str, key: str, max_num: int, begin_ts: int, end_ts: int, max_total_bytes: int | None = None
    ) -> list[bytes]:
        """Raw records of ``topic`` with ``key`` (KEYS or UNIQ_KEY) stored in [begin_ts, end_ts];
        at most ``max_total_bytes`` of them (but at least one)."""

    def index_last_update(self) -> tuple[int, int]:
        """(store time, commit log offset) of the last indexed message."""

    @property
    def max_phy_offset(self) -> int:
        """The commit log offset the next record gets."""

    @property
    def min_phy_offset(self) -> int:
        """The first commit log offset still on disk."""

    @property
    def queue_put_bytes(self) -> Mapping[tuple[str, int], int]:
        """Record bytes put to each (topic, queue id) since the store opened."""

    # --- admin ------------------------------------------------------------------------------

    def queue_counts(self) -> dict[str, int]:
        """Each topic that has consume queues: its highest queue id + 1."""

    def delete_topics(self, topics: set[str]) -> None:
        """Remove the consume queues of these topics."""

    def runtime_info(self) -> dict[str, str]:
        """Store keys of GET_BROKER_RUNTIME_INFO (string values, as in RocketMQ)."""

    @property
    def retention(self) -> StoreRetention:
        """The clean services: a pass now (requests 306 and 329), the disk-full remark's figures."""
