"""Broker-group drill 3: a SYNC_MASTER is SIGKILLed while 2 PushConsumers and 1 PullConsumer of one
group consume its backlog; they go on from its slave, and back to the master once it returns.

Real processes (a name server, the master, the slave: ``python -m brokers.engine ...``); the
consumers and the producer are Gantry's clients in this process. Checked:

* within 30 s of the kill, consumers deliver messages they had not fetched before it (so they
  pulled them from the slave), and the slave holds offsets they committed there;
* after the master returns, every message whose send was acknowledged is delivered at least once;
* the group's committed offset of each queue, sampled every 0.2 s the way a consumer reads it
  (from the master while the name server lists it, else from the slave), never goes backwards —
  the master's return included — except at the kill, where the slave may hold what the master
  had at the slave's last sync (1 s here; printed); at the end the master and the slave hold the
  same offsets, equal to each queue's end.
"""

from __future__ import annotations

from functools import partial

import asyncio
import threading
import time

import pytest

from brokers.engine.client import (
    ClientConfig,
    ConsumeConcurrentlyStatus,
    ConsumerConfig,
    Message,
    PullConsumer,
    PushConsumer,
)
from brokers.engine.client import Producer
from brokers.engine.common import json_compat
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from tests.brokers.engine._group_procs import BrokerProc, NamesrvProc, call, create_topic
from tests.fixtures import waiting

wait_until = partial(waiting.wait_until, every_s=0.1, ignoring=(Exception,))  # a server starting or gone: not yet

TOPIC = "FailoverDrill"
GROUP = "failover_drill"
QUEUES = 8
BACKLOG = 3000
CONSUME_S = 0.008  # per message: the backlog outlasts the kill
THRESHOLD = 16  # messages cached per queue: what a consumer can hold from before the kill


def _route_master_and_slave(namesrv: str) -> tuple[str | None, str | None]:
    reply = asyncio.run(call(namesrv, RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": TOPIC}))
    if reply.code != ResponseCode.SUCCESS:
        return None, None
    addrs = {int(k): v for k, v in json_compat.loads(reply.body)["brokerDatas"][0]["brokerAddrs"].items()}
    return addrs.get(0), addrs.get(1)


async def _offsets(addr: str) -> dict[int, int]:
    out = {}
    for q in range(QUEUES):
        reply = await call(
            addr, RequestCode.QUERY_CONSUMER_OFFSET, {"consumerGroup": GROUP, "topic": TOPIC, "queueId": q}, timeout_s=2
        )
        if reply.code == ResponseCode.SUCCESS:
            out[q] = int(reply.ext("offset"))
    return out


class Sampler(threading.Thread):
    """The group's committed offsets as a consumer reads them, every 0.2 s."""

    def __init__(self, namesrv: str) -> None:
        super().__init__(daemon=True)
        self.namesrv = namesrv
        self.samples: dict[int, list[tuple[float, str, int]]] = {q: [] for q in range(QUEUES)}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.2):
            try:
                master, slave = _route_master_and_slave(self.namesrv)
                addr = master or slave
                if addr is None:
                    continue
                for q, offset in asyncio.run(_offsets(addr)).items():
                    self.samples[q].append((time.monotonic(), "master" if addr == master else "slave", offset))
            except Exception:
                continue

    def backwards(self, *, at_the_kill: bool = False) -> list[str]:
        """Drops between consecutive samples: with ``at_the_kill``, those where the reading moved from
        the master to the slave (the master died); else every other drop (there must be none)."""
        bad = []
        for q, rows in self.samples.items():
            for (t0, w0, a), (t1, w1, b) in zip(rows, rows[1:]):
                if b < a and ((w0, w1) == ("master", "slave")) == at_the_kill:
                    bad.append(f"queue {q}: {a} ({w0}) -> {b} ({w1})")
        return bad


@pytest.mark.slow
def test_consumers_read_from_the_slave_while_the_master_is_killed_and_lose_nothing(tmp_path):
    ns = NamesrvProc(tmp_path).start()
    master = BrokerProc(tmp_path, ns.addr, "broker-a", 0, "SYNC_MASTER", slave_synchronize_interval_s=1.0).start()
    slave = BrokerProc(tmp_path, ns.addr, "broker-a", 1, "SLAVE", slave_synchronize_interval_s=1.0).start()
    cc = ClientConfig(persist_consumer_offset_interval_s=1.0)
    config = ConsumerConfig(
        pull_threshold_for_queue=THRESHOLD, pull_batch_size=8, consume_thread_min=2, consume_thread_max=2
    )
    consumers: list = []
    producer = None
    stop_pulling = threading.Event()
    sampler = Sampler(ns.addr)
    try:
        create_topic(master.addr, TOPIC, QUEUES)
        wait_until(lambda: all(_route_master_and_slave(ns.addr)), 15, "the route lists master and slave")
        producer = Producer("failover_drill_pg", ns.addr, client_config=cc).start()
        acked: dict[bytes, tuple[int, int]] = {}
        for i in range(BACKLOG):
            result = producer.send(Message(TOPIC, f"m{i}".encode()))
            acked[f"m{i}".encode()] = (result.message_queue.queue_id, result.queue_offset)
        wait_until(
            lambda: asyncio.run(call(slave.addr, RequestCode.GET_ALL_TOPIC_CONFIG)).body.count(TOPIC.encode()),
            15,
            "the slave copied the topic",
        )

        delivered: list[tuple[float, int, int, bytes]] = []  # (time, queue, offset, body)
        lock = threading.Lock()

        def listener(msgs):
            for m in msgs:
                time.sleep(CONSUME_S)
                with lock:
                    delivered.append((time.monotonic(), m.queue_id, m.queue_offset, m.body))
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

        for i in range(2):
            c = PushConsumer(
                GROUP,
                ns.addr,
                consume_from_where="CONSUME_FROM_FIRST_OFFSET",
                instance_name=f"push{i}",
                client_config=cc,
                config=config,
            )
            c.subscribe(TOPIC)
            c.register_listener(listener)
            consumers.append(c.start())
        puller = PullConsumer(
            GROUP,
            ns.addr,
            consume_from_where="CONSUME_FROM_FIRST_OFFSET",
            instance_name="pull0",
            client_config=cc,
            config=config,
        )
        puller.subscribe(TOPIC)
        consumers.append(puller.start())

        def pull_loop():
            while not stop_pulling.is_set():
                try:
                    msgs = puller.poll(timeout_s=0.5)
                except Exception:
                    time.sleep(0.2)
                    continue
                listener(msgs)
                try:
                    puller.commit()
                except Exception:
                    pass

        pull_thread = threading.Thread(target=pull_loop, daemon=True)
        pull_thread.start()
        sampler.start()

        wait_until(lambda: len(delivered) >= 600, 30, "consumption under way")
        fetched_before = {}  # per queue: the highest offset that can have been fetched before the kill
        with lock:
            for _, q, off, _ in delivered:
                fetched_before[q] = max(fetched_before.get(q, -1), off)
        t_kill = time.monotonic()
        master.kill()
        limit = {
            q: fetched_before.get(q, -1) + THRESHOLD + 8 + 8 for q in range(QUEUES)
        }  # cache + a batch in flight + a poll batch

        def from_slave():
            with lock:
                return [(t, q, off) for t, q, off, _ in delivered if t > t_kill and off > limit[q]]

        first = wait_until(from_slave, 30, "consumers deliver messages pulled from the slave")
        resumed_s = min(t for t, _, _ in first) - t_kill
        wait_until(lambda: len(from_slave()) >= 300, 30, "steady consumption from the slave")
        masterless = asyncio.run(call(slave.addr, RequestCode.GANTRY_GET_MASTERLESS_OFFSETS))
        committed_on_slave = json_compat.loads(masterless.body)["offsetTable"].get(f"{TOPIC}@{GROUP}", {})
        assert committed_on_slave, "the consumers committed offsets to the slave while the master was gone"

        master.start()  # same port, same store
        for i in range(BACKLOG, BACKLOG + 300):  # production resumes on the returned master
            body = f"m{i}".encode()
            result = wait_until(
                lambda body=body: producer.send(Message(TOPIC, body)), 30, "a send to the returned master"
            )
            acked[body] = (result.message_queue.queue_id, result.queue_offset)

        def missing():
            with lock:
                got = {b for _, _, _, b in delivered}
            return [b for b in acked if b not in got]

        wait_until(lambda: not missing(), 60, "every acknowledged message delivered")
        stop_pulling.set()
        pull_thread.join(10)
        puller.commit()
        while consumers:
            consumers.pop().shutdown()  # commits every held queue's offset
        sampler.stop.set()
        sampler.join(10)
        ends = {}
        for q in range(QUEUES):
            reply = asyncio.run(call(master.addr, RequestCode.GET_MAX_OFFSET, {"topic": TOPIC, "queueId": q}))
            ends[q] = int(reply.ext("offset"))
        wait_until(
            lambda: asyncio.run(_offsets(master.addr)) == ends, 15, "the master holds every queue's end as the offset"
        )
        wait_until(lambda: asyncio.run(_offsets(slave.addr)) == ends, 15, "the slave follows the master's offsets")
        last_sampled = {q: rows[-1][2] for q, rows in sampler.samples.items() if rows}
        assert all(ends[q] >= v for q, v in last_sampled.items())
    finally:
        sampler.stop.set()
        for c in consumers:
            c.shutdown()
        if producer is not None:
            producer.shutdown()
        for p in (slave, master, ns):
            p.stop()
    print(
        f"drill 3: consumption resumed from the slave {resumed_s:.1f} s after the SIGKILL; {len(delivered)} deliveries "
        f"of {len(acked)} acknowledged messages ({len(delivered) - len(acked)} duplicates); slave held offsets "
        f"{committed_on_slave}"
    )
    # The kill itself may show the slave a little behind the dead master (commits the master took
    # since the slave's last 1 s sync die with it, as in RocketMQ): consumers keep their own
    # offsets and commit them to the slave next, so this re-delivers and never skips. Everything
    # else, the master's return included, never goes backwards.
    print(f"drill 3: offsets read lower at the master->slave switch: {sampler.backwards(at_the_kill=True) or 'none'}")
    assert resumed_s < 30
    assert sampler.backwards() == []
    assert sum(len(v) for v in sampler.samples.values()) > 50
