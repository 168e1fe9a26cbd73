"""HAClient: the slave's side of replication (RocketMQ's ``HAClient``), on the broker's loop.

It connects to the master's HA address (given, or learned from the name servers' register
answer), says hello with its commit log end, and reads the welcome: anything but OK (the peer
is not a master, speaks another version, holds less than this slave) is logged as a refusal and
retried after ``reconnect_interval_ms``. Then it reads frames: a frame must start exactly where
the slave's log (plus the pending partial record) ends, else the connection is dropped and a new
one restarts from the log's end. It takes what the socket holds at once (a burst of frames), has
the :class:`ReplicaAppender` append every whole record in it, reports its new end once, and only
then dispatches what it appended (RocketMQ's split: the HA client reports after the append, the
reput service dispatches behind it), so the master's waiters do not wait for the consume queues.
Under SYNC_FLUSH the slave flushes before it reports, so its reports mean "on my disk". It also
reports every ``heartbeat_interval_ms``; a master silent for ``housekeeping_interval_ms`` is
dropped and reconnected.

Epochs (``epoch_file.py``): the hello carries the slave's epoch. A master whose epoch is lower
than the slave's is refused (the slave replicates from no stale master). When the master's
epoch is higher, the slave compares epoch histories (:func:`common_point`); if its log holds
bytes past the common point (a tail the new master never had: this broker was a master whose
last writes no slave took, or a slave of one), it cuts commit log, consume queues and index
there (``truncate``, which logs what it cut) and reconnects from the new end. Once the logs
agree it adopts the master's history (``adopt_history``). Frames carry the master's epoch (a
change mid-stream drops the connection) and the group's acknowledged offset (``group_acked``,
what a promotion must not lose).

``pause()``/``resume()`` stall and restart the slave (an operator's or a test's stall; the
master's waits time out): a paused slave applies and reports nothing; on resume it drops what
arrived meanwhile and starts a new session from its log's end, with whichever broker is master
by then (bytes a master sent before it died are not applied from a stale connection).
With ``config.tls`` whose outgoing side is on, the connection to the master speaks TLS.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from brokers.engine.common.clock import Clock
from brokers.engine.remoting.tls_connect import open_connection
from brokers.engine.store.commitlog import CommitLog
from brokers.engine.store.ha import ha_protocol as hp
from brokers.engine.store.ha.epoch_file import EpochEntry, common_point
from brokers.engine.store.ha.ha_config import MAX_TRANSFER_BATCH_SIZE, HAConfig, split_host_port
from brokers.engine.store.ha.replica_appender import ReplicaAppender, ReplicaStreamError
from brokers.engine.store.ha.silence import SilenceWatch

log = logging.getLogger("brokers.engine.store.ha")

READ_BURST = 1 << 20  # the most the slave takes from its socket at once (RocketMQ's READ_MAX_BUFFER_SIZE is 4 MiB)


class HARefusedError(Exception):
    """The master answered the hello with a refusal."""


class ReconnectNow(Exception):
    """Start a new session from the log's end at once (a divergent tail was cut, or the slave
    was resumed after a pause)."""


History = tuple[EpochEntry, ...]


class HAClient:
    def __init__(
        self,
        *,
        commitlog: CommitLog,
        appender: ReplicaAppender,
        config: HAConfig,
        clock: Clock,
        master_address: Callable[[], str | None],
        wait_flushed: Callable[[int], Awaitable[bool]] | None = None,
        on_master: Callable[[str], None] | None = None,
        history: Callable[[], History] = lambda: (EpochEntry(0, 0),),
        adopt_history: Callable[[History], None] | None = None,
        truncate: Callable[[int, str], None] | None = None,
    ) -> None:
        self._commitlog = commitlog
        self._history = history
        self._adopt_history = adopt_history
        self._truncate = truncate
        self.master_epoch = -1
        self.master_role = ""  # the group master's role as its welcome said (SYNC_MASTER/ASYNC_MASTER)
        self.group_acked = 0  # the highest offset the group acknowledged, as the master last said
        self._appender = appender
        self.config = config
        self._clock = clock
        self._master_address = master_address
        self._wait_flushed = wait_flushed
        self._on_master = on_master
        self._task: asyncio.Task[None] | None = None
        self._running = asyncio.Event()
        self._running.set()
        self.state = "CONNECTING"
        self.connected_to = ""
        self.master_broker_addr = ""
        self.master_max_offset = 0
        self.master_timestamp = 0
        self.last_refusal = ""
        self.reported_offset = 0
        self.sessions = 0

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="HAClient")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    def pause(self) -> None:
        self._running.clear()

    def resume(self) -> None:
        self._running.set()

    def lag(self) -> tuple[int, int]:
        """(bytes, ms) behind the master as of the last frame: bytes = master end - own end;
        ms = master's last store time - store time of the last record appended here."""
        if not self.connected_to:
            return -1, -1
        behind = max(0, self.master_max_offset - self._commitlog.max_offset)
        if not behind:
            return 0, 0
        return behind, max(0, self.master_timestamp - self._appender.last_appended_timestamp)

    def runtime_info(self) -> dict[str, str]:
        lag_bytes, lag_ms = self.lag()
        return {
            "haMasterAddress": self.connected_to or (self._master_address() or ""),
            "haMasterBrokerAddr": self.master_broker_addr,
            "haConnectionState": self.state + (f" ({self.last_refusal})" if self.state == "REFUSED" else ""),
            "haReportedOffset": str(self.reported_offset),
            "haMasterMaxOffset": str(self.master_max_offset),
            "haMasterEpoch": str(self.master_epoch),
            "haGroupAckedOffset": str(self.group_acked),
            "haReplicationLagBytes": str(lag_bytes),
            "haReplicationLagMs": str(lag_ms),
        }

    async def _run(self) -> None:
        retry_s = self.config.reconnect_interval_ms / 1000.0
        last_logged = ""
        while True:
            addr = self._master_address()
            if not addr:
                self.state = "NO_MASTER_ADDRESS"
                await asyncio.sleep(retry_s)
                continue
            try:
                await self._session(addr)
            except asyncio.CancelledError:
                raise
            except ReconnectNow:
                continue
            except HARefusedError as exc:
                self.state, self.last_refusal = "REFUSED", str(exc)
                if str(exc) != last_logged:
                    log.error("HA: master %s refused this slave: %s", addr, exc)
                    last_logged = str(exc)
            except (ReplicaStreamError, hp.HAProtocolError) as exc:
                self.state = "RECONNECTING"
                log.warning(
                    "HA: dropping the stream from %s: %s; reconnecting from offset %d",
                    addr,
                    exc,
                    self._commitlog.max_offset,
                )
            except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError, ValueError) as exc:
                self.state = "RECONNECTING"
                text = f"{type(exc).__name__}: {exc}"
                if text != last_logged:
                    log.warning("HA: connection to master %s lost or failed: %s", addr, text)
                    last_logged = text
            finally:
                self.connected_to = ""
                self._appender.reset()
            await asyncio.sleep(retry_s)

    async def _session(self, addr: str) -> None:
        host, port = split_host_port(addr, "master HA address")
        reader, writer = await open_connection(host, port, self.config.tls, self.config.connect_timeout_ms / 1000.0)
        try:
            await self._handshake(addr, reader, writer)
            reporter = asyncio.get_running_loop().create_task(self._report_every_heartbeat(writer))
            try:
                await self._receive(reader, writer)
            finally:
                reporter.cancel()
                await asyncio.gather(reporter, return_exceptions=True)
        finally:
            writer.close()

    async def _handshake(self, addr: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        cl = self._commitlog
        self._appender.reset()
        mine = self._history()
        writer.write(hp.encode_hello(cl.max_offset, epoch=mine[-1].epoch))
        await writer.drain()
        timeout = self.config.housekeeping_interval_ms / 1000.0
        welcome, addr_len = hp.decode_welcome_head(await asyncio.wait_for(reader.readexactly(hp.WELCOME.size), timeout))
        broker_addr = (await reader.readexactly(addr_len)).decode("utf-8", "replace") if addr_len else ""
        raw = await asyncio.wait_for(reader.readexactly(welcome.n_epochs * hp.EPOCH_ENTRY.size), timeout)
        theirs = tuple(EpochEntry(e, o) for e, o in hp.decode_history(raw, welcome.n_epochs))
        who = f"the broker at {addr} ({broker_addr or 'unknown'})"
        if welcome.version != hp.HA_VERSION:
            raise HARefusedError(f"{who} speaks HA version {welcome.version}, this slave {hp.HA_VERSION}")
        if welcome.status == hp.STATUS_STALE_EPOCH:
            raise HARefusedError(
                f"STALE_EPOCH: {who} is at epoch {welcome.epoch}, below this slave's "
                f"{mine[-1].epoch}: it is a stale master"
            )
        if welcome.status in (hp.STATUS_OK, hp.STATUS_OFFSET_AHEAD) and theirs:
            if welcome.epoch < mine[-1].epoch:
                raise HARefusedError(
                    f"STALE_EPOCH: {who} is at epoch {welcome.epoch}, below this slave's "
                    f"{mine[-1].epoch}; not replicating from a stale master"
                )
            if theirs[-1].epoch != welcome.epoch:
                raise hp.HAProtocolError(f"{who} says epoch {welcome.epoch} but its history ends at {theirs[-1]}")
            point = common_point(mine, cl.max_offset, theirs, welcome.max_offset)
            if point < cl.max_offset and welcome.epoch > mine[-1].epoch and self._truncate is not None:
                self._truncate(
                    point,
                    f"the master {addr} ({broker_addr or '?'}) is at epoch {welcome.epoch}; "
                    f"this log and its agree up to offset {point}",
                )
                if cl.max_offset != point:
                    raise ReplicaStreamError(f"truncating to {point} left the log ending at {cl.max_offset}")
                if self._adopt_history is not None:
                    self._adopt_history(tuple(e for e in mine if e.start_offset <= point) or mine[:1])
                raise ReconnectNow()
            if point < cl.max_offset and welcome.status == hp.STATUS_OK:
                raise HARefusedError(
                    f"DIVERGED: this slave's log and that of {who} (both epoch {welcome.epoch} or "
                    f"this slave's higher) differ from offset {point}; not appending"
                )
            if point >= cl.max_offset and welcome.status == hp.STATUS_OK and self._adopt_history is not None:
                self._adopt_history(theirs)
        if welcome.status != hp.STATUS_OK:
            raise HARefusedError(
                f"{welcome.status_name}: {who} answered with status {welcome.status} (its log ends "
                f"at {welcome.max_offset}, this slave's at {cl.max_offset})"
            )
        if welcome.file_size != cl.file_size:
            raise HARefusedError(
                f"the master's commit log segments are {welcome.file_size} bytes, this slave's "
                f"{cl.file_size}: set the same commitlog_file_size on both"
            )
        if welcome.start_offset != self._appender.expected_offset and cl.files:
            raise hp.HAProtocolError(f"the master starts at {welcome.start_offset}, this slave ends at {cl.max_offset}")
        self.master_epoch = welcome.epoch
        self.master_role = welcome.role
        self.group_acked = max(self.group_acked, welcome.acked)
        self.sessions += 1
        self.state = "CONNECTED"
        self.connected_to = addr
        self.last_refusal = ""
        self.master_max_offset = welcome.max_offset
        self.master_broker_addr = broker_addr
        self.reported_offset = cl.max_offset
        log.info(
            "HA: replicating from master %s (broker %s) from offset %d; master end %d",
            addr,
            broker_addr or "?",
            welcome.start_offset,
            welcome.max_offset,
        )
        if broker_addr and self._on_master is not None:
            self._on_master(broker_addr)

    async def _receive(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Read what the socket has (one burst), append every whole frame in it, report the new
        end once, then dispatch what was appended (see ``replica_appender.py``)."""
        timeout = self.config.housekeeping_interval_ms / 1000.0
        appender = self._appender
        cl = self._commitlog
        head_size = hp.FRAME_HEADER.size
        rest = bytearray()  # the start of a frame the last read ended in
        with SilenceWatch(writer.transport, timeout) as watch:
            while True:
                data = await reader.read(READ_BURST)
                if watch.expired:
                    raise hp.HAProtocolError(f"nothing from the master for {timeout:.0f} s")
                if not data:
                    raise ConnectionResetError("the master closed the HA connection")
                watch.heard()
                if rest:
                    rest += data
                    buf: bytes | bytearray = rest
                else:
                    buf = data  # most reads end on a frame: parsed where they are, not copied
                if not self._running.is_set():  # paused: apply and report nothing until resumed
                    self.state = "PAUSED"
                    await self._running.wait()
                    raise ReconnectNow()  # drop what arrived meanwhile; start again from the log's end
                used = 0
                while len(buf) - used >= head_size:
                    offset, size, master_max, master_ts, epoch, acked = hp.decode_frame_header(
                        buf, MAX_TRANSFER_BATCH_SIZE, used
                    )
                    if epoch != self.master_epoch:
                        raise hp.HAProtocolError(f"a frame of epoch {epoch} in a stream of epoch {self.master_epoch}")
                    if len(buf) - used - head_size < size:
                        break
                    if acked > self.group_acked:
                        self.group_acked = acked
                    self.master_max_offset, self.master_timestamp = master_max, master_ts
                    body_at = used + head_size
                    used = body_at + size
                    if not size:
                        if offset != appender.expected_offset:
                            raise ReplicaStreamError(
                                f"heartbeat at offset {offset}, this slave expects {appender.expected_offset}"
                            )
                        continue
                    appender.write(offset, buf, body_at, used)  # copies what it keeps: buf is not
                if buf is rest:
                    del rest[:used]
                elif used < len(buf):
                    rest = bytearray(memoryview(buf)[used:])
                end = cl.max_offset
                if end > self.reported_offset:
                    if self._wait_flushed is not None and not await self._wait_flushed(end):
                        raise ReplicaStreamError("the slave's disk flush failed")
                    writer.write(hp.encode_report(end))  # on the wire before the dispatch below
                    self.reported_offset = end
                appender.dispatch()
                await writer.drain()

    async def _report(self, writer: asyncio.StreamWriter, offset: int) -> None:
        writer.write(hp.encode_report(offset))
        self.reported_offset = offset
        await writer.drain()

    async def _report_every_heartbeat(self, writer: asyncio.StreamWriter) -> None:
        interval = self.config.heartbeat_interval_ms / 1000.0
        while True:
            await asyncio.sleep(interval)
            if self._running.is_set():
                await self._report(writer, self.reported_offset)
