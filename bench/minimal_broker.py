"""The minimal asyncio broker: the ceiling row of the performance goals ("batch produce vs the minimal asyncio
broker baseline, in the same harness").

The smallest asyncio server that a Gantry producer can send to: it speaks the remoting framing
(a 4-byte total length, a header-length word whose high byte is the serialize type, the header in
JSON (type 0) or ROCKETMQ binary (type 1), the body) and answers, in the request's serialize type:

- SEND_MESSAGE (10), SEND_MESSAGE_V2 (310), SEND_BATCH_MESSAGE (320): appends the body to one file
  (buffered, never fsynced: like ASYNC_FLUSH) and answers SUCCESS with ``msgId``, ``queueId`` and
  ``queueOffset`` (a batch advances the queue's offset by its message count, read from the
  batch body's 4-byte record sizes);
- GET_ROUTEINFO_BY_TOPIC (105): a route naming itself as the master of ``--queues`` queues of any
  topic, so the producer is simply pointed at this address as its name server;
- HEART_BEAT (34), UNREGISTER_CLIENT (35): SUCCESS; anything else REQUEST_CODE_NOT_SUPPORTED.

It imports nothing of Gantry (no broker, no store, no codec): it is what asyncio and Python do per
request, the ceiling Gantry's broker is compared with. Loopback only.

    .venv/bin/python bench/minimal_broker.py --port 10911 --file /tmp/minimal.log [--queues 4]

It prints "ready" once listening and stops on SIGTERM or SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import struct

SUCCESS, NOT_SUPPORTED = 0, 3
SEND_CODES = frozenset((10, 310, 320))
SEND_BATCH = 320
ROUTE, HEART_BEAT, UNREGISTER_CLIENT = 105, 34, 35
FLAG_RESPONSE = 1
_INT = struct.Struct(">i")
_PREFIX = struct.Struct(">ii")
_BINARY_FIXED = struct.Struct(">hbhii")  # code, language, version, opaque, flag


def decode_header(kind: int, header: bytes) -> tuple[int, int, dict[str, str]]:
    """(code, opaque, ext fields) of a JSON (0) or ROCKETMQ binary (1) header."""
    if kind == 0:
        obj = json.loads(header)
        return obj["code"], obj.get("opaque", 0), obj.get("extFields") or {}
    code, _lang, _version, opaque, _flag = _BINARY_FIXED.unpack_from(header)
    pos = _BINARY_FIXED.size
    (remark_len,) = _INT.unpack_from(header, pos)
    pos += 4 + max(remark_len, 0)
    (ext_len,) = _INT.unpack_from(header, pos)
    pos += 4
    end, ext = pos + ext_len, {}
    while pos < end:
        key_len = int.from_bytes(header[pos : pos + 2], "big")
        key = header[pos + 2 : pos + 2 + key_len].decode()
        pos += 2 + key_len
        (val_len,) = _INT.unpack_from(header, pos)
        ext[key] = header[pos + 4 : pos + 4 + val_len].decode()
        pos += 4 + val_len
    return code, opaque, ext


def encode_response(kind: int, code: int, opaque: int, ext: dict[str, str], body: bytes = b"") -> bytes:
    """A whole response frame in serialize type ``kind``."""
    if kind == 0:
        header = json.dumps(
            {
                "code": code,
                "extFields": ext,
                "flag": FLAG_RESPONSE,
                "language": "PYTHON",
                "opaque": opaque,
                "serializeTypeCurrentRPC": "JSON",
                "version": 0,
            },
            separators=(",", ":"),
        ).encode()
    else:
        parts = [_BINARY_FIXED.pack(code, 3, 0, opaque, FLAG_RESPONSE), _INT.pack(0)]
        entries = []
        for k, v in ext.items():
            kb, vb = k.encode(), v.encode()
            entries.append(len(kb).to_bytes(2, "big") + kb + _INT.pack(len(vb)) + vb)
        packed = b"".join(entries)
        header = b"".join(parts) + _INT.pack(len(packed)) + packed
    return _PREFIX.pack(4 + len(header) + len(body), (kind << 24) | len(header)) + header + body


def batch_count(body: bytes) -> int:
    """Messages in a batch body: consecutive records, each starting with its 4-byte total size."""
    pos, n = 0, 0
    while pos + 4 <= len(body):
        (size,) = _INT.unpack_from(body, pos)
        if size <= 0:
            break
        pos += size
        n += 1
    return max(n, 1)


class MinimalBroker:
    """The state: the append-only file and each queue's next offset."""

    def __init__(self, path: str, port: int, queues: int) -> None:
        self.file = open(path, "ab", buffering=1 << 20)  # noqa: SIM115 (closed on stop)
        self.addr = f"127.0.0.1:{port}"
        self.queues = queues
        self.offsets: dict[tuple[str, int], int] = {}
        self.next_id = 0

    def handle(self, kind: int, header: bytes, body: bytes) -> bytes:
        code, opaque, ext = decode_header(kind, header)
        if code in SEND_CODES:
            topic = ext.get("topic") or ext.get("b", "")
            queue_id = int(ext.get("queueId") or ext.get("e") or 0)
            count = batch_count(body) if code == SEND_BATCH else 1
            self.file.write(body)
            key = (topic, queue_id)
            offset = self.offsets.get(key, 0)
            self.offsets[key] = offset + count
            self.next_id += count
            return encode_response(
                kind,
                SUCCESS,
                opaque,
                {"msgId": f"{self.next_id:032X}", "queueId": str(queue_id), "queueOffset": str(offset)},
            )
        if code == ROUTE:
            route = {
                "queueDatas": [
                    {
                        "brokerName": "minimal",
                        "readQueueNums": self.queues,
                        "writeQueueNums": self.queues,
                        "perm": 6,
                        "topicSysFlag": 0,
                    }
                ],
                "brokerDatas": [{"cluster": "minimal", "brokerName": "minimal", "brokerAddrs": {"0": self.addr}}],
            }
            return encode_response(kind, SUCCESS, opaque, {}, json.dumps(route).encode())
        if code in (HEART_BEAT, UNREGISTER_CLIENT):
            return encode_response(kind, SUCCESS, opaque, {})
        return encode_response(kind, NOT_SUPPORTED, opaque, {})


class Connection(asyncio.Protocol):
    """Frames out of the byte stream; every complete request answered in order, in one write per
    ``data_received``."""

    def __init__(self, broker: MinimalBroker) -> None:
        self.broker = broker
        self.buffer = bytearray()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        buf = self.buffer
        buf += data
        out, pos = [], 0
        while len(buf) - pos >= 8:
            total, word = _PREFIX.unpack_from(buf, pos)
            if len(buf) - pos < 4 + total:
                break
            header_len = word & 0xFFFFFF
            start = pos + 8
            out.append(
                self.broker.handle(
                    word >> 24, bytes(buf[start : start + header_len]), bytes(buf[start + header_len : pos + 4 + total])
                )
            )
            pos += 4 + total
        del buf[:pos]
        if out:
            self.transport.write(b"".join(out))  # type: ignore[attr-defined]


async def serve(port: int, path: str, queues: int) -> None:
    broker = MinimalBroker(path, port, queues)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: Connection(broker), "127.0.0.1", port)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    print("minimal broker ready", flush=True)
    await stop.wait()
    server.close()
    broker.file.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--file", required=True, help="the append-only file (created 0600)")
    ap.add_argument("--queues", type=int, default=4)
    args = ap.parse_args()
    os.close(os.open(args.file, os.O_CREAT | os.O_WRONLY, 0o600))
    asyncio.run(serve(args.port, args.file, args.queues))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
