"""The metadata drill: acknowledged, replicated messages stay readable when the master dies right
after creating their topic (shared by tests/brokers/engine/test_metadata_drill.py and
bench/metadata_drill.py, which runs 20 cycles).

One cycle, with real processes (``_group_procs.py``): a SYNC_MASTER and its slave start with empty
stores; a topic is created on the master; ``messages`` are sent, each acknowledged only once the
slave holds it; then, within a few seconds of the topic's creation (well inside the slave's 10 s
periodic copy), the master is SIGKILLed and its store deleted. A consumer that starts then reads the
topic through the name server, so from the slave: every acknowledged message must come back. The
slave has the topic either because the master pushed it before answering the creation
(``config_push.py``) or because the slave derives it from the consume queues it holds.
"""

from __future__ import annotations

from functools import partial

import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from brokers.engine.client import ClientConfig, Message, Producer, PullConsumer, SendStatus
from tests.brokers.engine._group_procs import BrokerProc, NamesrvProc, create_topic, runtime_info
from tests.fixtures import waiting

wait_until = partial(waiting.wait_until, every_s=0.1, ignoring=(Exception,))  # a server starting or gone: not yet

QUEUES = 4


@dataclass(frozen=True)
class CycleResult:
    cycle: int
    acknowledged: int
    read: int
    seconds_from_create_to_kill: float

    @property
    def unreadable(self) -> int:
        return self.acknowledged - self.read


def run_cycle(
    root: Path, namesrv: NamesrvProc, cycle: int, *, messages: int = 200, read_timeout_s: float = 30.0
) -> CycleResult:
    """One cycle on ``namesrv`` (stores under ``root``); the broker group is named after the cycle."""
    name = f"drill-{cycle}"
    store = {"commitlog_file_size": 4 << 20}
    master = BrokerProc(root, namesrv.addr, name, 0, "SYNC_MASTER", store=store).start()
    slave = BrokerProc(root, namesrv.addr, name, 1, "SLAVE", store=store).start()
    producer = consumer = None
    topic = f"MetadataDrill{cycle}"
    try:
        wait_until(lambda: runtime_info(master.addr).get("haSlaveCount") == "1", 20, "the slave connects to its master")
        created = time.monotonic()
        create_topic(master.addr, topic, QUEUES)
        producer = Producer(f"drill_pg_{cycle}", namesrv.addr, client_config=ClientConfig()).start()
        sent = {
            f"{cycle}-{i}"
            for i in range(messages)
            if producer.send(Message(topic, f"{cycle}-{i}".encode())).status is SendStatus.SEND_OK
        }
        producer.shutdown()
        producer = None
        master.kill()
        elapsed = time.monotonic() - created
        shutil.rmtree(master.store_dir, ignore_errors=True)

        consumer = PullConsumer(
            f"drill_cg_{cycle}",
            namesrv.addr,
            consume_from_where="CONSUME_FROM_FIRST_OFFSET",
            client_config=ClientConfig(poll_name_server_interval_s=1.0),
        )
        consumer.subscribe(topic)
        consumer.start()
        read: set[str] = set()
        deadline = time.monotonic() + read_timeout_s
        while time.monotonic() < deadline and not sent <= read:
            read.update(m.body.decode() for m in consumer.poll(timeout_s=1.0))
        return CycleResult(cycle, len(sent), len(read & sent), elapsed)
    finally:
        for client in (producer, consumer):
            if client is not None:
                client.shutdown()
        for proc in (slave, master):
            proc.kill()
