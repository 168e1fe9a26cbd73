"""What hostile peers cost everyone else: a normal client's latency, the server's memory, a newcomer's
first request, while an attacker (another process) sends one hostile pattern in a loop.

The ACL is on (``--no-acl`` turns it off, and skips ``replay``): the victim and the newcomer sign
as a producer account, each request with a new nonce; the attacker has no credentials, only what it
captured. A name server and a broker are subprocesses with a receive budget (``--max-buffered-bytes``, default
here 256 MiB; ``--max-unauthenticated-bytes`` 64 MiB). For each target (the broker, then the name
server) and each pattern, the victim (this process, its own connection) sends one request after
another (SEND_MESSAGE_V2 to the broker, GET_ROUTEINFO_BY_TOPIC to the name server) for ``--window``
seconds quiet, then as long again under attack. Patterns:

- ``partial``: 200 connections each declare a 15 MiB frame, send 1 MiB of it and stall (a closed one
  is opened again at once);
- ``idle``: 2,000 silent sockets from the victim's own address, 127.0.0.1 (closed ones reopened);
- ``byte``: the same 2,000 sockets, each sending one byte of a frame first, so the kernel hands them
  to the server at once (``--defer-accept`` holds only silent ones);
- ``heartbeat``: HEART_BEATs naming 200,000 producer groups (5 MB), one after another (broker only);
- ``replay``: a captured admin-signed request (UPDATE_AND_CREATE_TOPIC to the broker, PUT_KV_CONFIG
  to the name server) sent again and again, as fast as the answers come, on 4 connections. Gantry's
  signers add a timestamp and a nonce, so every copy is refused as a replay;
- ``spin``: the control: the attacker burns one core and sends nothing. It measures what a third busy
  process on the 2 cores alone does to the victim (the scheduler's share), which no server can remove.

``--attacker-nice 19`` runs the attacker at the lowest CPU priority: as if it ran on another host, its
own CPU no longer competes with the server and the victim, so what remains is what the server spends on
the attack. ``--pin`` goes further: the attacker alone on the second core, the servers and the victim
together on the first (the spin control then costs the victim nothing; what the server spends on the
attack comes out of the victim's core).

Per row: the victim's p50 / p99 / max latency quiet and under attack, its timeouts (3 s, the clients'
default), the ratio of the p99s (goal <= 2), the server's CPU (its share of a core in the quiet and in
the attacked windows: what the attack costs the server itself), the server's peak RSS (goal < budget + 100 MB), and the
seconds a new client from 127.0.0.1 takes to connect and get its first answer during the attack
(goal < 5).

    .venv/bin/python bench/hostile_peers_bench.py [--window 5] [--budget-mib 256] [--patterns partial,idle,byte,heartbeat,replay,spin]
        [--attacker-nice 0] [--pin] [--rounds 1] [--no-acl]

``--rounds N`` alternates N quiet and N attacked windows per row and takes the percentiles over all of
them: on a shared 2-core machine one quiet window's p99 moves 0.7-3 ms from run to run by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import struct
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from bench_common import ATTACKER_CPU, SERVED_CPU, CpuShare, pin_to  # noqa: E402
from processes import ClusterSpec, ProcessCluster, settle  # noqa: E402

from brokers.engine.acl.client_hook import AclClientHook  # noqa: E402
from brokers.engine.cluster import GroupSpec  # noqa: E402

from brokers.engine.common.message import properties_to_string  # noqa: E402
from brokers.engine.remoting.client import RemotingClient  # noqa: E402
from brokers.engine.remoting.codes import RequestCode  # noqa: E402
from brokers.engine.remoting.command import RemotingCommand  # noqa: E402
from brokers.engine.remoting.errors import RemotingError  # noqa: E402

MIB = 1 << 20
TIMEOUT_S = 3.0
ADMIN = AclClientHook("hostile-admin", "hostile-admin-secret-0123456789")
PRODUCER = AclClientHook("hostile-producer", "hostile-producer-secret-0123456789")
ACL_TEXT = f"""\
accounts:
  - accessKey: {ADMIN.access_key}
    secretKey: {ADMIN.secret_key}
    admin: true
  - accessKey: {PRODUCER.access_key}
    secretKey: {PRODUCER.secret_key}
    defaultTopicPerm: PUB|SUB
    defaultGroupPerm: SUB
"""


def _frame(header: bytes, body: bytes = b"") -> bytes:
    return struct.pack(">ii", 4 + len(header) + len(body), len(header)) + header + body


def _header(code: int, opaque: int = 9) -> bytes:
    return json.dumps({"code": code, "opaque": opaque, "flag": 0, "language": "JAVA", "version": 0}).encode()


def _huge_heartbeat() -> bytes:
    body = {
        "clientID": "attacker",
        "consumerDataSet": [],
        "producerDataSet": [{"groupName": f"pg-{i:06d}"} for i in range(200_000)],
    }
    return _frame(_header(RequestCode.HEART_BEAT), json.dumps(body).encode())


async def _hold(port: int, payload: bytes, stop: float) -> None:
    """Keep one connection open with ``payload`` sent, reopening it whenever the server closes it."""
    while time.monotonic() < stop:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            if payload:
                writer.write(payload)
            while time.monotonic() < stop and not reader.at_eof():
                try:
                    await asyncio.wait_for(reader.read(65536), 0.5)
                except TimeoutError:
                    continue
            writer.close()
        except (ConnectionError, OSError):
            await asyncio.sleep(0.05)


async def _repeat(port: int, frame: bytes, stop: float) -> None:
    while time.monotonic() < stop:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            while time.monotonic() < stop:
                writer.write(frame)
                await writer.drain()
                (total,) = struct.unpack(">i", await reader.readexactly(4))
                await reader.readexactly(total)
        except (ConnectionError, OSError, asyncio.IncompleteReadError):
            await asyncio.sleep(0.05)


def attacker(pattern: str, port: int, seconds: float, nice: int = 0, captured: bytes = b"", pin: bool = False) -> None:
    """The attacking process: ``pattern`` against ``port`` for ``seconds``, at CPU priority ``nice``
    (``captured``: the signed frame the replay pattern sends again), alone on its core with ``pin``."""
    os.nice(nice)
    if pin:
        pin_to(ATTACKER_CPU)

    async def main() -> None:
        stop = time.monotonic() + seconds
        if pattern == "spin":
            while time.monotonic() < stop:
                pass
        elif pattern == "partial":
            payload = struct.pack(">ii", 15 * MIB, 64) + b"{" + b" " * 62 + b"}" + b"x" * MIB
            await asyncio.gather(*(_hold(port, payload, stop) for _ in range(200)))
        elif pattern in ("idle", "byte"):
            first = b"" if pattern == "idle" else b"\x00"
            await asyncio.gather(*(_hold(port, first, stop) for _ in range(2000)))
        elif pattern == "heartbeat":
            await _repeat(port, _huge_heartbeat(), stop)
        elif pattern == "replay":
            await asyncio.gather(*(_repeat(port, captured, stop) for _ in range(4)))

    asyncio.run(main())


def _rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class RssWatch:
    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._stop = pid, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            self.peak = max(self.peak, _rss_mib(self.pid))

    def __enter__(self) -> RssWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def _request(target: str) -> RemotingCommand:
    if target == "broker":
        return RemotingCommand.request(
            RequestCode.SEND_MESSAGE_V2,
            {
                "a": "pg",
                "b": "Hostile",
                "c": "TBW102",
                "d": 4,
                "e": 0,
                "f": 0,
                "g": int(time.time() * 1000),
                "h": 0,
                "i": properties_to_string({}),
                "j": 0,
                "k": False,
            },
            b"x" * 100,
        )
    return RemotingCommand.request(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": "Hostile"})


async def _victim(addr: str, target: str, seconds: float, signer: AclClientHook | None) -> tuple[list[float], int]:
    client = RemotingClient(name="victim", signer=signer)
    latencies, timeouts = [], 0
    stop = time.monotonic() + seconds
    try:
        while time.monotonic() < stop:
            started = time.perf_counter()
            try:
                await client.invoke(addr, _request(target), TIMEOUT_S)
                latencies.append(time.perf_counter() - started)
            except RemotingError:
                timeouts += 1
    finally:
        await client.close()
    return latencies, timeouts


async def _newcomer(addr: str, target: str, delay_s: float, signer: AclClientHook | None) -> float:
    await asyncio.sleep(delay_s)
    started = time.perf_counter()
    deadline = started + 30
    while time.perf_counter() < deadline:
        client = RemotingClient(name="newcomer", signer=signer)
        try:
            await client.invoke(addr, _request(target), TIMEOUT_S)
            return time.perf_counter() - started
        except RemotingError:
            await asyncio.sleep(0.1)
        finally:
            await client.close()
    return float("inf")


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] * 1000 if values else float("nan")


@dataclass(frozen=True)
class Target:
    """A server under attack: ``name`` ("broker" or "namesrv"), where it listens, its process, and the
    admin-signed frame a replay sends (captured from its operator: signed with a timestamp and a nonce)."""

    name: str
    addr: str
    port: int
    pid: int
    captured: bytes


def measure(
    target: Target, pattern: str, window: float, nice: int, rounds: int, signer: AclClientHook | None, pin: bool
) -> str:
    """``rounds`` of a quiet window then an attacked one; the percentiles are over every round's samples
    (alternating spreads the machine's own noise over both sides), the server's CPU over each side's windows."""
    quiet: list[float] = []
    loud: list[float] = []
    timeouts = 0
    newcomer_s = 0.0
    cpu = CpuShare(target.pid)
    name, addr = target.name, target.addr

    def counted(side: str, run):
        with cpu.counting(side):
            return asyncio.run(run())

    with RssWatch(target.pid) as rss:
        for _ in range(rounds):
            samples, missed = counted("quiet", lambda: _victim(addr, name, window, signer))
            quiet += samples
            timeouts += missed
            proc = multiprocessing.get_context("spawn").Process(
                target=attacker, args=(pattern, target.port, window + 2, nice, target.captured, pin)
            )
            proc.start()
            time.sleep(1.0)  # let the attack build up

            async def under_attack():
                return await asyncio.gather(
                    _victim(addr, name, window, signer), _newcomer(addr, name, window / 2, signer)
                )

            (samples, missed), took = counted("attacked", under_attack)
            loud += samples
            timeouts += missed
            newcomer_s = max(newcomer_s, took)
            proc.join(30)
            # the attacker's sockets and calls end with it: the next quiet window starts once the server is idle again
            settle(target.pid)
    ratio = _pct(loud, 0.99) / _pct(quiet, 0.99)
    return (
        f"| {name} | {pattern} | {_pct(quiet, 0.5):.2f} / {_pct(quiet, 0.99):.2f} / {_pct(quiet, 1):.1f} | "
        f"{_pct(loud, 0.5):.2f} / {_pct(loud, 0.99):.2f} / {_pct(loud, 1):.1f} | {timeouts} | {ratio:.2f} | "
        f"{cpu.share('quiet'):.2f} / {cpu.share('attacked'):.2f} | "
        f"{rss.peak:.0f} | {newcomer_s:.2f} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--window", type=float, default=5.0)
    parser.add_argument("--budget-mib", type=int, default=256)
    parser.add_argument("--patterns", default="partial,idle,byte,heartbeat,replay,spin")
    parser.add_argument("--attacker-nice", type=int, default=0, help="the attacker's CPU priority (19: lowest)")
    parser.add_argument("--rounds", type=int, default=1, help="quiet and attacked windows, alternating, per row")
    parser.add_argument("--no-acl", action="store_true", help="run the servers without the ACL (and skip replay)")
    parser.add_argument("--pin", action="store_true", help="the attacker alone on one core, the rest on the other")
    args = parser.parse_args()
    if args.pin:
        pin_to(SERVED_CPU)  # the victim; the servers' processes inherit it
    limits = {"max_buffered_bytes": args.budget_mib * MIB, "max_unauthenticated_bytes": 64 * MIB}
    patterns = [p for p in args.patterns.split(",") if not (args.no_acl and p == "replay")]
    print(
        f"budget {args.budget_mib} MiB (unauthenticated 64 MiB); window {args.window} s; "
        f"attacker nice {args.attacker_nice}; pinned {args.pin}; ACL {'off' if args.no_acl else 'on'}; "
        f"load {os.getloadavg()[0]:.2f}"
    )
    print(
        "| target | pattern | quiet p50 / p99 / max ms | attacked p50 / p99 / max ms | timeouts | p99 ratio "
        "| server CPU quiet / attacked | peak RSS MiB | newcomer s |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    admin = None if args.no_acl else ADMIN
    signer = None if args.no_acl else PRODUCER
    with tempfile.TemporaryDirectory() as tmp:
        acl: dict[str, str] = {}
        if admin is not None:
            acl_file = Path(tmp) / "plain_acl.yml"
            acl_file.write_text(ACL_TEXT)
            acl_file.chmod(0o600)
            acl = {"acl_file": str(acl_file)}
        spec = ClusterSpec(
            tmp,
            groups=(GroupSpec("broker-a"),),
            broker_overrides={"limits": limits, **acl},
            namesrv_overrides={"limits": limits, **acl},
        )
        keys = {"access_key": admin.access_key, "secret_key": admin.secret_key} if admin is not None else {}
        with ProcessCluster(spec, log_level="ERROR", admin_options=keys) as cluster:
            asyncio.run(_admin_call(cluster.addr("broker-a"), _create_topic(), admin))
            kv = RemotingCommand.request(RequestCode.PUT_KV_CONFIG, {"namespace": "hostile", "key": "k", "value": "v"})
            targets = (
                Target(
                    "broker",
                    cluster.addr("broker-a"),
                    cluster.brokers["broker-a"].port,
                    cluster.pid("broker-a"),
                    _captured(_create_topic(), admin),
                ),
                Target(
                    "namesrv",
                    cluster.namesrv_addr,
                    cluster.namesrvs[0].port,
                    cluster.namesrvs[0].pid,
                    _captured(kv, admin),
                ),
            )
            if admin is not None and "replay" in patterns:
                for target in targets:  # the operator's own request goes through; a copy of it is a replay
                    first, again = asyncio.run(_send_twice(target.addr, target.captured))
                    if first.code != 0 or again.code == 0 or "replay" not in (again.remark or ""):
                        raise RuntimeError(f"{target.name}: captured request {first}, its copy {again}")
            for target in targets:
                for pattern in patterns:
                    if target.name == "broker" or pattern != "heartbeat":
                        print(
                            measure(target, pattern, args.window, args.attacker_nice, args.rounds, signer, args.pin),
                            flush=True,
                        )
    return 0


def _captured(request: RemotingCommand, admin: AclClientHook | None) -> bytes:
    """``request`` as the wire carried it when the admin sent it: signed once (a timestamp and a nonce)."""
    return (admin.sign_request(request) if admin is not None else request).encode()


def _create_topic() -> RemotingCommand:
    return RemotingCommand.request(
        RequestCode.UPDATE_AND_CREATE_TOPIC,
        {
            "topic": "Hostile",
            "defaultTopic": "TBW102",
            "readQueueNums": 4,
            "writeQueueNums": 4,
            "perm": 6,
            "topicFilterType": "SINGLE_TAG",
            "topicSysFlag": 0,
            "order": False,
        },
    )


async def _send_twice(addr: str, frame: bytes) -> tuple[RemotingCommand, RemotingCommand]:
    """Send the encoded request ``frame`` twice on one connection; the two answers."""
    host, port = addr.rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    answers = []
    try:
        for _ in range(2):
            writer.write(frame)
            (total,) = struct.unpack(">i", await reader.readexactly(4))
            answers.append(RemotingCommand.decode(await reader.readexactly(total)))
    finally:
        writer.close()
    return answers[0], answers[1]


async def _admin_call(addr: str, request: RemotingCommand, admin: AclClientHook | None) -> None:
    client = RemotingClient(signer=admin)
    try:
        reply = await client.invoke(addr, request, 10.0)
        if reply.code != 0:
            raise RuntimeError(f"request {request.code} at {addr}: {reply.code} {reply.remark}")
    finally:
        await client.close()


if __name__ == "__main__":
    sys.exit(main())
