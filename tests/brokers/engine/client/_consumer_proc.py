"""A PushConsumer in a process of its own, for failover tests: ``python -m tests.brokers.engine.client._consumer_proc``.

Writes JSON lines to ``--out``, flushed per listener call (so a SIGKILL loses nothing the
listener acknowledged): ``{"ready": <client id>}`` once started, then per listener call
``{"t": <time>, "msgs": [[broker, queue id, queue offset, body, reconsume times], ...]}``.
SIGTERM shuts the consumer down cleanly and writes ``{"stopped": true}``.
"""

from __future__ import annotations

import argparse
import json
import signal
import threading
import time

from brokers.engine.client import (
    ClientConfig,
    ConsumeConcurrentlyStatus,
    ConsumeOrderlyStatus,
    ConsumerConfig,
    PushConsumer,
    ReceivedMessage,
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--namesrv", required=True)
    parser.add_argument("--group", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--instance", required=True)
    parser.add_argument("--orderly", action="store_true")
    parser.add_argument("--interval", type=float, default=1.0, help="rebalance, heartbeat and route poll interval (s)")
    parser.add_argument("--persist-interval", type=float, default=0.5)
    args = parser.parse_args()

    out = open(args.out, "a", encoding="utf-8")
    lock = threading.Lock()

    acknowledged = ConsumeOrderlyStatus.SUCCESS if args.orderly else ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    def listener(msgs: list[ReceivedMessage]) -> ConsumeConcurrentlyStatus | ConsumeOrderlyStatus:
        line = {
            "t": time.time(),
            "msgs": [[m.broker_name, m.queue_id, m.queue_offset, m.body.decode(), m.reconsume_times] for m in msgs],
        }
        with lock:
            out.write(json.dumps(line) + "\n")
            out.flush()
        return acknowledged

    client_config = ClientConfig(
        rebalance_interval_s=args.interval,
        heartbeat_broker_interval_s=args.interval,
        poll_name_server_interval_s=args.interval,
        persist_consumer_offset_interval_s=args.persist_interval,
    )
    consumer = PushConsumer(
        args.group,
        args.namesrv,
        consume_from_where="CONSUME_FROM_FIRST_OFFSET",
        instance_name=args.instance,
        orderly=args.orderly,
        client_config=client_config,
        config=ConsumerConfig(pull_suspend_ms=2000, lock_interval_s=args.interval, consume_thread_max=4),
    )
    consumer.subscribe(args.topic)
    consumer.register_listener(listener)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    consumer.start()
    with lock:
        out.write(json.dumps({"ready": consumer.client_id}) + "\n")
        out.flush()
    stop.wait()
    consumer.shutdown()
    with lock:
        out.write(json.dumps({"stopped": True}) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
