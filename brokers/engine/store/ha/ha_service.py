"""HAService: the master's side of replication (RocketMQ's ``HAService`` + ``HAConnection``).

Every broker listens on its HA port; framing in ``ha_protocol.py``. A connection that says a
valid hello to a master gets a welcome and then the commit log from the slave's offset (a slave
with an empty log: from the master's first retained segment, so it holds everything), in frames
of at most ``transfer_batch_size`` bytes that never cross a segment, and an empty frame every
``heartbeat_interval_ms`` when there is nothing to send. The slave's reports feed
:class:`GroupTransfer` (synchronous double write) and the lag figures. A broker that is not a
master answers NOT_MASTER and closes. Epochs (``epoch_file.py``): the welcome carries this
master's epoch and history, every frame its epoch and the group's acknowledged offset; a hello
with a higher epoch than this master's is answered STALE_EPOCH (this master is stale) and
``on_stale(epoch)`` is called, so the broker can check with the name servers and step down.
Garbage (wrong magic, a report past the master's end or
going backwards, silence past the housekeeping interval) closes that connection with a log
line and changes nothing.

Why asyncio on the broker's loop and not threads: the puts, the flush group commit and the
waiters of a SYNC_MASTER all live on that loop, so a slave's ack resolves its waiters directly
with no cross-thread handoff (which costs more than the ack itself); sending is a memory copy
of mapped pages plus a socket write, and under the GIL a thread would not run it in parallel
anyway. With ``config.tls`` the HA port serves TLS per its mode, as the remoting ports do.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from brokers.engine.common.clock import Clock
from brokers.engine.remoting.tls_listener import TlsListener, start_server
from brokers.engine.store.commitlog import CommitLog
from brokers.engine.store.ha import ha_protocol as hp
from brokers.engine.store.ha.group_transfer import GroupTransfer
from brokers.engine.store.ha.ha_config import MASTER_ROLES, HAConfig
from brokers.engine.store.ha.silence import SilenceWatch

log = logging.getLogger("brokers.engine.store.ha")

HELLO_TIMEOUT_S = 5.0


@dataclass(slots=True)
class SlaveConnection:
    """One slave as the master sees it."""

    remote_addr: str
    start_offset: int
    acked_offset: int
    next_transfer: int
    connected_ms: int
    last_report_ms: int
    wakeup: asyncio.Event
    writer: asyncio.StreamWriter | None = None
    idle: bool = False  # its sender waits for new bytes: a put may send them itself (``_push``)
    last_sent: float = 0.0  # loop time of the last frame (heartbeats fill the silences)
    epoch: int = 0  # the epoch its frames carry (this master's when the stream started)


class HAService:
    def __init__(
        self,
        *,
        commitlog: CommitLog,
        config: HAConfig,
        clock: Clock,
        role: Callable[[], str],
        broker_addr: Callable[[], str],
        history: Callable[[], tuple[tuple[int, int], ...]] = lambda: ((0, 0),),
        on_stale: Callable[[int], None] | None = None,
    ) -> None:
        self._commitlog = commitlog
        self._history = history
        self._on_stale = on_stale
        self.config = config
        self._clock = clock
        self._role = role
        self._broker_addr = broker_addr
        self.group_transfer = GroupTransfer()
        self.connections: list[SlaveConnection] = []
        self._server: asyncio.base_events.Server | TlsListener | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0
        self.refused = 0  # connections closed for garbage or refused with a status
        self.on_slave_connected: Callable[[str], None] | None = None  # the broker's hook (masterless offsets)

    # --- lifecycle --------------------------------------------------------------------------

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._server = await start_server(
            self._on_connect, self.config.listen_host, self.config.listen_port, self.config.tls, name="HA"
        )
        self.port = self._server.sockets[0].getsockname()[1]
        log.info("HA service listening on %s:%d (role %s)", self.config.listen_host, self.port, self._role())

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None
        self.group_transfer.fail_all()

    # --- what the store asks ----------------------------------------------------------------

    @property
    def epoch(self) -> int:
        return self._history()[-1][0]

    def drop_connections(self) -> None:
        """Close every slave connection now (this broker stops being a master)."""
        for task in list(self._tasks):
            task.cancel()
        self.group_transfer.fail_all()

    def notify_appended(self) -> None:
        """New bytes in the commit log: wake the senders (safe from any thread)."""
        if not self.connections:
            return
        if threading.get_ident() == self._loop_thread:
            self._wake()
        elif self._loop is not None:
            try:
                self._loop.call_soon_threadsafe(self._wake)
            except RuntimeError:
                pass

    def _wake(self) -> None:
        for conn in self.connections:
            if conn.idle and conn.writer is not None and not conn.writer.transport.get_write_buffer_size():
                try:  # now, in the put's own loop step: no wake-up of the sender
                    self._push(conn, conn.writer)
                except (hp.HAProtocolError, OSError, RuntimeError):
                    pass  # the sender meets it again and closes the connection
            if conn.next_transfer < self._commitlog.max_offset:
                conn.wakeup.set()

    def _push(self, conn: SlaveConnection, writer: asyncio.StreamWriter) -> None:
        """Write frames from ``conn.next_transfer`` up to the log's end while the socket takes them."""
        cl = self._commitlog
        size_limit = self.config.transfer_batch_size
        transport = writer.transport
        while True:
            nxt, end = conn.next_transfer, cl.max_offset
            if nxt >= end or transport.is_closing():
                return
            seg_end = nxt - nxt % cl.file_size + cl.file_size
            size = min(size_limit, end - nxt, seg_end - nxt)
            data = cl.read(nxt, size)
            if data is None:
                raise hp.HAProtocolError(f"commit log bytes at {nxt} are no longer readable")
            # one write (one send) per frame: joining header and body costs a copy, a second send a system call
            writer.write(
                hp.encode_frame_header(nxt, size, end, cl.last_store_timestamp, conn.epoch, self.group_transfer.acked)
                + data
            )
            conn.next_transfer = nxt + size
            conn.last_sent = self._loop.time() if self._loop is not None else 0.0
            if transport.get_write_buffer_size():  # the socket is full: the sender drains it
                return

    def is_slave_ok(self) -> bool:
        """A slave is connected and less than ``slave_fallbehind_max`` behind (RocketMQ's isSlaveOK)."""
        return bool(self.connections) and (
            self._commitlog.max_offset - self.group_transfer.acked < self.config.slave_fallbehind_max
        )

    def wait_for_slave(self, offset: int) -> asyncio.Future[bool]:
        """True once a slave acknowledged ``offset``, False after ``sync_timeout_ms`` (see
        :meth:`GroupTransfer.register`). The put that wrote up to ``offset`` has woken the
        senders already (``notify_appended``, once per put)."""
        return self.group_transfer.register(offset, self.config.sync_timeout_ms / 1000.0)

    def lag(self) -> tuple[int, int]:
        """(bytes, ms) the best-connected slave is behind: bytes = master end - highest ack;
        ms = age of the oldest record the slave lacks (now - its store time), 0 when caught up."""
        cl = self._commitlog
        if not self.connections:
            return -1, -1
        acked = max(c.acked_offset for c in self.connections)
        behind = max(0, cl.max_offset - acked)
        if not behind:
            return 0, 0
        ts = cl.read_store_timestamp(acked)
        return behind, max(0, self._clock.now_ms() - ts) if ts > 0 else -1

    def runtime_info(self) -> dict[str, str]:
        lag_bytes, lag_ms = self.lag()
        return {
            "haServerPort": str(self.port),
            "haConnectionState": "CONNECTED" if self.connections else "NO_SLAVE",
            "haSlaveCount": str(len(self.connections)),
            "haSlaves": ";".join(f"{c.remote_addr}@{c.acked_offset}" for c in self.connections),
            "haPush2SlaveMaxOffset": str(self.group_transfer.acked),
            "haReplicationLagBytes": str(lag_bytes),
            "haReplicationLagMs": str(lag_ms),
            "haSyncWaiting": str(self.group_transfer.waiting),
            "haSyncTimeouts": str(self.group_transfer.requests_timed_out),
        }

    # --- connections ------------------------------------------------------------------------

    def _on_connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.get_running_loop().create_task(self._serve(reader, writer))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _refuse(self, writer: asyncio.StreamWriter, peer: str, status: int, why: str) -> None:
        self.refused += 1
        log.warning("HA: refusing slave %s: %s (%s)", peer, hp.STATUS_NAMES[status], why)
        try:
            writer.write(self._encode_welcome(status))
            await writer.drain()
        except (ConnectionError, OSError):
            pass

    def _encode_welcome(self, status: int, start: int = 0) -> bytes:
        role = self._role()
        return hp.encode_welcome(
            status,
            max_offset=self._commitlog.max_offset,
            start_offset=start,
            file_size=self._commitlog.file_size,
            broker_addr=self._broker_addr(),
            epoch=self.epoch,
            acked=self.group_transfer.acked,
            role=role if role in MASTER_ROLES else "",
            history=self._history(),
        )

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peername = writer.get_extra_info("peername")
        peer = f"{peername[0]}:{peername[1]}" if peername else "?"
        conn: SlaveConnection | None = None
        try:
            try:
                hello = hp.decode_hello(await asyncio.wait_for(reader.readexactly(hp.HELLO.size), HELLO_TIMEOUT_S))
            except hp.HAProtocolError as exc:
                self.refused += 1
                log.warning("HA: closing connection from %s: %s", peer, exc)
                return
            except (asyncio.IncompleteReadError, asyncio.TimeoutError, ConnectionError) as exc:
                self.refused += 1
                log.warning("HA: closing connection from %s: no hello (%s)", peer, type(exc).__name__)
                return
            conn = await self._welcome(writer, peer, hello)
            if conn is None:
                return
            self.connections.append(conn)
            log.info(
                "HA: slave %s connected; streaming from offset %d (master end %d)",
                peer,
                conn.start_offset,
                self._commitlog.max_offset,
            )
            if self.on_slave_connected is not None:
                self.on_slave_connected(peer)
            await self._run_connection(conn, reader, writer)
        except (ConnectionError, OSError, asyncio.IncompleteReadError) as exc:
            if conn is not None:
                log.warning("HA: slave %s disconnected: %s", peer, exc or type(exc).__name__)
        except hp.HAProtocolError as exc:
            self.refused += 1
            log.warning("HA: closing connection from slave %s: %s", peer, exc)
        finally:
            if conn is not None and conn in self.connections:
                self.connections.remove(conn)
            writer.close()

    async def _welcome(self, writer: asyncio.StreamWriter, peer: str, hello: hp.Hello) -> SlaveConnection | None:
        cl = self._commitlog
        if hello.version != hp.HA_VERSION:
            await self._refuse(
                writer, peer, hp.STATUS_BAD_VERSION, f"HA version {hello.version}, this broker speaks {hp.HA_VERSION}"
            )
            return None
        role = self._role()
        if role not in MASTER_ROLES:
            await self._refuse(writer, peer, hp.STATUS_NOT_MASTER, f"this broker's role is {role}")
            return None
        if hello.epoch > self.epoch:
            await self._refuse(
                writer,
                peer,
                hp.STATUS_STALE_EPOCH,
                f"the slave has seen epoch {hello.epoch}, this master is at epoch {self.epoch}: "
                "this broker may be a stale master",
            )
            if self._on_stale is not None:
                self._on_stale(hello.epoch)
            return None
        master_end = cl.max_offset
        if hello.max_offset > master_end:
            await self._refuse(
                writer,
                peer,
                hp.STATUS_OFFSET_AHEAD,
                f"the slave holds {hello.max_offset} bytes, this master {master_end}",
            )
            return None
        start = hello.max_offset
        if start == 0:
            start = cl.min_offset  # a new slave: from the first retained segment
        elif start < cl.min_offset:
            await self._refuse(
                writer,
                peer,
                hp.STATUS_OFFSET_GONE,
                f"the slave ends at {start}, before this master's first segment {cl.min_offset}",
            )
            return None
        writer.write(self._encode_welcome(hp.STATUS_OK, start))
        await writer.drain()
        now = self._clock.now_ms()
        if hello.epoch == self.epoch:  # same history: its bytes are this master's (else wait for its report)
            self.group_transfer.ack(hello.max_offset)
        return SlaveConnection(peer, start, hello.max_offset, start, now, now, asyncio.Event())

    async def _run_connection(
        self, conn: SlaveConnection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        tasks = [
            asyncio.get_running_loop().create_task(self._read_reports(conn, reader, writer.transport)),
            asyncio.get_running_loop().create_task(self._transfer(conn, writer)),
        ]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        for task in done:
            task.result()  # re-raise what ended the connection

    async def _read_reports(
        self, conn: SlaveConnection, reader: asyncio.StreamReader, transport: asyncio.WriteTransport
    ) -> None:
        """Take every report the socket holds, check each in order, and ack the last one: one
        pass over the waiters per read, however many reports queued up meanwhile."""
        timeout = self.config.housekeeping_interval_ms / 1000.0
        size = hp.REPORT.size
        buf = b""
        with SilenceWatch(transport, timeout) as watch:
            while True:
                data = await reader.read(4096)
                if watch.expired:
                    raise hp.HAProtocolError(f"no report for {timeout:.0f} s")
                if not data:
                    raise ConnectionResetError("the slave closed the HA connection")
                watch.heard()
                buf = buf + data if buf else data
                whole = len(buf) - len(buf) % size
                for at in range(0, whole, size):
                    offset = hp.decode_report(buf[at : at + size])
                    if offset > conn.next_transfer or offset < conn.acked_offset:
                        raise hp.HAProtocolError(
                            f"report of offset {offset}: sent up to {conn.next_transfer}, acknowledged {conn.acked_offset}"
                        )
                    conn.acked_offset = offset
                buf = buf[whole:]
                if whole:
                    conn.last_report_ms = self._clock.now_ms()
                    self.group_transfer.ack(conn.acked_offset)

    async def _transfer(self, conn: SlaveConnection, writer: asyncio.StreamWriter) -> None:
        """Send the log from ``conn.next_transfer`` on; a put on this loop may send its bytes
        itself while this waits (``_wake``), which saves a loop turn on the synchronous path."""
        cl = self._commitlog
        heartbeat_s = self.config.heartbeat_interval_ms / 1000.0
        loop = asyncio.get_running_loop()
        conn.writer, conn.last_sent, conn.epoch = writer, loop.time(), self.epoch
        while True:
            if conn.next_transfer < cl.max_offset:
                self._push(conn, writer)
                await writer.drain()
                continue
            idle = loop.time() - conn.last_sent
            if idle >= heartbeat_s:
                writer.write(
                    hp.encode_frame_header(
                        conn.next_transfer,
                        0,
                        cl.max_offset,
                        cl.last_store_timestamp,
                        conn.epoch,
                        self.group_transfer.acked,
                    )
                )
                await writer.drain()
                conn.last_sent = loop.time()
                continue
            conn.wakeup.clear()
            conn.idle = True
            try:
                async with asyncio.timeout(heartbeat_s - idle):
                    await conn.wakeup.wait()
            except TimeoutError:
                pass
            finally:
                conn.idle = False
