"""HAMessageStore: the broker's :class:`MessageStore` for a member of a broker group.

It wraps the local :class:`DefaultMessageStore` and adds what the role asks:

* every broker runs an :class:`HAService` on its HA port (a slave's answers NOT_MASTER, so a
  slave pointed at another slave hears a clear refusal);
* ``SLAVE``: puts answer SERVICE_NOT_AVAILABLE (RocketMQ's DefaultMessageStore.putMessage on a
  slave); an :class:`HAClient` copies the master's commit log into the local store;
* ``SYNC_MASTER``: a put that the client waits for (``WAIT`` true) is answered once a slave has
  acknowledged up to the end of its record(s) and, under SYNC_FLUSH, the local group commit
  has synced them (the two waits run at once): SLAVE_NOT_AVAILABLE (once flushed) when no
  slave is connected or the best one is more than ``slave_fallbehind_max`` behind,
  FLUSH_SLAVE_TIMEOUT after ``sync_timeout_ms``; the message is stored on the master either way;
* ``ASYNC_MASTER``: puts answer at once, the slaves follow behind;
* gets carry ``suggest_pulling_from_slave`` (RocketMQ: the bytes left to read after this batch
  exceed ``access_message_in_memory_max_ratio`` percent of the RAM);
* ``runtime_info`` adds the role, the group epoch and the HA figures (connections, offsets, lag);
* the group epoch history lives in ``<store_dir>/epoch`` (``epoch_file.py``); ``become_master``
  (a promotion: a new epoch starting at this log's end) and ``become_slave`` (a stale master
  stepping down) change the role online; a slave whose log diverges from its new master's cuts
  the tail (``tail_truncation.py``) and logs what it cut.

``open()`` opens the local store (blocking, as before); ``start_ha()``/``stop_ha()`` run the HA
parts on the broker's loop, between ``open()`` and ``close()``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import struct
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, TypeVar

from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.store.commitlog import CommitLog
from brokers.engine.store.config import StoreConfig
from brokers.engine.store.default_message_store import DefaultMessageStore
from brokers.engine.store.file_io import OS_FILE_IO, FileIO
from brokers.engine.store.ha.epoch_file import EpochEntry, EpochFile
from brokers.engine.store.ha.ha_client import HAClient
from brokers.engine.store.ha.ha_config import MASTER_ROLES, SLAVE, SYNC_MASTER, HAConfig
from brokers.engine.store.ha.ha_service import HAService
from brokers.engine.store.message_inner import MessageExtBatch, MessageExtBrokerInner
from brokers.engine.store.message_store import DEFAULT_MAX_TOTAL_BYTES, ArrivalListener, MessageFilter
from brokers.engine.store.results import GetMessageResult, PutMessageResult, PutMessageStatus
from brokers.engine.store.recovery import RecoveryReport
from brokers.engine.store.retention import StoreRetention
from brokers.engine.store.ha.tail_truncation import TruncationReport

log = logging.getLogger("brokers.engine.store.ha")

_T = TypeVar("_T")
_I64 = struct.Struct(">q")
_PHYSICAL_OFFSET_POS = 28  # PHYSICALOFFSET's position in a record


def total_physical_memory() -> int:
    """RAM in bytes (RocketMQ's StoreUtil.TOTAL_PHYSICAL_MEMORY_SIZE); 8 GiB when unknown."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def suggest_pulling_from_slave(
    max_phy_offset: int, last_pulled_phy_offset: int, memory: int, ratio_percent: int
) -> bool:
    """RocketMQ's rule: more than ``ratio_percent`` % of ``memory`` still to read after the batch."""
    return max_phy_offset - last_pulled_phy_offset > memory * (ratio_percent / 100.0)


class HAMessageStore:
    """A broker group member's store (see the module docstring)."""

    def __init__(
        self,
        config: StoreConfig,
        ha_config: HAConfig,
        clock: Clock = SYSTEM_CLOCK,
        *,
        file_io: FileIO = OS_FILE_IO,
        broker_addr: Callable[[], str] = lambda: "",
        master_address: Callable[[], str | None] = lambda: None,
        on_master: Callable[[str], None] | None = None,
        on_stale: Callable[[int], None] | None = None,
    ) -> None:
        self.config = config
        self.epochs = EpochFile(config.store_dir, file_io)
        self._on_stale = on_stale
        self.last_truncation: TruncationReport | None = None
        self.ha_config = ha_config
        self.clock = clock
        self.local = DefaultMessageStore(config, clock, file_io)
        self.broker_role = ha_config.broker_role
        self._broker_addr = broker_addr
        self._master_address = master_address
        self._on_master = on_master
        self._memory = total_physical_memory()
        self.ha_service: HAService | None = None
        self.ha_client: HAClient | None = None

    # --- lifecycle --------------------------------------------------------------------------

    def open(self) -> None:
        self.epochs.load()  # a malformed file stops the open, before the store is locked
        self.local.open()

    def close(self) -> None:
        self.local.close()

    def flush(self) -> None:
        self.local.flush()

    async def start_ha(self) -> None:
        """Listen on the HA port; on a slave, start copying from the master."""
        self.ha_service = HAService(
            commitlog=self.local.commitlog,
            config=self.ha_config,
            clock=self.clock,
            role=lambda: self.broker_role,
            broker_addr=self._broker_addr,
            history=self._history_pairs,
            on_stale=self._on_stale,
        )
        await self.ha_service.start()
        if self.broker_role == SLAVE:
            self._start_ha_client()

    def _start_ha_client(self) -> None:
        wait_flushed = self.local.flush_service.wait_flushed if self.config.sync_flush else None
        self.ha_client = HAClient(
            commitlog=self.local.commitlog,
            appender=self.local.replica_appender(2 * self.config.max_message_size + (1 << 20)),
            config=self.ha_config,
            clock=self.clock,
            master_address=self._master_address_now,
            wait_flushed=wait_flushed,
            on_master=self._on_master,
            history=lambda: self.epochs.entries,
            adopt_history=self.epochs.replace,
            truncate=self._truncate,
        )
        self.ha_client.start()
        log.info("slave store: replicating from %s", self._master_address_now() or "the master the name servers name")

    # --- epochs and changes of role -----------------------------------------------------------

    @property
    def epoch(self) -> int:
        return self.epochs.epoch

    def _history_pairs(self) -> tuple[tuple[int, int], ...]:
        return tuple((e.epoch, e.start_offset) for e in self.epochs.entries)

    def _truncate(self, offset: int, why: str) -> None:
        report = self.local.truncate_to(offset)
        self.last_truncation = report
        log.warning("TRUNCATED divergent tail: %s: %s", why, report)

    async def become_master(self, role: str, epoch: int) -> EpochEntry:
        """Stop copying, start epoch ``epoch`` at this log's end and take writes as ``role``."""
        if role not in MASTER_ROLES:
            raise ValueError(f"a master's role is ASYNC_MASTER or SYNC_MASTER, not {role!r}")
        if epoch <= self.epochs.epoch:
            raise ValueError(f"the new epoch {epoch} must be above the current {self.epochs.epoch}")
        if self.ha_client is not None:
            await self.ha_client.stop()
            self.ha_client = None
        entry = EpochEntry(epoch, self.local.max_phy_offset)
        self.epochs.begin(entry.epoch, entry.start_offset)
        self.broker_role = role
        return entry

    def fence(self) -> None:
        """Stop taking writes at once (a stale master); ``become_slave`` follows."""
        self.broker_role = SLAVE
        if self.ha_service is not None:
            self.ha_service.drop_connections()

    async def become_slave(self) -> None:
        """Replicate from the master the broker names (truncating a divergent tail first)."""
        self.fence()
        if self.ha_client is None:
            self._start_ha_client()

    async def stop_ha(self) -> None:
        if self.ha_client is not None:
            await self.ha_client.stop()
        if self.ha_service is not None:
            await self.ha_service.stop()

    def _master_address_now(self) -> str | None:
        return self.ha_config.master_address or self._master_address()

    @property
    def ha_port(self) -> int:
        return self.ha_service.port if self.ha_service is not None else 0

    def add_arrival_listener(self, listener: ArrivalListener) -> None:
        self.local.add_arrival_listener(listener)

    # --- puts -------------------------------------------------------------------------------

    def _appended(self, outcome: _T) -> _T:
        """Wake the HA senders once per put, whatever it appended (a batch of 32 is one call; a
        record no consume queue takes grew the log too), and pass the put's outcome on."""
        if self.ha_service is not None:
            self.ha_service.notify_appended()
        return outcome

    def _refuse_on_slave(self) -> PutMessageResult | None:
        if self.broker_role == SLAVE:
            self.local.stats.put_message_failed_times += 1
            return PutMessageResult(PutMessageStatus.SERVICE_NOT_AVAILABLE)
        return None

    async def _finish_put(
        self, result: PutMessageResult, flush: asyncio.Future[bool] | None, wait: bool
    ) -> PutMessageResult:
        """Wait for what the put needs: the local group commit (SYNC_FLUSH, already started) and,
        on a SYNC_MASTER, a slave's ack of the record(s) (see the module docstring). Both waits
        run at once, as RocketMQ 4.9's ``thenCombine`` of the flush and replica futures; the
        answer is OK only when both succeeded, and a replica status wins over a flush status."""
        if self.broker_role != SYNC_MASTER or not wait or not result.stored or self.ha_service is None:
            return await self.local.flushed(result, flush)
        end = result.wrote_offset + result.wrote_bytes
        slave = self.ha_service.wait_for_slave(end) if self.ha_service.is_slave_ok() else None
        result = await self.local.flushed(result, flush)
        if slave is None:
            return replace(result, status=PutMessageStatus.SLAVE_NOT_AVAILABLE)
        if not await slave:
            log.warning(
                "no slave acknowledged offset %d within %d ms: FLUSH_SLAVE_TIMEOUT", end, self.ha_config.sync_timeout_ms
            )
            return replace(result, status=PutMessageStatus.FLUSH_SLAVE_TIMEOUT)
        return result

    async def put_message(self, msg: MessageExtBrokerInner) -> PutMessageResult:
        refused = self._refuse_on_slave()
        if refused is not None:
            return refused
        return await self._finish_put(*self._appended(self.local.put_message_started(msg)), msg.wait_store_msg_ok)

    async def put_messages(self, batch: MessageExtBatch) -> PutMessageResult:
        refused = self._refuse_on_slave()
        if refused is not None:
            return refused
        return await self._finish_put(*self._appended(self.local.put_messages_started(batch)), batch.wait_store_msg_ok)

    def put_message_sync(self, msg: MessageExtBrokerInner) -> PutMessageResult:
        """Blocking put for tools; no slave wait (that needs the broker's loop)."""
        return self._refuse_on_slave() or self._appended(self.local.put_message_sync(msg))

    def put_messages_sync(self, batch: MessageExtBatch) -> PutMessageResult:
        return self._refuse_on_slave() or self._appended(self.local.put_messages_sync(batch))

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
        result = self.local.get_message(
            group, topic, queue_id, offset, max_msg_nums, tag_codes, max_total_bytes, message_filter=message_filter
        )
        if result.records:
            (last,) = _I64.unpack_from(result.records[-1], _PHYSICAL_OFFSET_POS)
            if suggest_pulling_from_slave(
                self.local.max_phy_offset, last, self._memory, self.ha_config.access_message_in_memory_max_ratio
            ):
                result = replace(result, suggest_pulling_from_slave=True)
        return result

    def get_max_offset_in_queue(self, topic: str, queue_id: int) -> int:
        return self.local.get_max_offset_in_queue(topic, queue_id)

    def get_min_offset_in_queue(self, topic: str, queue_id: int) -> int:
        return self.local.get_min_offset_in_queue(topic, queue_id)

    def get_offset_in_queue_by_time(self, topic: str, queue_id: int, timestamp: int) -> int:
        return self.local.get_offset_in_queue_by_time(topic, queue_id, timestamp)

    def get_message_store_timestamp(self, topic: str, queue_id: int, offset: int) -> int:
        return self.local.get_message_store_timestamp(topic, queue_id, offset)

    def get_earliest_message_time(self, topic: str, queue_id: int) -> int:
        return self.local.get_earliest_message_time(topic, queue_id)

    def look_message_by_offset(self, commit_log_offset: int) -> bytes | None:
        return self.local.look_message_by_offset(commit_log_offset)

    def query_message(
        self, topic: str, key: str, max_num: int, begin_ts: int, end_ts: int, max_total_bytes: int | None = None
    ) -> list[bytes]:
        return self.local.query_message(topic, key, max_num, begin_ts, end_ts, max_total_bytes)

    def index_last_update(self) -> tuple[int, int]:
        return self.local.index_last_update()

    # --- admin ------------------------------------------------------------------------------

    def queue_counts(self) -> dict[str, int]:
        return self.local.queue_counts()

    def delete_topics(self, topics: set[str]) -> None:
        self.local.delete_topics(topics)

    def runtime_info(self) -> dict[str, str]:
        info = self.local.runtime_info()
        info["brokerRole"] = self.broker_role
        info["groupEpoch"] = str(self.epochs.epoch)
        if self.ha_client is not None:
            info.update(self.ha_client.runtime_info())
        elif self.ha_service is not None:
            info.update(self.ha_service.runtime_info())
        if self.ha_service is not None:
            info["haServerPort"] = str(self.ha_service.port)
        return info

    # --- what the broker and tools read of the local store ------------------------------------

    @property
    def commitlog(self) -> CommitLog:
        return self.local.commitlog

    @property
    def max_phy_offset(self) -> int:
        return self.local.max_phy_offset

    @property
    def min_phy_offset(self) -> int:
        return self.local.min_phy_offset

    @property
    def running(self) -> bool:
        return self.local.running

    @property
    def healthy_error(self) -> str | None:
        return self.local.healthy_error

    @property
    def recovery_report(self) -> RecoveryReport | None:
        return self.local.recovery_report

    @property
    def queue_put_bytes(self) -> Mapping[tuple[str, int], int]:
        return self.local.queue_put_bytes

    @property
    def retention(self) -> StoreRetention:
        return self.local.retention

    def __getattr__(self, name: str) -> Any:
        # Anything else the local store offers (stats, flush_service, consume_queue, ...), so
        # tools written against DefaultMessageStore keep working through the broker's store.
        if name == "local":
            raise AttributeError(name)
        return getattr(self.local, name)
