"""The simple producer: AsyncSimpleProducer (asyncio, pipelined) and SimpleProducer (blocking).

Both run :class:`~.producer_plans.ProducerPlans` as they are: route lookup on the name servers,
round robin over the writable queues with retries on a queue of another broker. The async
producer pipelines: any number of ``send`` calls may be in flight at once on one connection per
broker. For RocketMQ's load balancing (latency fault tolerance, ordered sends), use
:class:`~.producer.Producer`.
"""
from __future__ import annotations

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
from brokers.engine.client.send_result import SendResult
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.common.message import Message
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.remoting.blocking import BlockingRemotingClient
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.errors import RemotingError
from brokers.engine.remoting.tls import TlsConfig

__all__ = ["AsyncSimpleProducer", "SimpleProducer"]


class AsyncSimpleProducer(AsyncFrontEnd):
    """Asyncio producer; ``send`` may be awaited concurrently from many tasks (pipelined).

    Once a topic's route is cached and its broker registered, a send goes straight to the
    connection (one request, no plan stepping); before that, and after a failed attempt whose
    retry needs a route lookup, it runs the send plan.
    """

    def __init__(self, namesrv_addrs: str | Iterable[str], group: str = DEFAULT_PRODUCER_GROUP, *, timeout_s: float = DEFAULT_TIMEOUT_S,
                 remoting: RemotingClient | None = None, clock: Clock = SYSTEM_CLOCK, instance_name: str | None = None,
                 retry_times: int = RETRY_TIMES_WHEN_SEND_FAILED, compress_over: int = COMPRESS_OVER,
                 heartbeat_interval_s: float | None = HEARTBEAT_INTERVAL_S, access_key: str | None = None,
                 secret_key: str | None = None, tls: TlsConfig | None = None) -> None:
        self.driver = AsyncDriver(namesrv_addrs, timeout_s, remoting, signer=acl_signer(access_key, secret_key), tls=tls)
        self.plans = ProducerPlans(self.driver.namesrv_addrs, group, clock=clock, instance_name=instance_name,
                                   timeout_s=timeout_s, retry_times=retry_times, compress_over=compress_over)
        self._init_async(heartbeat_interval_s)

    async def send(self, msg: Message, mq: MessageQueue | None = None) -> SendResult:
        """Send one message; to ``mq`` if given, else round robin over the writable queues."""
        self._start_heartbeats()
        return await self._deliver(self.plans.prepare(msg), mq)

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


class SimpleProducer(BlockingFrontEnd):
    """Blocking, thread-safe producer (same behaviour as AsyncSimpleProducer)."""

    def __init__(self, namesrv_addrs: str | Iterable[str], group: str = DEFAULT_PRODUCER_GROUP, *, timeout_s: float = DEFAULT_TIMEOUT_S,
                 remoting: BlockingRemotingClient | None = None, clock: Clock = SYSTEM_CLOCK, instance_name: str | None = None,
                 retry_times: int = RETRY_TIMES_WHEN_SEND_FAILED, compress_over: int = COMPRESS_OVER,
                 heartbeat_interval_s: float | None = HEARTBEAT_INTERVAL_S, access_key: str | None = None,
                 secret_key: str | None = None, tls: TlsConfig | None = None) -> None:
        self.driver = BlockingDriver(namesrv_addrs, timeout_s, remoting, signer=acl_signer(access_key, secret_key), tls=tls)
        self.plans = ProducerPlans(self.driver.namesrv_addrs, group, clock=clock, instance_name=instance_name,
                                   timeout_s=timeout_s, retry_times=retry_times, compress_over=compress_over)
        self._init_blocking(heartbeat_interval_s)

    def send(self, msg: Message, mq: MessageQueue | None = None) -> SendResult:
        self._start_heartbeats()
        return self.driver.run(self.plans.send(msg, mq))

    def send_batch(self, msgs: Sequence[Message], mq: MessageQueue | None = None) -> SendResult:
        self._start_heartbeats()
        return self.driver.run(self.plans.send_batch(list(msgs), mq))

    def fetch_publish_message_queues(self, topic: str) -> list[MessageQueue]:
        return self.driver.run(self.plans.publish_queues(topic))
