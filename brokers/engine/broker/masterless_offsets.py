"""Consumer offsets a slave took while it had no master, and how the returning master gets them.

How Gantry resolves the master's and a slave's offset tables (RocketMQ 4.x only ever copies the
master's table over the slave's, so a commit made on the slave while the master was down is
overwritten by the master's older value once it is back, and the master never learns it):

* **On the slave** (:class:`MasterlessOffsets`): every UPDATE_CONSUMER_OFFSET a slave takes is
  also recorded here, per (``topic@group``, queue): a client commits to a slave only when it
  finds no reachable master (RocketMQ's findBrokerAddressInAdmin), even while the slave's HA
  link has not noticed yet (a hung master keeps it open for ``haHousekeepingInterval``). The
  table is kept in ``config/masterlessOffsets.json`` (consumerOffset.json's form) so a restart
  of the slave does not forget it. GANTRY_GET_MASTERLESS_OFFSETS (10005) answers it.
* **On the master** (:func:`take_masterless_offsets`): when a slave connects by HA, and once when
  a master starts (before it registers with the name servers, so no consumer reads its stale
  table first), the master asks every slave of its group (their addresses from the name servers'
  cluster info) for their masterless offsets and keeps ``max(master's, slave's)`` per queue — a
  commit made on the slave is never moved backwards — and logs what it took.
* **Back on the slave**: its periodic sync (``slave_synchronize.py``) keeps ``max(slave, master)``
  for entries changed on the slave since the last sync and takes the master's value for the
  rest; a recorded entry is forgotten once the master's value reaches it (the master has it) or
  the master's value moved backwards between two syncs (an operator's reset on the master wins).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from brokers.engine.broker.config import BrokerConfig
from brokers.engine.broker.config_file import read_json, write_json_atomic
from brokers.engine.store.file_io import OS_FILE_IO, FileIO
from brokers.engine.common import json_compat
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand

log = logging.getLogger("brokers.engine.broker")

MASTERLESS_OFFSET_FILE = "masterlessOffsets.json"
OffsetTable = dict[str, dict[int, int]]  # "topic@group" -> queue id -> next offset to consume
ASK_TIMEOUT_S = 3.0
NO_SLAVE_RETRIES = 3  # a slave that just (re)started may connect by HA before it registers
NO_SLAVE_RETRY_S = 2.0


class OffsetTableOwner(Protocol):
    offset_table: dict[str, dict[int, int]]

    def persist(self, *, force: bool = False) -> bool: ...


class MasterBroker(Protocol):
    """What the master side uses of its broker (the controller; kept narrow: no import cycle)."""

    @property
    def config(self) -> BrokerConfig: ...

    @property
    def consumer_offset_manager(self) -> OffsetTableOwner: ...

    @property
    def store(self) -> object: ...

    @property
    def addr(self) -> str: ...


def parse_offset_table(data: object) -> OffsetTable:
    """``{"offsetTable": {"topic@group": {queueId: offset}}}`` -> table (malformed entries skipped)."""
    table = data.get("offsetTable") if isinstance(data, dict) else None
    out: OffsetTable = {}
    for key, queues in (table or {}).items() if isinstance(table, dict) else ():
        if not isinstance(key, str) or "@" not in key or not isinstance(queues, dict):
            continue
        entry = {}
        for qid, offset in queues.items():
            try:
                if int(offset) >= 0:
                    entry[int(qid)] = int(offset)
            except (TypeError, ValueError):
                continue
        if entry:
            out[key] = entry
    return out


class MasterlessOffsets:
    """The slave's record of the commits consumers made on it (see the module docstring)."""

    def __init__(
        self, config_dir: Path, is_masterless: Callable[[], bool] = lambda: False, *, file_io: FileIO = OS_FILE_IO
    ) -> None:
        self.file_io = file_io
        self.path = Path(config_dir) / MASTERLESS_OFFSET_FILE
        self.is_masterless = is_masterless
        self.table: OffsetTable = {}
        self._last_master: dict[tuple[str, int], int] = {}
        self._dirty = False

    def load(self) -> None:
        self.table = parse_offset_table(read_json(self.path))

    def encode(self) -> dict[str, Any]:
        return {"offsetTable": {k: dict(v) for k, v in self.table.items()}}

    def persist(self, *, force: bool = False) -> bool:
        if not (self._dirty or force):
            return False
        self._dirty = False
        write_json_atomic(self.path, self.encode(), io=self.file_io)
        return True

    def record(self, key: str, queue_id: int, offset: int) -> None:
        """A consumer committed ``offset`` here; kept while this broker is a slave."""
        if offset < 0 or not self.is_masterless():
            return
        queues = self.table.setdefault(key, {})
        if queues.get(queue_id) != offset:
            if not queues:
                log.info(
                    "a consumer commits to this slave (no master reachable for it): recording offsets of %s "
                    "(queue %d at %d) for the master to take back",
                    key,
                    queue_id,
                    offset,
                )
            queues[queue_id] = offset
            self._dirty = True

    def forget_confirmed(self, master: OffsetTable) -> int:
        """After a sync with the master's table: forget what the master has reached, or reset below
        what it had at the previous sync; return how many entries were forgotten."""
        forgotten = 0
        for key in list(self.table):
            queues = self.table[key]
            for qid in list(queues):
                theirs = master.get(key, {}).get(qid)
                before = self._last_master.get((key, qid))
                if theirs is not None and (theirs >= queues[qid] or (before is not None and theirs < before)):
                    del queues[qid]
                    forgotten += 1
            if not queues:
                del self.table[key]
        self._last_master = {(k, q): o for k, qs in master.items() for q, o in qs.items()}
        if forgotten:
            self._dirty = True
            log.info(
                "slave sync: the master holds %d offset(s) committed here while it was away; forgotten here", forgotten
            )
        return forgotten


def takes_masterless_commits(store: object) -> bool:
    """True while ``store`` is a SLAVE's: a consumer committing here found no reachable master."""
    return getattr(store, "broker_role", None) == "SLAVE"


def merge_masterless(master: OffsetTable, slave: OffsetTable) -> list[tuple[str, int, int, int]]:
    """Raise ``master`` in place to ``max(master, slave)`` per queue; return (key, queue, old, new) of
    each raise (old is -1 where the master had no offset)."""
    taken = []
    for key, queues in sorted(slave.items()):
        mine = master.setdefault(key, {})
        for qid, offset in sorted(queues.items()):
            old = mine.get(qid, -1)
            if offset > old:
                mine[qid] = offset
                taken.append((key, qid, old, offset))
        if not mine:
            del master[key]
    return taken


async def group_slave_addrs(
    client: RemotingClient, namesrv_addrs: tuple[str, ...], broker_name: str, own_addr: str
) -> list[str]:
    """Addresses of ``broker_name``'s slaves (broker id >= 1) as the first answering name server lists them."""
    for namesrv in namesrv_addrs:
        try:
            reply = await client.invoke(
                namesrv, RemotingCommand.request(RequestCode.GET_BROKER_CLUSTER_INFO), ASK_TIMEOUT_S
            )
        except Exception as exc:
            log.debug("cluster info from %s failed: %s", namesrv, exc)
            continue
        if reply.code != ResponseCode.SUCCESS or not reply.body:
            continue
        data = json_compat.loads(reply.body)
        entry = (data.get("brokerAddrTable") or {}).get(broker_name) or {}
        addrs = entry.get("brokerAddrs") or {}
        return sorted(str(a) for i, a in addrs.items() if int(i) >= 1 and a and a != own_addr)
    return []


async def take_masterless_offsets(
    broker: MasterBroker, client: RemotingClient, why: str, *, retries: int = NO_SLAVE_RETRIES
) -> int:
    """On a master: ask the group's slaves for their masterless offsets and merge them (max per
    queue); return how many offsets were raised. Never raises (logged instead)."""
    cfg = broker.config
    if not cfg.namesrv_addrs or getattr(broker.store, "broker_role", "") == "SLAVE":
        return 0
    try:
        addrs: list[str] = []
        for attempt in range(retries + 1):
            addrs = await group_slave_addrs(client, cfg.namesrv_addrs, cfg.broker_name, broker.addr)
            if addrs or attempt == retries:
                break
            await asyncio.sleep(NO_SLAVE_RETRY_S)
        taken = 0
        for addr in addrs:
            taken += await _take_from(broker, client, addr, why)
        return taken
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("taking masterless offsets from the slaves of %s failed", cfg.broker_name)
        return 0


async def _take_from(broker: MasterBroker, client: RemotingClient, addr: str, why: str) -> int:
    try:
        reply = await client.invoke(
            addr, RemotingCommand.request(RequestCode.GANTRY_GET_MASTERLESS_OFFSETS), ASK_TIMEOUT_S
        )
    except Exception as exc:
        log.info("masterless offsets of slave %s not read (%s): %s", addr, why, exc or type(exc).__name__)
        return 0
    if reply.code != ResponseCode.SUCCESS:
        log.info("slave %s answered %s to GANTRY_GET_MASTERLESS_OFFSETS: %s", addr, reply.code, reply.remark)
        return 0
    slave = parse_offset_table(json_compat.loads(reply.body) if reply.body else {})
    com = broker.consumer_offset_manager
    taken = merge_masterless(com.offset_table, slave)
    if taken:
        com.persist(force=True)
        shown = ", ".join(f"{key} q{qid} {old}->{new}" for key, qid, old, new in taken[:20])
        more = f" (+{len(taken) - 20} more)" if len(taken) > 20 else ""
        log.info(
            "took %d consumer offset(s) committed on slave %s while this master was away (%s), "
            "max(master, slave) per queue: %s%s",
            len(taken),
            addr,
            why,
            shown,
            more,
        )
    else:
        log.info("slave %s holds no masterless offset ahead of this master (%s)", addr, why)
    return len(taken)
