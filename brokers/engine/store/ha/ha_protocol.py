"""The HA stream between a slave and its master: one TCP connection to the master's HA port.

All integers are big-endian. The slave opens the connection and speaks first::

    slave -> master  HELLO   (24 bytes, once)
        0  magic        4s   b"GTHA"
        4  version      u16  HA_VERSION (1)
        6  kind         u16  1 = hello (room for later kinds)
        8  epoch        i64  the group epoch the slave last saw; 0 until epochs exist
       16  max_offset   i64  the slave's commit log end (0 for an empty log)

    master -> slave  WELCOME (42 bytes + the master's broker address, once)
        0  magic        4s   b"GTHA"
        4  version      u16  the master's HA_VERSION
        6  status       u16  0 OK, 1 NOT_MASTER, 2 BAD_VERSION, 3 OFFSET_AHEAD, 4 OFFSET_GONE
        8  epoch        i64  the master's group epoch (0 until epochs exist)
       16  max_offset   i64  the master's commit log end
       24  start        i64  where the stream starts (only meaningful with OK)
       32  file_size    i64  the master's commit log segment size (the slave's must be equal)
       40  addr_len     u16  then addr_len bytes: the master's broker address (UTF-8, host:port)

    master -> slave  FRAME   (28-byte header + body, repeated)
        0  offset       i64  physical offset of the body's first byte
        8  size         i32  body size, 0..haTransferBatchSize (0 = heartbeat)
       12  master_max   i64  the master's commit log end when the frame was sent
       20  master_ts    i64  store time of the master's last record then (ms)
       28  body         raw commit log bytes [offset, offset + size), within one segment

    slave -> master  REPORT  (8 bytes, repeated)
        0  max_offset   i64  bytes the slave holds (appended, and flushed under SYNC_FLUSH)

The first 12 bytes of a frame and the report are RocketMQ 4.x's HA framing; the hello/welcome
exchange and the 16 bytes after a frame's size are Gantry's: the hello gives a version and an
epoch slot (so a later group epoch needs no new handshake), the welcome lets a slave tell "not a
master" from a network fault, and master_max/master_ts let the slave measure its own lag.
A non-OK welcome is followed by the master closing the connection.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

HA_MAGIC = b"GTHA"
HA_VERSION = 1
KIND_HELLO = 1

STATUS_OK = 0
STATUS_NOT_MASTER = 1
STATUS_BAD_VERSION = 2
STATUS_OFFSET_AHEAD = 3  # the slave holds more than the master: a divergent log (promotion's job)
STATUS_OFFSET_GONE = 4  # the slave's end is before the master's first retained segment
STATUS_NAMES = {STATUS_OK: "OK", STATUS_NOT_MASTER: "NOT_MASTER", STATUS_BAD_VERSION: "BAD_VERSION",
                STATUS_OFFSET_AHEAD: "OFFSET_AHEAD", STATUS_OFFSET_GONE: "OFFSET_GONE"}

HELLO = struct.Struct(">4sHHqq")
assert HELLO.size == 24
WELCOME = struct.Struct(">4sHHqqqqH")
assert WELCOME.size == 42
FRAME_HEADER = struct.Struct(">qiqq")
assert FRAME_HEADER.size == 28
REPORT = struct.Struct(">q")
assert REPORT.size == 8
MAX_ADDR_LEN = 255


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


def encode_welcome(status: int, *, max_offset: int = 0, start_offset: int = 0, file_size: int = 0,
                   broker_addr: str = "", epoch: int = 0) -> bytes:
    addr = broker_addr.encode("utf-8")[:MAX_ADDR_LEN]
    return WELCOME.pack(HA_MAGIC, HA_VERSION, status, epoch, max_offset, start_offset, file_size,
                        len(addr)) + addr


def decode_welcome_head(data: bytes) -> tuple[Welcome, int]:
    """Parse the fixed part of a welcome; return it (address empty) and the address length."""
    magic, version, status, epoch, max_offset, start, file_size, addr_len = WELCOME.unpack(data)
    if magic != HA_MAGIC:
        raise HAProtocolError(f"bad magic {magic!r} in the master's answer (not a Gantry HA port)")
    if addr_len > MAX_ADDR_LEN or max_offset < 0 or start < 0 or file_size < 0:
        raise HAProtocolError("impossible values in the master's answer")
    return Welcome(version, status, epoch, max_offset, start, file_size, ""), addr_len


def encode_frame_header(offset: int, size: int, master_max: int, master_ts: int) -> bytes:
    return FRAME_HEADER.pack(offset, size, master_max, master_ts)


def decode_frame_header(data: bytes, max_body: int) -> tuple[int, int, int, int]:
    """(offset, size, master_max, master_ts); HAProtocolError for impossible values."""
    offset, size, master_max, master_ts = FRAME_HEADER.unpack(data)
    if offset < 0 or size < 0 or size > max_body or master_max < offset + size:
        raise HAProtocolError(f"impossible frame header: offset {offset}, size {size}, master end {master_max}")
    return offset, size, master_max, master_ts


def encode_report(max_offset: int) -> bytes:
    return REPORT.pack(max_offset)


def decode_report(data: bytes) -> int:
    (offset,) = REPORT.unpack(data)
    if offset < 0:
        raise HAProtocolError(f"negative offset {offset} in a slave's report")
    return offset
