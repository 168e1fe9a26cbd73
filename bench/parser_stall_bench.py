"""The stall one hostile request causes everyone else: the worst case of each parser a request
reaches, sent to a broker (a subprocess) while a producer on another connection sends one
message after another; the producer's send latency during the attack is what is recorded.

Attacks (each on its own raw connection, one at a time):

- pull naming 100k tags (a 1.2 MB header; 53 s before the port limits);
- pull naming 1024 tags (the most the default limits accept);
- heartbeat with 100k tags in one subscription (a 1.2 MB body);
- heartbeat of ~15 MiB: subscriptions of 1024 tags each (the largest accepted heartbeat);
- header nested 100k deep; a 15 MiB JSON header (one huge ext field).

    .venv/bin/python bench/parser_stall_bench.py [--window 1.0]

Prints, per attack: how the attack was answered, and the median / max latency of the sends that
ran beside it (baseline first: sends with no attack).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from processes import ClusterSpec, ProcessCluster  # noqa: E402

from brokers.engine.cluster import GroupSpec  # noqa: E402

from brokers.engine.common.message import properties_to_string  # noqa: E402
from brokers.engine.remoting.client import RemotingClient  # noqa: E402
from brokers.engine.remoting.codes import RequestCode  # noqa: E402
from brokers.engine.remoting.command import RemotingCommand  # noqa: E402


def _frame(header: bytes, body: bytes = b"") -> bytes:
    return struct.pack(">ii", 4 + len(header) + len(body), len(header)) + header + body


def _header(code: int, ext: dict | None = None, opaque: int = 9) -> bytes:
    return json.dumps(
        {
            "code": code,
            "opaque": opaque,
            "flag": 0,
            "language": "JAVA",
            "version": 0,
            "extFields": {k: str(v) for k, v in (ext or {}).items()},
        }
    ).encode()


def _pull(tags: int) -> bytes:
    sub = " || ".join(f"tag{i}" for i in range(tags))
    return _frame(
        _header(
            RequestCode.PULL_MESSAGE,
            {
                "consumerGroup": "cg",
                "topic": "S",
                "queueId": 0,
                "queueOffset": 0,
                "maxMsgNums": 32,
                "sysFlag": 4,
                "commitOffset": 0,
                "suspendTimeoutMillis": 0,
                "subVersion": 0,
                "subscription": sub,
                "expressionType": "TAG",
            },
        )
    )


def _heartbeat(subscriptions: list[list[str]]) -> bytes:
    body = {
        "clientID": "attacker",
        "producerDataSet": [],
        "consumerDataSet": [
            {
                "groupName": "cg",
                "consumeType": "CONSUME_PASSIVELY",
                "messageModel": "CLUSTERING",
                "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET",
                "unitMode": False,
                "subscriptionDataSet": [
                    {
                        "topic": "S",
                        "subString": " || ".join(tags),
                        "tagsSet": tags,
                        "codeSet": [],
                        "subVersion": 1,
                        "expressionType": "TAG",
                    }
                    for tags in subscriptions
                ],
            }
        ],
    }
    return _frame(_header(RequestCode.HEART_BEAT), json.dumps(body).encode())


def attacks() -> list[tuple[str, bytes]]:
    per_sub = [f"tag{i}" for i in range(1024)]
    sub_bytes = len(json.dumps(per_sub)) * 2 + 100
    return [
        ("pull naming 100k tags", _pull(100_000)),
        ("pull naming 1024 tags (accepted)", _pull(1024)),
        ("heartbeat, 100k tags", _heartbeat([[f"tag{i}" for i in range(100_000)]])),
        ("heartbeat ~15 MiB of 1024-tag subscriptions", _heartbeat([per_sub] * ((15 << 20) // sub_bytes))),
        (
            "header nested 100k deep",
            _frame(b'{"code":30,"opaque":9,"extFields":{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}}"),
        ),
        (
            "15 MiB JSON header",
            _frame(_header(RequestCode.GET_MAX_OFFSET, {"topic": "S", "queueId": 0, "x": "a" * (15 << 20)})),
        ),
    ]


async def _sender(client: RemotingClient, addr: str, stop: asyncio.Event, latencies: list[float]) -> None:
    props = properties_to_string({})
    while not stop.is_set():
        request = RemotingCommand.request(
            RequestCode.SEND_MESSAGE_V2,
            {
                "a": "pg",
                "b": "S",
                "c": "TBW102",
                "d": 4,
                "e": 0,
                "f": 0,
                "g": int(time.time() * 1000),
                "h": 0,
                "i": props,
                "j": 0,
                "k": False,
            },
            b"x" * 100,
        )
        start = time.perf_counter()
        response = await client.invoke(addr, request, 120.0)
        latencies.append(time.perf_counter() - start)
        assert response.code == 0, response


async def _attack(host: str, port: int, frame: bytes) -> str:
    reader, writer = await asyncio.open_connection(host, port)
    started = time.perf_counter()
    writer.write(frame)
    try:
        (total,) = struct.unpack(">i", await reader.readexactly(4))
        answer = RemotingCommand.decode(await reader.readexactly(total))
        outcome = f"code {answer.code}: {(answer.remark or '')[:70]}"
    except (asyncio.IncompleteReadError, ConnectionError) as exc:
        outcome = f"closed ({type(exc).__name__})"
    writer.close()
    return f"{outcome} after {(time.perf_counter() - started) * 1000:.0f} ms"


async def run(port: int, window_s: float) -> None:
    addr = f"127.0.0.1:{port}"
    client = RemotingClient()
    await client.invoke(
        addr,
        RemotingCommand.request(
            RequestCode.UPDATE_AND_CREATE_TOPIC,
            {
                "topic": "S",
                "defaultTopic": "TBW102",
                "readQueueNums": 1,
                "writeQueueNums": 1,
                "perm": 6,
                "topicFilterType": "SINGLE_TAG",
                "topicSysFlag": 0,
                "order": False,
            },
        ),
        10.0,
    )
    cases: list[tuple[str, bytes | None]] = [("baseline (no attack)", None), *attacks()]
    print(f"{'attack':46} {'sends':>6} {'median ms':>10} {'max ms':>8}  answer")
    for name, frame in cases:
        stop, latencies = asyncio.Event(), []
        sender = asyncio.create_task(_sender(client, addr, stop, latencies))
        await asyncio.sleep(window_s / 4)
        latencies.clear()
        outcome = await _attack("127.0.0.1", port, frame) if frame is not None else "-"
        await asyncio.sleep(window_s)
        stop.set()
        await sender
        print(
            f"{name:46} {len(latencies):6d} {statistics.median(latencies) * 1000:10.2f} {max(latencies) * 1000:8.1f}  {outcome}",
            flush=True,
        )
    await client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--window", type=float, default=1.0, help="seconds of sends measured after each attack")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as store:
        # one broker and no name server: the sends go to the broker's port directly
        spec = ClusterSpec(store, groups=(GroupSpec("broker-a"),), namesrvs=0)
        with ProcessCluster(spec, log_level="ERROR") as cluster:
            asyncio.run(run(cluster.brokers["broker-a"].port, args.window))
    return 0


if __name__ == "__main__":
    sys.exit(main())
