"""``python manage.py run_demo``: a small steady workload so a fresh console has something to show.

Creates ``DemoOrders`` (4 queues per broker) and ``DemoAudit`` (2 per broker) when missing, then
produces to them at a gently varying rate (about ``--rate`` messages/s in all) and consumes with
two groups: ``demo-billing`` (two members, AVG) keeps up; ``demo-audit`` (one member) takes a
break of ``--pause`` seconds every ``--cycle`` seconds, so the backlog dashboard shows a backlog
rising and draining. Prints ``demo workload running`` once producing; Ctrl-C stops it.

Both topics live on every broker group, so in ``make run``'s deployment a send to broker-a (a
SYNC_MASTER) is answered only once its slave has the message. Every ``--report`` seconds the demo
prints how its sends were answered per broker (``broker-a SEND_OK 1180, FLUSH_SLAVE_TIMEOUT 2``):
FLUSH_SLAVE_TIMEOUT and SLAVE_NOT_AVAILABLE there mean broker-a's slave lags or is gone (the
message is stored on the master either way).
"""

from __future__ import annotations

import logging
import math
import signal
import threading
import time
from collections import Counter
from typing import TypedDict

from django.conf import settings
from django.core.management.base import BaseCommand

from brokers.engine.client import ConsumeConcurrentlyStatus, Message, Producer, PushConsumer
from brokers.engine.client.admin import BlockingMQAdminClient
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.remoting.errors import RemotingError
from brokers.engine.remoting.tls import TlsConfig
from brokers.gateway.client import mq_tls
from brokers.engine.client.allocation import get_strategy

TOPICS = {"DemoOrders": 4, "DemoAudit": 2}
AUDIT_EVERY = 5  # one message in five goes to DemoAudit


def status_report(statuses: Counter[tuple[str, str]]) -> str:
    """``broker-a SEND_OK 1180, FLUSH_SLAVE_TIMEOUT 2; broker-b SEND_OK 1175`` (SEND_OK first, then by name)."""
    brokers = sorted({b for b, _ in statuses})
    parts = []
    for broker in brokers:
        counts = sorted(
            ((s, n) for (b, s), n in statuses.items() if b == broker), key=lambda sn: (sn[0] != "SEND_OK", sn[0])
        )
        parts.append(f"{broker} " + ", ".join(f"{s} {n}" for s, n in counts))
    return "; ".join(parts) or "none"


def _ack(msgs) -> ConsumeConcurrentlyStatus:
    return ConsumeConcurrentlyStatus.CONSUME_SUCCESS


class DemoKeys(TypedDict):
    access_key: str | None
    secret_key: str | None
    tls: TlsConfig | None


def _demo_keys() -> DemoKeys:
    """The ACL account of the workload: MQ DEMO_ACCESS_KEY / DEMO_SECRET_KEY, else the console's (both may be
    empty); and the console's TLS settings (MQ TLS_*)."""
    mq = settings.MQ
    if mq.get("DEMO_ACCESS_KEY"):
        return {"access_key": mq["DEMO_ACCESS_KEY"], "secret_key": mq.get("DEMO_SECRET_KEY") or None, "tls": mq_tls()}
    return {"access_key": mq.get("ACCESS_KEY") or None, "secret_key": mq.get("SECRET_KEY") or None, "tls": mq_tls()}


class Command(BaseCommand):
    help = "Produce and consume a small demo workload until Ctrl-C."

    def add_arguments(self, parser):
        parser.add_argument("--rate", type=float, default=20.0, help="messages per second in all (default 20)")
        parser.add_argument("--cycle", type=float, default=600.0, help="seconds between demo-audit's breaks")
        parser.add_argument("--pause", type=float, default=120.0, help="length of demo-audit's break in seconds")
        parser.add_argument(
            "--report", type=float, default=60.0, help="seconds between reports of the send statuses per broker"
        )

    def handle(self, *args, rate: float, cycle: float, pause: float, report: float = 60.0, **options):
        namesrv = settings.MQ["NAMESRV_ADDR"]
        logging.getLogger("brokers.engine.client").setLevel(logging.WARNING)  # every rebalance is news only in tests
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        self._create_topics(namesrv)
        producer = Producer(
            "demo-producer", namesrv, trace_enabled=True, **_demo_keys()
        )  # message trace on: the trace page has paths to show
        producer.start()
        billing = [self._consumer("demo-billing", "DemoOrders", namesrv) for _ in range(2)]
        audit: PushConsumer | None = self._consumer("demo-audit", "DemoAudit", namesrv)
        self.stdout.write("demo workload running: DemoOrders -> demo-billing, DemoAudit -> demo-audit")
        self.stdout.flush()
        started = time.monotonic()
        reported = started
        statuses: Counter[tuple[str, str]] = Counter()  # (broker name, send status) -> sends since the last report
        sent = 0
        try:
            while not stop.is_set():
                elapsed = time.monotonic() - started
                # the rate breathes +-30 % over ten minutes so the charts have a shape
                current = max(1.0, rate * (1 + 0.3 * math.sin(2 * math.pi * elapsed / 600)))
                topic_to_send = "DemoAudit" if sent % AUDIT_EVERY == 0 else "DemoOrders"
                try:
                    result = producer.send(Message(topic_to_send, f"demo {sent}".encode(), keys=f"demo-{sent}"))
                    statuses[(result.message_queue.broker_name, result.status.value)] += 1
                except RemotingError as exc:
                    self.stderr.write(f"demo send failed: {exc}")
                    stop.wait(1.0)
                if time.monotonic() - reported >= report:
                    self.stdout.write("demo sends: " + status_report(statuses))
                    self.stdout.flush()
                    statuses.clear()
                    reported = time.monotonic()
                sent += 1
                in_break = (elapsed % cycle) > (cycle - pause)
                if in_break and audit is not None:
                    audit.shutdown()
                    audit = None
                elif not in_break and audit is None:
                    audit = self._consumer("demo-audit", "DemoAudit", namesrv)
                stop.wait(1.0 / current)
        except KeyboardInterrupt:
            pass
        finally:
            for consumer in [*billing, audit]:
                if consumer is not None:
                    consumer.shutdown()
            producer.shutdown()

    def _create_topics(self, namesrv: str) -> None:
        with BlockingMQAdminClient(
            namesrv,
            access_key=settings.MQ.get("ACCESS_KEY") or None,
            secret_key=settings.MQ.get("SECRET_KEY") or None,
            tls=mq_tls(),
        ) as admin:
            info = admin.examine_broker_cluster_info()
            for cluster in info.clusters:
                for topic, queues in TOPICS.items():
                    admin.create_or_update_topic_in_cluster(cluster, TopicConfig(topic, queues, queues))
        time.sleep(1.0)  # let the brokers register the routes

    @staticmethod
    def _consumer(group: str, topic: str, namesrv: str) -> PushConsumer:
        consumer = PushConsumer(group, namesrv, strategy=get_strategy("AVG"), trace_enabled=True, **_demo_keys())
        consumer.subscribe(topic, "*")
        consumer.register_listener(_ack)
        consumer.start()
        return consumer
