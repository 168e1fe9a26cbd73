"""Three consumer processes share a topic of 2 brokers x 4 queues; one is SIGKILLed mid-stream.

The consumers are real subprocesses (``_consumer_proc``) with 1 s rebalance/heartbeat timers
and offsets committed every 0.5 s; the brokers expire silent clients after 3 s. Ownership is
read the way the console reads it: GET_CONSUMER_RUNNING_INFO through a broker.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from brokers.engine.client import ClientConfig, Message, MessageQueue, Producer
from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.remoting.errors import RemotingError
from brokers.engine.client.allocation import allocate_all, get_strategy
from tests.brokers.engine.client._cluster import EmbeddedCluster, create_topic
from tests.fixtures.waiting import wait_until

ROOT = Path(__file__).resolve().parents[4]
GROUP = "failover_group"
EXPIRY_S = 3.0
INTERVAL_S = 1.0
PERSIST_S = 0.5


@pytest.fixture(scope="module")
def fast_cluster(tmp_path_factory):
    c = EmbeddedCluster(
        tmp_path_factory.mktemp("failover"), client_channel_expired_s=EXPIRY_S, scan_client_interval_s=0.5
    ).start()
    yield c
    c.stop()


@pytest.fixture(scope="module")
def fast_admin(fast_cluster):
    client = BlockingMQAdminClient(fast_cluster.namesrv_addr, timeout_s=3.0)
    yield client
    client.close()


class ConsumerProcess:
    def __init__(self, namesrv: str, topic: str, out: Path, instance: str, *extra: str) -> None:
        self.out = out
        self.log = out.with_suffix(".log")
        argv = [
            sys.executable,
            "-m",
            "tests.brokers.engine.client._consumer_proc",
            "--namesrv",
            namesrv,
            "--group",
            GROUP,
            "--topic",
            topic,
            "--out",
            str(out),
            "--instance",
            instance,
            "--interval",
            str(INTERVAL_S),
            "--persist-interval",
            str(PERSIST_S),
            *extra,
        ]
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONPATH": str(ROOT)}
            )
        self.client_id: str | None = None

    def lines(self) -> list[dict]:
        out = []
        if not self.out.exists():
            return out
        for raw in self.out.read_text(encoding="utf-8").splitlines():
            try:
                out.append(json.loads(raw))
            except ValueError:
                continue  # a line cut by SIGKILL
        return out

    def wait_ready(self, timeout_s: float = 30.0) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for line in self.lines():
                if "ready" in line:
                    self.client_id = line["ready"]
                    return self.client_id
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError("consumer not ready:\n" + self.log.read_text(errors="replace")[-3000:])

    def consumed(self) -> list[tuple[str, int, int, str, float]]:
        return [
            (b, q, o, body, line["t"]) for line in self.lines() if "msgs" in line for b, q, o, body, _ in line["msgs"]
        ]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def owned(admin: BlockingMQAdminClient, client_id: str, topic: str) -> set[MessageQueue] | None:
    try:
        info = admin.get_consumer_running_info(GROUP, client_id)
    except RemotingError:
        return None
    return {mq for mq in info.mq_table if mq.topic == topic}


def wait_for_partition(
    admin, ids: list[str], topic: str, queues: set[MessageQueue], timeout_s: float
) -> dict[str, set[MessageQueue]]:
    """Wait until the consumers ``ids`` hold every queue, each exactly once; return who holds what."""
    deadline = time.monotonic() + timeout_s
    last: dict[str, set[MessageQueue] | None] = {}
    while time.monotonic() < deadline:
        last = {cid: owned(admin, cid, topic) for cid in ids}
        held = [q for qs in last.values() if qs is not None for q in qs]
        if None not in last.values() and len(held) == len(queues) and set(held) == queues:
            return last  # type: ignore[return-value]
        time.sleep(0.1)
    raise AssertionError(f"queues not partitioned among {ids} within {timeout_s}s: {last}")


@pytest.mark.parametrize("sig", ["SIGKILL", "SIGSTOP"])
def test_killed_consumer_queues_move_to_the_others_without_loss(fast_cluster, fast_admin, tmp_path, sig):
    """SIGKILL: the broker sees the connection close; SIGSTOP: a frozen process the broker expires after 3 s."""
    topic = f"Failover{sig}"
    create_topic(fast_admin, fast_cluster, topic, queues=4)
    queues = {MessageQueue(topic, b, q) for b in fast_cluster.broker_names for q in range(4)}
    procs = [
        ConsumerProcess(fast_cluster.namesrv_addr, topic, tmp_path / f"c{i}.jsonl", f"failover{i}") for i in range(3)
    ]
    producer = Producer(
        "failover_producer", fast_cluster.namesrv_addr, client_config=ClientConfig(poll_name_server_interval_s=1.0)
    ).start()
    try:
        ids = [p.wait_ready() for p in procs]
        before = wait_for_partition(fast_admin, ids, topic, queues, timeout_s=20.0)
        expected = allocate_all(get_strategy("AVG"), queues, ids)
        assert {cid: set(qs) for cid, qs in before.items()} == {cid: set(qs) for cid, qs in expected.items()}
        assert all(len(qs) >= 2 for qs in before.values())

        sent: list[str] = []
        stop_sending = threading.Event()

        def sender() -> None:
            n = 0
            while not stop_sending.is_set() or n < 200:
                body = f"m{n}"
                producer.send(Message(topic, body.encode()))
                sent.append(body)
                n += 1
                if n >= 200:
                    time.sleep(0.004)  # a steady stream after the first burst

        thread = threading.Thread(target=sender)
        thread.start()
        victim, survivors = procs[1], [procs[0], procs[2]]
        wait_until(lambda: len(victim.consumed()) >= 50, 20.0, "the victim to consume")
        kill_time = time.time()
        victim.proc.send_signal(getattr(signal, sig))
        # the broker drops the victim at once (connection closed) or after EXPIRY_S (+ a 0.5 s scan);
        # the survivors then rebalance at once (NOTIFY_CONSUMER_IDS_CHANGED) or within INTERVAL_S
        after = wait_for_partition(
            fast_admin, [p.client_id for p in survivors], topic, queues, timeout_s=EXPIRY_S + 0.5 + INTERVAL_S + 3.0
        )
        takeover_s = time.time() - kill_time
        if sig == "SIGSTOP":
            victim.proc.send_signal(signal.SIGKILL)
        victim.proc.wait(10)
        sent_at_takeover = len(sent)
        wait_until(lambda: len(sent) >= sent_at_takeover + 150, 20.0, "the stream to go on after the takeover")
        stop_sending.set()
        thread.join(30)
        assert not thread.is_alive()

        def all_consumed() -> bool:
            seen = {m[3] for p in procs for m in p.consumed()}
            return seen.issuperset(sent)

        wait_until(all_consumed, 30.0, "every sent message to be consumed")
    finally:
        producer.shutdown()
        for p in procs:
            p.stop()

    records = [m for p in procs for m in p.consumed()]
    counts = Counter(m[3] for m in records)
    duplicates = {body: n - 1 for body, n in counts.items() if n > 1}
    victim_recent = sum(1 for m in victim.consumed() if m[4] >= kill_time - 4 * PERSIST_S)
    moved = {
        q
        for cid, qs in before.items()
        for q in qs
        if not any(q in after[s.client_id] and cid == s.client_id for s in survivors)
    }
    print(
        f"\nsent {len(sent)}, consumed {len(records)}, duplicates {sum(duplicates.values())}, victim consumed "
        f"{len(victim.consumed())} ({victim_recent} in the last {4 * PERSIST_S}s), queues moved {len(moved)}, takeover {takeover_s:.2f}s"
    )
    assert set(sent) <= set(counts)  # nothing lost
    # Duplicates come only from offsets not yet committed: what the victim consumed since its last
    # commits (offsets committed every 0.5 s; 2 s allowed) and what was cached on a queue that moved.
    by_body = {m[3]: (m[0], m[1]) for m in records}
    for body in duplicates:
        assert MessageQueue(topic, *by_body[body]) in moved, f"duplicate {body} on a queue that never moved"
    assert sum(duplicates.values()) <= victim_recent + 32 * len(moved)
    assert all(p.lines()[-1] == {"stopped": True} for p in survivors)  # clean shutdowns
