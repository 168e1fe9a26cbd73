"""A bare HTTP/2 client for the 5.x port's flow-control tests: it sends one gRPC request whose
length prefix announces ``announced`` bytes, as fast as the server's windows let it (all of them, or
part: a request that stalls halfway), and counts what the server took before it answered. Only what
those tests need: no HPACK table, no Huffman coding."""

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
    sent: int  # request bytes (DATA payload) the server's windows let through, the lead message's too
    answer: str  # "rst" (RST_STREAM), "trailers" (a response ending the stream), "goaway" or "stalled"
    trailers: bytes = b""  # the ending HEADERS block (literal fields: grpc-status, grpc-message readable)
    response: bytes = b""  # the response's DATA: gRPC's 5-byte prefix, then the message


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


class Request:
    """One gRPC request on a connection of its own: a length prefix announcing ``announced`` bytes, then
    as many as the server's windows let through, up to ``send`` bytes of the message (all of it by default;
    fewer: a request that stalls halfway). :meth:`pump` runs it for a while; the socket stays open until
    :meth:`close`."""

    def __init__(
        self, addr: str, path: str, announced: int, *, send: int | None = None, metadata=(), lead: bytes | None = None
    ) -> None:
        host, port = addr.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=5)
        self.sock.setblocking(False)
        self.buf = bytearray()
        self.announced = announced
        # ``lead``: a whole message sent first (on a request stream), then the announced one
        self.opening = (b"" if lead is None else struct.pack(">BI", 0, len(lead)) + lead) + struct.pack(
            ">BI", 0, announced
        )
        self.lead = len(self.opening) - 5
        self.limit = len(self.opening) + (announced if send is None else min(send, announced))
        self.sent = 0
        self.answer: str | None = None
        self.trailers = b""
        self.response = b""
        self.conn_window = self.stream_window = 65535
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
        self.sock.sendall(PREFACE + _frame(SETTINGS, 0, 0) + _frame(HEADERS, END_HEADERS, 1, headers))

    def _read(self) -> None:
        while self.answer is None and (frame := _read_frame(self.sock, self.buf)) is not None:
            kind, flags, stream, payload = frame
            if kind == SETTINGS and not flags & ACK:
                for i in range(0, len(payload), 6):
                    key, value = struct.unpack(">HI", payload[i : i + 6])
                    if key == INITIAL_WINDOW_SIZE:
                        self.stream_window += value - 65535
                self.sock.sendall(_frame(SETTINGS, ACK, 0))
            elif kind == PING and not flags & ACK:
                self.sock.sendall(_frame(PING, ACK, 0, payload))
            elif kind == WINDOW_UPDATE:
                grant = struct.unpack(">I", payload)[0] & 0x7FFFFFFF
                if stream == 0:
                    self.conn_window += grant
                elif stream == 1:
                    self.stream_window += grant
            elif kind == DATA and stream == 1:
                self.response += payload
            elif kind == RST_STREAM and stream == 1:
                self.answer = "rst"
            elif kind == HEADERS and stream == 1 and flags & END_STREAM:
                self.answer, self.trailers = "trailers", payload
            elif kind == GOAWAY:
                self.answer = "goaway"

    def pump(self, seconds: float) -> str | None:
        """Send what the windows allow and read the server's frames for ``seconds`` or until it answers;
        the answer, or None if the request is still open."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and self.answer is None:
            self._read()
            room = min(self.conn_window, self.stream_window, FRAME, self.limit - self.sent)
            if self.answer is not None or room <= 0:
                time.sleep(0.005)
                continue
            chunk = bytes(room)
            if self.sent < len(self.opening):  # prefixes not compressed, the messages' lengths
                head = self.opening[self.sent : self.sent + room]
                chunk = head + chunk[len(head) :]
            try:
                written = self.sock.send(_frame(DATA, 0, 1, chunk))
            except BlockingIOError:
                time.sleep(0.005)
                continue
            if written != 9 + room:  # the rest of a cut frame goes whole, or the connection breaks
                self.sock.setblocking(True)
                self.sock.sendall(_frame(DATA, 0, 1, chunk)[written:])
                self.sock.setblocking(False)
            self.sent, self.conn_window, self.stream_window = (
                self.sent + room,
                self.conn_window - room,
                self.stream_window - room,
            )
        return self.answer

    def outcome(self) -> Outcome:
        return Outcome(self.sent, self.answer or "stalled", self.trailers, self.response)

    def close(self) -> None:
        self.sock.close()


def oversized_request(addr: str, path: str, announced: int, *, metadata=(), give_up_s: float = 10.0) -> Outcome:
    request = Request(addr, path, announced, metadata=metadata)
    try:
        request.pump(give_up_s)
        return request.outcome()
    finally:
        request.close()
