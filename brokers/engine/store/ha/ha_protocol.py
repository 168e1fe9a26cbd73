"""The HA stream between a slave and its master: one TCP connection to the master's HA port.

All integers are big-endian. The slave opens the connection and speaks first::

    slave -> master  HELLO   (24 bytes, once)
        0  magic        4s   b"GTHA"
        4  version      u16  HA_VERSION (2)
        6  kind         u16  1 = hello (room for later kinds)
        8  epoch        i64  the slave's group epoch (the last entry of its epoch file)
       16  max_offset   i64  the slave's commit log end (0 for an empty log)

    master -> slave  WELCOME (54 bytes + the master's broker address + its epoch history, once)
        0  magic        4s   b"GTHA"
        4  version      u16  the master's HA_VERSION
        6  status       u16  0 OK, 1 NOT_MASTER, 2 BAD_VERSION, 3 OFFSET_AHEAD, 4 OFFSET_GONE,
                             5 STALE_EPOCH (the slave's epoch is higher: this "master" is stale)
        8  epoch        i64  the master's group epoch
       16  max_offset   i64  the master's commit log end
       24  start        i64  where the stream starts (only meaningful with OK)
       32  file_size    i64  the master's commit log segment size (the slave's must be equal)
       40  acked        i64  the highest offset any slave of the group acknowledged
       48  role         u16  0 ASYNC_MASTER, 1 SYNC_MASTER, 2 other (not a master)
       50  addr_len     u16  then addr_len bytes: the master's broker address (UTF-8, host:port)
       52  n_epochs     u16  then n_epochs x (epoch i64, start offset i64): the master's epoch
                             history, oldest first (see ``epoch_file.py``)

    master -> slave  FRAME   (44-byte header + body, repeated)
        0  offset       i64  physical offset of the body's first byte
        8  size         i32  body size, 0..haTransferBatchSize (0 = heartbeat)
       12  master_max   i64  the master's commit log end when the frame was sent
       20  master_ts    i64  store time of the master's last record then (ms)
       28  epoch        i64  the master's epoch (equal to the welcome's; else the slave drops)
       36  acked        i64  the highest offset any slave of the group acknowledged then
       44  body         raw commit log bytes [offset, offset + size), within one segment

    slave -> master  REPORT  (8 bytes, repeated)
        0  max_offset   i64  bytes the slave holds (appended, and flushed under SYNC_FLUSH)

The first 12 bytes of a frame and the report are RocketMQ 4.x's HA framing; the rest is
Gantry's. The welcome lets a slave tell "not a master" from a network fault, and its epoch
history lets the slave find where its log and the master's part (it truncates there before it
appends, see ``ha_client.py``). ``acked`` tells a slave what the group acknowledged to
producers, so a promotion can say what it would lose. master_max/master_ts let the slave
measure its own lag. A non-OK welcome is followed by the master closing the connection.

Version history: 1 (42-byte welcome without acked/role/history, 28-byte frame header without
epoch/acked); 2 (this). A version-1 peer is answered BAD_VERSION.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

HA_MAGIC = b"GTHA"
HA_VERSION = 2
KIND_HELLO = 1

STATUS_OK = 0
STATUS_NOT_MASTER = 1
STATUS_BAD_VERSION = 2
STATUS_OFFSET_AHEAD = 3  # the slave holds more than the master: a divergent log (promotion's job)
STATUS_OFFSET_GONE = 4  # the slave's end is before the master's first retained segment
STATUS_STALE_EPOCH = 5  # the slave has seen a higher epoch than this master's: the master is stale
STATUS_NAMES = {
    STATUS_OK: "OK",
    STATUS_NOT_MASTER: "NOT_MASTER",
    STATUS_BAD_VERSION: "BAD_VERSION",
    STATUS_OFFSET_AHEAD: "OFFSET_AHEAD",
    STATUS_OFFSET_GONE: "OFFSET_GONE",
    STATUS_STALE_EPOCH: "STALE_EPOCH",
}
ROLE_CODES = {"ASYNC_MASTER": 0, "SYNC_MASTER": 1}
ROLE_NAMES = {0: "ASYNC_MASTER", 1: "SYNC_MASTER"}

HELLO = struct.Struct(">4sHHqq")
assert HELLO.size == 24
WELCOME = struct.Struct(">4sHHqqqqqHHH")
assert WELCOME.size == 54
EPOCH_ENTRY = struct.Struct(">qq")
FRAME_HEADER = struct.Struct(">qiqqqq")
assert FRAME_HEADER.size == 44
REPORT = struct.Struct(">q")
assert REPORT.size == 8
MAX_ADDR_LEN = 255
MAX_EPOCHS = 4096


class HAProtocolError(Exception):
    """Bytes on the HA connection that do not follow this framing; the connection is closed."""


@dataclass(frozen=True, slots=True)
class Hello:
    version: int
    epoch: int
    max_offset: int


@dataclass(frozen=True, slots=True)
class Welcome:
    version: int
    status: int
    epoch: int
    max_offset: int
    start_offset: int
    file_size: int
    broker_addr: str
    acked: int = 0
    role: str = ""  # ASYNC_MASTER | SYNC_MASTER | "" (not a master)
    history: tuple[tuple[int, int], ...] = ()  # (epoch, start offset), oldest first
    n_epochs: int = 0  # how many history entries follow the address on the wire

    @property
    def status_name(self) -> str:
        return STATUS_NAMES.get(self.status, f"status {self.status}")


def encode_hello(max_offset: int, epoch: int = 0, version: int = HA_VERSION) -> bytes:
    return HELLO.pack(HA_MAGIC, version, KIND_HELLO, epoch, max_offset)


def decode_hello(data: bytes) -> Hello:
    """Parse a hello; HAProtocolError for a wrong magic, kind or a negative offset.

    A different version parses (the master answers BAD_VERSION to it)."""
    magic, version, kind, epoch, max_offset = HELLO.unpack(data)
    if magic != HA_MAGIC:
        raise HAProtocolError(f"bad magic {magic!r} (not an HA hello)")
    if kind != KIND_HELLO:
        raise HAProtocolError(f"unknown hello kind {kind}")
    if max_offset < 0 or epoch < 0:
        raise HAProtocolError(f"negative offset {max_offset} or epoch {epoch} in the hello")
    return Hello(version, epoch, max_offset)


def encode_welcome(
    status: int,
    *,
    max_offset: int = 0,
    start_offset: int = 0,
    file_size: int = 0,
    broker_addr: str = "",
    epoch: int = 0,
    acked: int = 0,
    role: str = "",
    history: tuple[tuple[int, int], ...] = (),
) -> bytes:
    addr = broker_addr.encode("utf-8")[:MAX_ADDR_LEN]
    history = tuple(history)[-MAX_EPOCHS:]
    return (
        WELCOME.pack(
            HA_MAGIC,
            HA_VERSION,
            status,
            epoch,
            max_offset,
            start_offset,
            file_size,
            acked,
            ROLE_CODES.get(role, 2),
            len(addr),
            len(history),
        )
        + addr
        + b"".join(EPOCH_ENTRY.pack(e, s) for e, s in history)
    )


def decode_welcome_head(data: bytes) -> tuple[Welcome, int]:
    """Parse the fixed part of a welcome; return it (address and history empty) and the address
    length; the address, then ``n_epochs`` entries (:func:`decode_history`) follow."""
    magic, version, status, epoch, max_offset, start, file_size, acked, role, addr_len, n_epochs = WELCOME.unpack(data)
    if magic != HA_MAGIC:
        raise HAProtocolError(f"bad magic {magic!r} in the master's answer (not a Gantry HA port)")
    if (
        addr_len > MAX_ADDR_LEN
        or n_epochs > MAX_EPOCHS
        or max_offset < 0
        or start < 0
        or file_size < 0
        or epoch < 0
        or acked < 0
    ):
        raise HAProtocolError("impossible values in the master's answer")
    return Welcome(
        version, status, epoch, max_offset, start, file_size, "", acked, ROLE_NAMES.get(role, ""), (), n_epochs
    ), addr_len


def decode_history(data: bytes, n_epochs: int) -> tuple[tuple[int, int], ...]:
    """The welcome's epoch history; HAProtocolError unless epochs rise and offsets do not fall."""
    out = tuple(EPOCH_ENTRY.unpack_from(data, i * EPOCH_ENTRY.size) for i in range(n_epochs))
    for (e0, s0), (e1, s1) in zip(out, out[1:]):
        if e1 <= e0 or s1 < s0:
            raise HAProtocolError(f"the master's epoch history is not ordered: {out}")
    if any(e < 0 or s < 0 for e, s in out):
        raise HAProtocolError("negative values in the master's epoch history")
    return out


def encode_frame_header(
    offset: int, size: int, master_max: int, master_ts: int, epoch: int = 0, acked: int = 0
) -> bytes:
    return FRAME_HEADER.pack(offset, size, master_max, master_ts, epoch, acked)


def decode_frame_header(data: bytes | bytearray, max_body: int, at: int = 0) -> tuple[int, int, int, int, int, int]:
    """(offset, size, master_max, master_ts, epoch, acked) of the header at ``data[at:]``;
    HAProtocolError for impossible values."""
    offset, size, master_max, master_ts, epoch, acked = FRAME_HEADER.unpack_from(data, at)
    if offset < 0 or size < 0 or size > max_body or master_max < offset + size or epoch < 0 or acked < 0:
        raise HAProtocolError(
            f"impossible frame header: offset {offset}, size {size}, master end {master_max}, "
            f"epoch {epoch}, acked {acked}"
        )
    return offset, size, master_max, master_ts, epoch, acked


def encode_report(max_offset: int) -> bytes:
    return REPORT.pack(max_offset)


def decode_report(data: bytes) -> int:
    offset: int
    (offset,) = REPORT.unpack(data)
    if offset < 0:
        raise HAProtocolError(f"negative offset {offset} in a slave's report")
    return offset
