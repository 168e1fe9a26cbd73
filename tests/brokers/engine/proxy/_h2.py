"""A bare HTTP/2 client for the 5.x port's flow-control tests: it sends one gRPC request whose
length prefix announces ``announced`` bytes, as fast as the server's windows let it, and counts what
the server took before it answered. Only what those tests need: no HPACK table, no Huffman coding."""

from __future__ import annotations

import socket
import struct
import time
from dataclasses import dataclass

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE = 0x0, 0x1, 0x3, 0x4, 0x6, 0x7, 0x8
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
INITIAL_WINDOW_SIZE = 0x4
FRAME = 16384  # the default SETTINGS_MAX_FRAME_SIZE


@dataclass
class Outcome:
    sent: int  # request bytes (DATA payload) the server's windows let through
    answer: str  # "rst" (RST_STREAM), "trailers" (a response ending the stream), "goaway" or "stalled"


def _frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes((kind, flags)) + struct.pack(">I", stream) + payload


def _literal(name: str, value: str) -> bytes:
    """One header field, "literal without indexing, new name" (RFC 7541 6.2.2), lengths under 127."""
    n, v = name.encode(), value.encode()
    return b"\x00" + bytes((len(n),)) + n + bytes((len(v),)) + v


def _read_frame(sock: socket.socket, buf: bytearray) -> tuple[int, int, int, bytes] | None:
    while len(buf) < 9 or len(buf) < 9 + int.from_bytes(buf[:3], "big"):
        try:
            chunk = sock.recv(65536)
        except BlockingIOError:
            return None
        if not chunk:
            raise ConnectionError("the server closed the connection")
        buf += chunk
    size = int.from_bytes(buf[:3], "big")
    kind, flags, stream = buf[3], buf[4], struct.unpack(">I", buf[5:9])[0] & 0x7FFFFFFF
    payload = bytes(buf[9 : 9 + size])
    del buf[: 9 + size]
    return kind, flags, stream, payload


def oversized_request(addr: str, path: str, announced: int, *, metadata=(), give_up_s: float = 10.0) -> Outcome:
    host, port = addr.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=5)
    sock.setblocking(False)
    buf = bytearray()
    headers = b"".join(
        _literal(k, v)
        for k, v in (
            (":method", "POST"),
            (":scheme", "http"),
            (":path", path),
            (":authority", addr),
            ("content-type", "application/grpc"),
            ("te", "trailers"),
            *metadata,
        )
    )
    sock.sendall(PREFACE + _frame(SETTINGS, 0, 0) + _frame(HEADERS, END_HEADERS, 1, headers))
    conn_window, stream_window, sent = 65535, 65535, 0
    body = struct.pack(">BI", 0, announced)  # the gRPC prefix: not compressed, the message's length
    pending = body + bytes(FRAME - len(body))
    deadline = time.monotonic() + give_up_s
    try:
        while time.monotonic() < deadline:
            while (frame := _read_frame(sock, buf)) is not None:
                kind, flags, stream, payload = frame
                if kind == SETTINGS and not flags & ACK:
                    for i in range(0, len(payload), 6):
                        key, value = struct.unpack(">HI", payload[i : i + 6])
                        if key == INITIAL_WINDOW_SIZE:
                            stream_window += value - 65535
                    sock.sendall(_frame(SETTINGS, ACK, 0))
                elif kind == PING and not flags & ACK:
                    sock.sendall(_frame(PING, ACK, 0, payload))
                elif kind == WINDOW_UPDATE:
                    grant = struct.unpack(">I", payload)[0] & 0x7FFFFFFF
                    if stream == 0:
                        conn_window += grant
                    elif stream == 1:
                        stream_window += grant
                elif kind == RST_STREAM and stream == 1:
                    return Outcome(sent, "rst")
                elif kind == HEADERS and stream == 1 and flags & END_STREAM:
                    return Outcome(sent, "trailers")
                elif kind == GOAWAY:
                    return Outcome(sent, "goaway")
            room = min(conn_window, stream_window, FRAME, announced + 5 - sent)
            if room <= 0:
                time.sleep(0.005)
                continue
            chunk = pending[:room] if sent == 0 else bytes(room)
            try:
                sock.send(_frame(DATA, 0, 1, chunk))
            except BlockingIOError:
                time.sleep(0.005)
                continue
            sent, conn_window, stream_window = sent + room, conn_window - room, stream_window - room
        return Outcome(sent, "stalled")
    finally:
        sock.close()
