"""The simple producer: AsyncSimpleProducer (asyncio, pipelined) and SimpleProducer (blocking).

Both run :class:`~.producer_plans.ProducerPlans` as they are: route lookup on the name servers,
round robin over the writable queues with retries on a queue of another broker. The async
producer pipelines: any number of ``send`` calls may be in flight at once on one connection per
broker. For RocketMQ's load balancing (latency fault tolerance, ordered sends), use
:class:`~.producer.Producer`. ``trace_enabled=True`` records a Pub trace record per stored single
send, sent in the background (trace_dispatcher.py); ``close()`` sends what is queued.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence

from brokers.engine.client.credentials import acl_signer
from brokers.engine.client.driver import DEFAULT_TIMEOUT_S, AsyncDriver, BlockingDriver
from brokers.engine.client.front_end import HEARTBEAT_INTERVAL_S, AsyncFrontEnd, BlockingFrontEnd
from brokers.engine.client.producer_plans import (
    COMPRESS_OVER,
    DEFAULT_PRODUCER_GROUP,
    RETRY_TIMES_WHEN_SEND_FAILED,
    Outgoing,
    ProducerPlans,
    retryable,
)
from brokers.engine.client.producer import trace_sender_factory
from brokers.engine.client.send_result import SendResult
from brokers.engine.client.trace_dispatcher import TraceDispatcher, new_tracer
from brokers.engine.client.trace_hooks import trace_pub
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.common.message import Message
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.remoting.blocking import BlockingRemotingClient
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.errors import RemotingError
from brokers.engine.remoting.tls import TlsConfig

__all__ = ["AsyncSimpleProducer", "SimpleProducer"]


def _tracer(
    enabled: bool,
    topic: str | None,
    group: str,
    namesrv_addrs: Iterable[str],
    access_key: str | None,
    secret_key: str | None,
    tls: TlsConfig | None,
) -> TraceDispatcher | None:
    tracer = new_tracer(
        enabled, topic, group, trace_sender_factory(";".join(namesrv_addrs), access_key, secret_key, tls)
    )
    return tracer.start() if tracer is not None else None


def _traced(
    tracer: TraceDispatcher | None, group: str, msg: Message, result: SendResult, clock: Clock, begin: float
) -> SendResult:
    if tracer is not None:
        cost_ms = int((clock.monotonic() - begin) * 1000)
        trace_pub(tracer, group, msg, result, clock.now_ms() - cost_ms, cost_ms)
    return result


class AsyncSimpleProducer(AsyncFrontEnd):
    """Asyncio producer; ``send`` may be awaited concurrently from many tasks (pipelined).

    Once a topic's route is cached and its broker registered, a send goes straight to the
    connection (one request, no plan stepping); before that, and after a failed attempt whose
    retry needs a route lookup, it runs the send plan.
    """

    plans: ProducerPlans

    def __init__(
        self,
        namesrv_addrs: str | Iterable[str],
        group: str = DEFAULT_PRODUCER_GROUP,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        remoting: RemotingClient | None = None,
        clock: Clock = SYSTEM_CLOCK,
        instance_name: str | None = None,
        retry_times: int = RETRY_TIMES_WHEN_SEND_FAILED,
        compress_over: int = COMPRESS_OVER,
        heartbeat_interval_s: float | None = HEARTBEAT_INTERVAL_S,
        access_key: str | None = None,
        secret_key: str | None = None,
        tls: TlsConfig | None = None,
        trace_enabled: bool = False,
        trace_topic: str | None = None,
    ) -> None:
        self.driver = AsyncDriver(
            namesrv_addrs, timeout_s, remoting, signer=acl_signer(access_key, secret_key), tls=tls
        )
        self.plans = ProducerPlans(
            self.driver.namesrv_addrs,
            group,
            clock=clock,
            instance_name=instance_name,
            timeout_s=timeout_s,
            retry_times=retry_times,
            compress_over=compress_over,
        )
        self.clock = clock
        self.tracer = _tracer(trace_enabled, trace_topic, group, self.driver.namesrv_addrs, access_key, secret_key, tls)
        self._init_async(heartbeat_interval_s)

    async def send(self, msg: Message, mq: MessageQueue | None = None) -> SendResult:
        """Send one message; to ``mq`` if given, else round robin over the writable queues."""
        self._start_heartbeats()
        begin = self.clock.monotonic()
        return _traced(
            self.tracer, self.plans.group, msg, await self._deliver(self.plans.prepare(msg), mq), self.clock, begin
        )

    async def send_batch(self, msgs: Sequence[Message], mq: MessageQueue | None = None) -> SendResult:
        """Send messages of one topic as one batch (consecutive offsets in one queue)."""
        self._start_heartbeats()
        return await self._deliver(self.plans.prepare_batch(list(msgs)), mq)

    async def _deliver(self, out: Outgoing, mq: MessageQueue | None) -> SendResult:
        plans = self.plans
        remoting = self.driver.remoting
        attempts = plans.attempts(mq)
        last_error: RemotingError | None = None
        last_broker: str | None = None
        for attempt in range(attempts):
            picked = plans.cached_target(out.topic, mq, last_broker)
            if picked is None:
                return await self.driver.run(plans.deliver(out, mq, attempts - attempt, last_broker))
            target, addr = picked
            last_broker = target.broker_name
            request = RemotingCommand.request(out.code, plans.send_ext(out, target), out.body)
            try:
                response = await remoting.invoke(addr, request, plans.timeout_s)
                return plans.send_result(out, target, addr, response.code, response.remark, response.ext_fields)
            except RemotingError as exc:
                if not retryable(exc):
                    raise
                last_error = exc
        assert last_error is not None
        raise last_error

    async def fetch_publish_message_queues(self, topic: str) -> list[MessageQueue]:
        return await self.driver.run(self.plans.publish_queues(topic))

    async def close(self) -> None:
        if self.tracer is not None:  # joins the dispatcher's thread: off the loop
            await asyncio.to_thread(self.tracer.shutdown)
        await super().close()


class SimpleProducer(BlockingFrontEnd):
    """Blocking, thread-safe producer (same behaviour as AsyncSimpleProducer)."""

    plans: ProducerPlans

    def __init__(
        self,
        namesrv_addrs: str | Iterable[str],
        group: str = DEFAULT_PRODUCER_GROUP,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        remoting: BlockingRemotingClient | None = None,
        clock: Clock = SYSTEM_CLOCK,
        instance_name: str | None = None,
        retry_times: int = RETRY_TIMES_WHEN_SEND_FAILED,
        compress_over: int = COMPRESS_OVER,
        heartbeat_interval_s: float | None = HEARTBEAT_INTERVAL_S,
        access_key: str | None = None,
        secret_key: str | None = None,
        tls: TlsConfig | None = None,
        trace_enabled: bool = False,
        trace_topic: str | None = None,
    ) -> None:
        self.driver = BlockingDriver(
            namesrv_addrs, timeout_s, remoting, signer=acl_signer(access_key, secret_key), tls=tls
        )
        self.plans = ProducerPlans(
            self.driver.namesrv_addrs,
            group,
            clock=clock,
            instance_name=instance_name,
            timeout_s=timeout_s,
            retry_times=retry_times,
            compress_over=compress_over,
        )
        self.clock = clock
        self.tracer = _tracer(trace_enabled, trace_topic, group, self.driver.namesrv_addrs, access_key, secret_key, tls)
        self._init_blocking(heartbeat_interval_s)

    def send(self, msg: Message, mq: MessageQueue | None = None) -> SendResult:
        self._start_heartbeats()
        begin = self.clock.monotonic()
        return _traced(self.tracer, self.plans.group, msg, self.driver.run(self.plans.send(msg, mq)), self.clock, begin)

    def send_batch(self, msgs: Sequence[Message], mq: MessageQueue | None = None) -> SendResult:
        self._start_heartbeats()
        return self.driver.run(self.plans.send_batch(list(msgs), mq))

    def fetch_publish_message_queues(self, topic: str) -> list[MessageQueue]:
        return self.driver.run(self.plans.publish_queues(topic))

    def close(self) -> None:
        if self.tracer is not None:
            self.tracer.shutdown()
        super().close()
