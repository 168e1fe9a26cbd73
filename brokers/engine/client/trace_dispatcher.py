"""TraceDispatcher: sends a client's trace records from a background thread (RocketMQ's AsyncTraceDispatcher).

Producers and push consumers made with ``trace_enabled=True`` hand each record to :meth:`TraceDispatcher.offer`,
which only puts it on a bounded queue: it never blocks, never raises, and a record that finds the queue
full is dropped and counted (:attr:`TraceDispatcher.dropped`). A daemon thread takes up to ``batch_size``
records (or what arrived within ``flush_interval_s``), joins them into trace messages of at most
``max_body_bytes`` in RocketMQ's format (:mod:`brokers.engine.common.trace_data`), and sends them with
its own producer (group ``_INNER_TRACE_PRODUCER-<group>``, its own client instance, signing and speaking
TLS as the traced client does) to the trace topic,
keyed by the traced messages' ids and keys. A failed send is logged and counted (:attr:`send_failures`);
the traced send or consume never notices. :meth:`shutdown` sends what is queued (up to ``timeout_s``).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from brokers.engine.common.constants import RMQ_SYS_TRACE_TOPIC
from brokers.engine.common.message import KEY_SEPARATOR, Message
from brokers.engine.common.trace_data import TraceRecord, encode_record, trace_keys


class TraceSender(Protocol):
    """What sends the trace messages: a started Producer of the trace group (see producer.trace_sender_factory)."""

    def send(self, msg: Message) -> object: ...

    def shutdown(self) -> None: ...


SenderFactory = Callable[[str], TraceSender]  # trace producer group -> a started sender

__all__ = ["TraceConfig", "TraceDispatcher", "TRACE_PRODUCER_GROUP_PREFIX", "new_tracer"]

log = logging.getLogger("brokers.engine.client.trace")
TRACE_PRODUCER_GROUP_PREFIX = "_INNER_TRACE_PRODUCER-"  # TraceConstants.GROUP_NAME_PREFIX


@dataclass(frozen=True, slots=True)
class TraceConfig:
    topic: str = RMQ_SYS_TRACE_TOPIC
    queue_size: int = 2048  # records waiting; more are dropped (AsyncTraceDispatcher's queueSize)
    batch_size: int = 100  # records taken per round (batchSize)
    max_body_bytes: int = 128 * 1024  # one trace message's body (maxMsgSize)
    flush_interval_s: float = 0.5  # how long a round waits for more records


class TraceDispatcher:
    """Batches trace records and sends them in the background; see the module docstring."""

    def __init__(self, group: str, make_sender: SenderFactory, config: TraceConfig | None = None) -> None:
        self.group = group
        self.make_sender = make_sender  # made at the first trace message, in the dispatcher's thread
        self.config = config or TraceConfig()
        self.dropped = 0
        self.sent_records = 0
        self.send_failures = 0
        self._queue: queue.Queue[TraceRecord] = queue.Queue(self.config.queue_size)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._producer: TraceSender | None = None

    def start(self) -> TraceDispatcher:
        if self._thread is None:
            self._stop.clear()  # a client started again after a shutdown
            self._thread = threading.Thread(target=self._run, name=f"trace-{self.group}", daemon=True)
            self._thread.start()
        return self

    def offer(self, record: TraceRecord) -> None:
        """Queue a record for sending; drop (and count) it when the queue is full. Never raises."""
        if record.topic == self.config.topic or not record.msg_id:  # no traces of traces
            return
        try:
            self._queue.put_nowait(record)
        except queue.Full:
            self.dropped += 1

    def shutdown(self, timeout_s: float = 5.0) -> None:
        """Send what is queued, then stop the thread and the trace producer."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._stop.set()
            thread.join(timeout_s)
        producer, self._producer = self._producer, None
        if producer is not None:
            try:
                producer.shutdown()
            except Exception as exc:  # the traced client's shutdown must go on
                log.debug("trace producer shutdown failed: %s", exc)

    # -- the background thread ------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            batch = self._take()
            if batch:
                self._send(batch)
            elif self._stop.is_set():
                return

    def _take(self) -> list[TraceRecord]:
        batch: list[TraceRecord] = []
        try:
            batch.append(self._queue.get(timeout=self.config.flush_interval_s))
        except queue.Empty:
            return batch
        while len(batch) < self.config.batch_size:
            try:
                batch.append(self._queue.get_nowait())
            except queue.Empty:
                break
        return batch

    def _send(self, batch: list[TraceRecord]) -> None:
        chunk: list[TraceRecord] = []
        body: list[str] = []
        size = 0
        for record in batch:
            text = encode_record(record)
            n = len(text.encode("utf-8"))
            if chunk and size + n > self.config.max_body_bytes:
                self._send_one(chunk, body)
                chunk, body, size = [], [], 0
            chunk.append(record)
            body.append(text)
            size += n
        if chunk:
            self._send_one(chunk, body)

    def _send_one(self, records: list[TraceRecord], body: list[str]) -> None:
        msg = Message(self.config.topic, "".join(body).encode("utf-8"), keys=KEY_SEPARATOR.join(trace_keys(records)))
        try:
            self._trace_producer().send(msg)
            self.sent_records += len(records)
        except Exception as exc:  # a missing trace topic, a broker down: counted, never raised into the client
            self.send_failures += 1
            log.warning("sending %d trace record(s) to %s failed: %s", len(records), self.config.topic, exc)

    def _trace_producer(self) -> TraceSender:
        if self._producer is None:
            self._producer = self.make_sender(TRACE_PRODUCER_GROUP_PREFIX + self.group)
        return self._producer


def new_tracer(enabled: bool, topic: str | None, group: str, make_sender: SenderFactory) -> TraceDispatcher | None:
    """The dispatcher of a client made with ``trace_enabled=True`` (None when tracing is off);
    ``topic`` names the trace topic (default ``RMQ_SYS_TRACE_TOPIC``)."""
    if not enabled:
        return None
    return TraceDispatcher(group, make_sender, TraceConfig(topic=topic or RMQ_SYS_TRACE_TOPIC))
