"""A RocketMQ 4.x consumer that reads only JSON headers, as several third-party clients do.

It speaks the remoting protocol over plain sockets with JSON headers only (serialize type 0), and a
frame in any other serialize type is, to it, garbage: it counts the frame and closes the connection,
as those clients do. It joins a consumer group (HEART_BEAT), answers NOTIFY_CONSUMER_IDS_CHANGED by
rebalancing at once, takes its share of the topic's queues with RocketMQ's AVG allocation over the
group's member list, and pulls them from the committed offset (or the first one).
"""

from __future__ import annotations

import json
import socket
import struct
import threading

from brokers.engine.common import json_compat
from brokers.engine.common.message_codec import decode_records
from brokers.engine.remoting.codes import RequestCode, ResponseCode

_PREFIX = struct.Struct(">ii")


class JsonOnlyConnection:
    """One connection; requests are answered by opaque, the server's own requests go to ``on_request``."""

    def __init__(self, addr: str, peer: JsonOnlyConsumer) -> None:
        host, port = addr.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=5)
        self.sock.settimeout(None)
        self.peer = peer
        self.closed = False
        self._opaque = 0
        self._waiting: dict[int, list] = {}
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _frame(self, header: dict, body: bytes = b"") -> bytes:
        data = json.dumps(header, separators=(",", ":")).encode()
        return _PREFIX.pack(4 + len(data) + len(body), len(data)) + data + body  # serialize type 0: JSON

    def call(self, code: int, ext: dict, body: bytes = b"", timeout_s: float = 5.0) -> tuple[dict, bytes]:
        with self._lock:
            self._opaque += 1
            opaque = self._opaque
        slot: list = [threading.Event(), None]
        self._waiting[opaque] = slot
        header = {
            "code": code,
            "language": "GO",
            "version": 399,
            "opaque": opaque,
            "flag": 0,
            "extFields": {k: str(v) for k, v in ext.items()},
        }
        self.sock.sendall(self._frame(header, body))
        if not slot[0].wait(timeout_s):
            raise TimeoutError(f"no answer to request {code}")
        if slot[1] is None:
            raise ConnectionError("connection closed")
        return slot[1]

    def _recv(self, n: int) -> bytes:
        chunks = b""
        while len(chunks) < n:
            chunk = self.sock.recv(n - len(chunks))
            if not chunk:
                raise ConnectionError("closed by peer")
            chunks += chunk
        return chunks

    def _read(self) -> None:
        try:
            while True:
                length, word = _PREFIX.unpack(self._recv(8))
                rest = self._recv(length - 4)
                if (word >> 24) & 0xFF != 0:  # not JSON: what this client cannot parse
                    self.peer.non_json_frames += 1
                    break
                header_len = word & 0xFFFFFF
                header = json.loads(rest[:header_len])
                body = rest[header_len:]
                if header.get("flag", 0) & 1:
                    slot = self._waiting.pop(header.get("opaque"), None)
                    if slot is not None:
                        slot[1] = (header, body)
                        slot[0].set()
                else:
                    self.peer.on_request(self, header)
        except (OSError, ValueError, ConnectionError):
            pass
        self.close()

    def close(self) -> None:
        self.closed = True
        try:
            self.sock.close()
        except OSError:
            pass
        for slot in self._waiting.values():
            slot[0].set()


class JsonOnlyConsumer:
    """A clustering consumer of ``group`` on ``topic`` (subscription ``*``), run by a thread of its own."""

    def __init__(self, namesrv_addr: str, group: str, topic: str, client_id: str) -> None:
        self.namesrv_addr = namesrv_addr
        self.group = group
        self.topic = topic
        self.client_id = client_id
        self.non_json_frames = 0
        self.notifications = 0
        self.received: list[bytes] = []
        self.assigned: set[tuple[str, int]] = set()
        self._conns: dict[str, JsonOnlyConnection] = {}
        self._offsets: dict[tuple[str, int], int] = {}
        self._rebalance_now = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"json-only-{client_id}", daemon=True)

    @property
    def connections_closed(self) -> int:
        return sum(1 for c in self._conns.values() if c.closed)

    def on_request(self, conn: JsonOnlyConnection, header: dict) -> None:
        if header.get("code") == RequestCode.NOTIFY_CONSUMER_IDS_CHANGED:
            self.notifications += 1
            self._rebalance_now.set()

    def _conn(self, addr: str) -> JsonOnlyConnection:
        conn = self._conns.get(addr)
        if conn is None or conn.closed:
            conn = self._conns[addr] = JsonOnlyConnection(addr, self)
        return conn

    def start(self) -> JsonOnlyConsumer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)
        for conn in self._conns.values():
            conn.close()

    def _route(self) -> dict[str, str]:
        header, body = self._conn(self.namesrv_addr).call(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": self.topic})
        route = json_compat.loads(body)
        self._queues = sorted((q["brokerName"], qid) for q in route["queueDatas"] for qid in range(q["readQueueNums"]))
        return {b["brokerName"]: b["brokerAddrs"].get(0) or b["brokerAddrs"].get("0") for b in route["brokerDatas"]}

    def _heartbeat(self, brokers: dict[str, str]) -> None:
        body = json.dumps(
            {
                "clientID": self.client_id,
                "producerDataSet": [],
                "consumerDataSet": [
                    {
                        "groupName": self.group,
                        "consumeType": "CONSUME_PASSIVELY",
                        "messageModel": "CLUSTERING",
                        "consumeFromWhere": "CONSUME_FROM_FIRST_OFFSET",
                        "unitMode": False,
                        "subscriptionDataSet": [
                            {
                                "topic": self.topic,
                                "subString": "*",
                                "tagsSet": [],
                                "codeSet": [],
                                "subVersion": 1,
                                "expressionType": "TAG",
                                "classFilterMode": False,
                            }
                        ],
                    }
                ],
            }
        ).encode()
        for addr in brokers.values():
            self._conn(addr).call(RequestCode.HEART_BEAT, {}, body)

    def _rebalance(self, brokers: dict[str, str]) -> None:
        header, body = self._conn(next(iter(brokers.values()))).call(
            RequestCode.GET_CONSUMER_LIST_BY_GROUP, {"consumerGroup": self.group}
        )
        cids = sorted(json.loads(body)["consumerIdList"]) if body else []
        if self.client_id not in cids:
            self.assigned = set()
            return
        index, n, count = cids.index(self.client_id), len(self._queues), len(cids)
        mod = n % count  # RocketMQ's AllocateMessageQueueAveragely
        size = (n // count + (1 if index < mod else 0)) if n > count else 1
        start = index * size if index < mod else index * size + mod
        self.assigned = set(self._queues[start : start + min(size, n - start)]) if start < n else set()

    def _pull(self, brokers: dict[str, str]) -> None:
        for broker, qid in sorted(self.assigned):
            conn = self._conn(brokers[broker])
            offset = self._offsets.get((broker, qid))
            if offset is None:
                header, _ = conn.call(
                    RequestCode.QUERY_CONSUMER_OFFSET,
                    {"topic": self.topic, "consumerGroup": self.group, "queueId": qid},
                )
                offset = (
                    int(header.get("extFields", {}).get("offset", 0)) if header["code"] == ResponseCode.SUCCESS else 0
                )
            header, body = conn.call(
                RequestCode.PULL_MESSAGE,
                {
                    "consumerGroup": self.group,
                    "topic": self.topic,
                    "queueId": qid,
                    "queueOffset": offset,
                    "maxMsgNums": 32,
                    "sysFlag": 0,
                    "commitOffset": 0,
                    "suspendTimeoutMillis": 0,
                    "subscription": "*",
                    "subVersion": 0,
                    "expressionType": "TAG",
                },
            )
            if header["code"] == ResponseCode.SUCCESS:
                self.received.extend(m.body for m in decode_records(body))
            offset = int(header.get("extFields", {}).get("nextBeginOffset", offset))
            self._offsets[(broker, qid)] = offset
            conn.call(
                RequestCode.UPDATE_CONSUMER_OFFSET,
                {"topic": self.topic, "consumerGroup": self.group, "queueId": qid, "commitOffset": offset},
            )

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                brokers = self._route()
                self._heartbeat(brokers)
                self._rebalance(brokers)
                self._rebalance_now.clear()
                self._pull(brokers)
            except (OSError, TimeoutError, ConnectionError, KeyError, ValueError):
                pass  # a connection this client closed is opened again on the next round, as such clients do
            self._rebalance_now.wait(0.2)
