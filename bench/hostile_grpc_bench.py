"""What hostile peers of the 5.x gRPC endpoint cost everyone else: a normal 5.x client's send latency, the
broker's memory, a newcomer's first call, while an attacker (another process) sends one pattern in a loop.

A name server and a broker with ``--grpc-port`` are subprocesses. The victim (this process, its own
channel) sends one SendMessage after another for ``--window`` seconds quiet, then as long under attack.
Patterns:

- ``streams``: 2,000 ReceiveMessage long polls (20 s) open at once over 100 channels on a topic of their own,
  reopened as they end (what holding and reopening thousands of polls costs);
- ``consume``: the same 2,000 polls on the victim's topic: each message the victim sends is also delivered to
  one of them, which then polls again (a consumer group's normal cost, with the attacker as the consumer);
- ``consumer``: the control for ``consume``: one poll at a time on the victim's topic (one well-behaved
  consumer: what consuming the victim's messages costs whoever does it);
- ``stalled``: 200 connections, each with a SendMessage announcing 4 MiB that stalls after 3 MiB (reopened
  when the port answers it): the port reads few requests at once (proxy/intake.py), the rest hold their window;
- ``telemetry``: the same with 200 Telemetry streams, half of them sending their settings (answered) before the
  stalled message: a stream is read as it opens and when its client's settings are due, not in between;
- ``idle``: 2,000 TCP connections to the port that never speak HTTP/2 (reopened when closed);
- ``settings``: the huge heartbeat in 5.x form: on 4 channels, settings naming 200,000 topics (5 MB), then a
  heartbeat, again and again under 4 client ids (the endpoint refuses settings past 1,000 entries or 64 KiB);
- ``settings-max``: the same with the largest settings the endpoint takes (1,000 subscriptions of 36
  characters each, near 64 KiB), which each heartbeat then carries to the broker: a load pattern, like ``sends``;
- ``oversize``: SendMessage requests of 20 MB (past the port's request cap) one after another on 4 channels;
- ``clients``: a new client id on every call (sessions up to ``grpc_max_clients``, then refusals);
- ``sends``: the control for ``clients``: the same sends on 4 channels under one client id (a producer's
  normal load: 4 calls at a time against the victim's one);
- ``replay``: one captured SendMessage (its message id too) sent again as soon as it is answered, on one
  channel: a replay loop (the 5.x signature has no freshness to refuse it by, docs/security.md);
- ``garbage``: malformed protobufs on every RPC, one after another on 4 channels;
- ``spin``: the control: the attacker burns one core and sends nothing (what a third busy process on the
  2 cores alone does to the victim).

``--attacker-nice 19`` runs the attacker at the lowest CPU priority; ``--pin`` puts it alone on the second core
and the broker and the victim together on the first, closer to an attacker on another host: the spin control
then costs the victim nothing, and what remains is what the broker spends on the attack, taken from the
victim's own core.

Per row: the victim's p50 / p99 / max latency quiet and under attack, its failures (3 s deadline), the
p99 ratio (goal <= 2), the broker's CPU (its share of a core in the quiet and in the attacked windows:
what the attack costs the broker itself), the broker's peak RSS, and the seconds a new client takes to connect and send.

    .venv/bin/python bench/hostile_grpc_bench.py [--window 5] [--patterns PATTERNS] [--attacker-nice 0] [--pin]
        [--rounds 1]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import socket
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from bench_common import ATTACKER_CPU, SERVED_CPU, CpuShare, pin_to  # noqa: E402
from tests.brokers.engine.proxy._h2 import Request  # noqa: E402
from processes import settle, start_grpc_broker  # noqa: E402

import grpc  # noqa: E402
from google.protobuf.duration_pb2 import Duration  # noqa: E402

from brokers.engine.client.admin import BlockingMQAdminClient  # noqa: E402
from brokers.engine.common.topic_config import TopicConfig  # noqa: E402
from brokers.engine.proxy.stubs import definition_pb2 as pb  # noqa: E402
from brokers.engine.proxy.stubs import service_pb2 as spb  # noqa: E402
from brokers.engine.proxy.stubs import service_pb2_grpc  # noqa: E402

TOPIC = "HostileGrpc"
POLL_TOPIC = "HostileGrpcPolls"  # the streams pattern polls a topic nobody sends to
PATTERNS = (
    "streams,consume,consumer,idle,stalled,telemetry,settings,settings-max,oversize,clients,sends,replay,garbage,spin"
)


def meta(client_id: str) -> list[tuple[str, str]]:
    return [("x-mq-client-id", client_id), ("x-mq-language", "PYTHON"), ("x-mq-client-version", "5.1.2")]


def send_request(body: bytes) -> spb.SendMessageRequest:
    request = spb.SendMessageRequest()
    msg = request.messages.add(topic=pb.Resource(name=TOPIC), body=body)
    msg.system_properties.message_id = uuid.uuid4().hex
    msg.system_properties.message_type = pb.NORMAL
    return request


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def settings_command() -> bytes:
    command = spb.TelemetryCommand()
    command.settings.client_type = pb.PRODUCER
    command.settings.publishing.topics.add(name=TOPIC)
    return command.SerializeToString()


def huge_settings() -> spb.TelemetryCommand:
    """A producer's settings naming 200,000 topics (5 MB), the heartbeat of the remoting bench in 5.x form."""
    command = spb.TelemetryCommand()
    command.settings.client_type = pb.PRODUCER
    for i in range(200_000):
        command.settings.publishing.topics.add(name=f"HostileTopic{i:08d}")
    return command


def largest_settings() -> spb.TelemetryCommand:
    """A push consumer's settings with as many subscriptions as the endpoint takes (1,000), each a 36-character
    expression, under its 64 KiB: what each of the client's heartbeats then carries to the broker."""
    command = spb.TelemetryCommand()
    command.settings.client_type = pb.PUSH_CONSUMER
    command.settings.subscription.group.name = "hostile_group"
    for i in range(1_000):
        entry = command.settings.subscription.subscriptions.add()
        entry.topic.name = f"HostileTopic{i}"
        entry.expression.type = pb.TAG
        entry.expression.expression = "||".join(f"Tag{j}" for j in range(10))[:36]
    return command


def stall(addr: str, stop, telemetry: bool = False) -> None:
    """200 requests stalled halfway, each on its own connection, each reopened once the port answers it.
    ``telemetry``: Telemetry streams, half of them sending their settings first, then stalling the next message."""
    path = "/apache.rocketmq.v2.MessagingService/" + ("Telemetry" if telemetry else "SendMessage")
    lead = settings_command() if telemetry else None

    def opening(i: int) -> Request:
        return Request(addr, path, 4 << 20, send=3 << 20, metadata=meta(f"stall-{i}"), lead=lead if i % 2 else None)

    opened = [opening(i) for i in range(200)]
    while not stop.is_set():
        for i, request in enumerate(opened):
            if request.pump(0.001) is not None:
                request.close()
                opened[i] = opening(i)
    for request in opened:
        request.close()


def attack(pattern: str, addr: str, stop, nice: int = 0, pin: bool = False) -> None:
    os.nice(nice)
    if pin:
        pin_to(ATTACKER_CPU)
    host, port = addr.rsplit(":", 1)
    if pattern in ("stalled", "telemetry"):
        stall(addr, stop, telemetry=pattern == "telemetry")
        return
    if pattern == "spin":
        while not stop.is_set():
            pass
        return
    if pattern == "idle":
        socks: list[socket.socket] = []
        while not stop.is_set():
            socks = [s for s in socks if s.fileno() >= 0]
            while len(socks) < 2000 and not stop.is_set():
                try:
                    socks.append(socket.create_connection((host, int(port)), timeout=2))
                except OSError:
                    break
            time.sleep(0.2)
        return
    polls = pattern in ("streams", "consume", "consumer")
    channels = [grpc.insecure_channel(addr) for _ in range(100 if polls else 4)]
    stubs = [service_pb2_grpc.MessagingServiceStub(c) for c in channels]

    def loop(i: int) -> None:
        stub, channel = stubs[i % len(stubs)], channels[i % len(channels)]
        poll = spb.ReceiveMessageRequest(
            group=pb.Resource(name="hostile_group"),
            message_queue=pb.MessageQueue(topic=pb.Resource(name=POLL_TOPIC if pattern == "streams" else TOPIC), id=-1),
            batch_size=32,
            invisible_duration=Duration(seconds=30),
            long_polling_timeout=Duration(seconds=20),
        )
        big = send_request(b"x" * (20 << 20)) if pattern == "oversize" else None
        captured = send_request(b"replayed")  # the same call, message id and all, again and again
        huge = largest_settings() if pattern == "settings-max" else huge_settings() if pattern == "settings" else None
        beat = spb.HeartbeatRequest(group=pb.Resource(name="hostile_group"), client_type=pb.PUSH_CONSUMER)
        raw = channel.unary_unary("/apache.rocketmq.v2.MessagingService/SendMessage") if pattern == "garbage" else None
        while not stop.is_set():
            try:
                if polls:
                    for _ in stub.ReceiveMessage(poll, metadata=meta(f"hostile-{i}"), timeout=25):
                        pass
                elif pattern == "oversize":
                    stub.SendMessage(big, metadata=meta("hostile-big"), timeout=10)
                elif pattern in ("clients", "sends"):
                    client_id = uuid.uuid4().hex if pattern == "clients" else "hostile-sends"
                    stub.SendMessage(send_request(b"c"), metadata=meta(client_id), timeout=10)
                elif pattern == "replay":
                    stub.SendMessage(captured, metadata=meta("hostile-replay"), timeout=10)
                elif pattern in ("settings", "settings-max"):
                    stream = stub.Telemetry(iter([huge]), metadata=meta(f"hostile-settings-{i}"), timeout=10)
                    next(stream)
                    stream.cancel()
                    stub.Heartbeat(beat, metadata=meta(f"hostile-settings-{i}"), timeout=10)
                elif pattern == "garbage":
                    raw(b"\x0a\xff\xff\xff\xff\x0f\x00garbage", metadata=meta("hostile-garbage"), timeout=10)
            except grpc.RpcError:
                pass

    count = 1 if pattern in ("consumer", "replay") else 2000 if polls else 4
    workers = [threading.Thread(target=loop, args=(i,), daemon=True) for i in range(count)]
    for w in workers:
        w.start()
    stop.wait()


def victim(stub, seconds: float) -> tuple[list[float], int]:
    latencies, failures = [], 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        started = time.perf_counter()
        try:
            answer = stub.SendMessage(send_request(b"v" * 256), metadata=meta("victim"), timeout=3)
            if answer.status.code != pb.OK:
                failures += 1
        except grpc.RpcError:
            failures += 1
        latencies.append(time.perf_counter() - started)
    return sorted(latencies), failures


def pct(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))] * 1000


def newcomer(addr: str) -> float:
    started = time.perf_counter()
    with grpc.insecure_channel(addr) as channel:
        stub = service_pb2_grpc.MessagingServiceStub(channel)
        stub.SendMessage(send_request(b"n"), metadata=meta("newcomer"), timeout=10)
    return time.perf_counter() - started


def measure(pattern: str, addr: str, pid: int, window: float, nice: int = 0, rounds: int = 1, pin: bool = False) -> str:
    """``rounds`` of a quiet window then an attacked one; the percentiles are over every round's samples."""
    quiet: list[float] = []
    attacked: list[float] = []
    quiet_failures = failures = 0
    new = 0.0
    peak = [rss_mib(pid)]
    cpu = CpuShare(pid)

    def counted(side: str, stub) -> tuple[list[float], int]:
        with cpu.counting(side):
            return victim(stub, window)

    with grpc.insecure_channel(addr) as channel:
        stub = service_pb2_grpc.MessagingServiceStub(channel)
        victim(stub, 1.0)  # warm
        for _ in range(rounds):
            samples, missed = counted("quiet", stub)
            quiet += samples
            quiet_failures += missed
            spawn = multiprocessing.get_context("spawn")  # a fresh interpreter: no copy of this process's grpc state
            stop = spawn.Event()
            attacker = spawn.Process(target=attack, args=(pattern, addr, stop, nice, pin), daemon=True)
            attacker.start()
            time.sleep(2.0)
            sampling = threading.Event()

            def sample():
                while not sampling.is_set():
                    peak.append(rss_mib(pid))
                    time.sleep(0.2)

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            samples, missed = counted("attacked", stub)
            attacked += samples
            failures += missed
            new = max(new, newcomer(addr))
            stop.set()
            sampling.set()
            attacker.join(30)
            if attacker.is_alive():
                attacker.kill()
            # the attacker's sockets and calls end with it: the next quiet window starts once the server is idle again
            settle(pid)
    quiet.sort()
    attacked.sort()
    return (
        f"| {pattern} | {pct(quiet, 0.5):.1f} / {pct(quiet, 0.99):.1f} / {quiet[-1] * 1000:.0f} | {pct(attacked, 0.5):.1f} / "
        f"{pct(attacked, 0.99):.1f} / {attacked[-1] * 1000:.0f} | {quiet_failures} / {failures} | "
        f"{pct(attacked, 0.99) / pct(quiet, 0.99):.1f} | {cpu.share('quiet'):.2f} / "
        f"{cpu.share('attacked'):.2f} | {max(peak):.0f} | {new:.2f} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--window", type=float, default=5.0)
    parser.add_argument("--patterns", default=PATTERNS)
    parser.add_argument("--attacker-nice", type=int, default=0, help="the attacker's CPU priority (19: lowest)")
    parser.add_argument("--rounds", type=int, default=1, help="quiet and attacked windows, alternating, per row")
    parser.add_argument("--pin", action="store_true", help="the attacker alone on one core, the rest on the other")
    args = parser.parse_args()
    if args.pin:
        pin_to(SERVED_CPU)  # the victim; the broker's processes inherit it
    print(
        f"window {args.window} s; attacker nice {args.attacker_nice}; pinned {args.pin}; load {os.getloadavg()[0]:.2f}"
    )
    print(
        "| pattern | quiet p50 / p99 / max ms | attacked p50 / p99 / max ms | failures quiet / attacked | p99 ratio "
        "| broker CPU quiet / attacked | peak RSS MiB | newcomer s |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        with start_grpc_broker(Path(tmp)) as cluster:
            with BlockingMQAdminClient(cluster.namesrv_addr) as admin:
                admin.create_or_update_topic(cluster.addr("broker-a"), TopicConfig(TOPIC, 4, 4))
                admin.create_or_update_topic(cluster.addr("broker-a"), TopicConfig(POLL_TOPIC, 4, 4))
            for pattern in args.patterns.split(","):
                print(
                    measure(
                        pattern,
                        str(cluster.grpc_addr("broker-a")),
                        cluster.pid("broker-a"),
                        args.window,
                        args.attacker_nice,
                        args.rounds,
                        args.pin,
                    ),
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
