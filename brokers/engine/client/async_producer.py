"""AsyncProducer: the load-balancing producer for asyncio code, on the caller's event loop.

::

    async with AsyncProducer("orders-producer", "127.0.0.1:9876") as producer:
        result = await producer.send(Message("Orders", b"..."))              # SendResult
        results = await asyncio.gather(*(producer.send(m) for m in msgs))     # many sends in flight
        await producer.send_batch([Message("Orders", b"1"), Message("Orders", b"2")])
        await producer.send(msg, select_message_queue_by_hash, order_id)      # ordered: one queue per key

It is the blocking :class:`~.producer.Producer`'s send path, not a copy of it: the same queue
selection (round robin, ``selector(mqs, msg, arg)``, or ``mq``), latency fault avoidance
(``ProducerConfig.send_latency_fault_enable``), retries on another broker, UNIQ_KEY,
SendResult and errors (MQClientError, MQBrokerError, the transport's RemotingError). What
differs is where it runs: on a :class:`~.loop_client_instance.LoopClientInstance` on the loop
that awaits ``start()``, so a send is awaited where it is made (no hop to a client thread and
back), and any number of sends may be in flight on one connection per broker. Routes are polled
and heartbeats sent by that instance's timers, as for the blocking producer. Use it from the
loop it was started on; ``await stop()`` (or leaving ``async with``) unregisters it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from brokers.engine.client.client_config import ClientConfig, ProducerConfig
from brokers.engine.client.errors import CLIENT_ERROR, MQClientError
from brokers.engine.client.loop_client_instance import LoopClientInstance
from brokers.engine.client.producer import MessageQueueSelector, Producer
from brokers.engine.client.producer_plans import DEFAULT_PRODUCER_GROUP, ProducerPlans
from brokers.engine.client.send_result import SendResult
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.common.message import Message
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.remoting.tls import TlsConfig

__all__ = ["AsyncProducer"]

log = logging.getLogger("brokers.engine.client")


class AsyncProducer:
    """Sends messages of one producer group from asyncio code; see the module docstring.

    The arguments are the blocking Producer's: ``access_key``/``secret_key`` sign every request
    (ACL), ``tls`` makes every connection speak TLS, ``config`` sets timeouts, retries and
    fault avoidance, ``client_config`` the instance's timers, ``trace_enabled``/``trace_topic`` message trace.
    """

    def __init__(
        self,
        group: str = DEFAULT_PRODUCER_GROUP,
        namesrv_addr: str = "127.0.0.1:9876",
        instance_name: str | None = None,
        *,
        config: ProducerConfig | None = None,
        client_config: ClientConfig | None = None,
        clock: Clock = SYSTEM_CLOCK,
        access_key: str | None = None,
        secret_key: str | None = None,
        tls: TlsConfig | None = None,
        trace_enabled: bool = False,
        trace_topic: str | None = None,
    ) -> None:
        self._producer = Producer(
            group,
            namesrv_addr,
            instance_name,
            config=config,
            client_config=client_config,
            clock=clock,
            access_key=access_key,
            secret_key=secret_key,
            tls=tls,
            trace_enabled=trace_enabled,
            trace_topic=trace_topic,
        )
        self._instance: LoopClientInstance | None = None

    @property
    def group(self) -> str:
        return self._producer.group

    @property
    def config(self) -> ProducerConfig:
        return self._producer.config

    @property
    def client_id(self) -> str:
        return self._running().client_id

    # -- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> AsyncProducer:
        """Start on the running loop (the loop every later call must come from)."""
        if self._instance is not None:
            return self
        p = self._producer
        instance = LoopClientInstance(p.namesrv_addr, p.instance_name, p.client_config, signer=p.signer, tls=p.tls)
        await instance.start()
        # what Producer.start sets up, on this instance instead of a shared threaded one
        p._plans = ProducerPlans(
            instance.namesrv_addrs,
            p.group,
            clock=p.clock,
            instance_name=p.instance_name,
            timeout_s=p.config.send_timeout_s,
            retry_times=0,
            compress_over=p.config.compress_over,
        )
        instance.register_producer(p)
        p._instance = instance
        self._instance = instance
        if p.tracer is not None:
            p.tracer.start()
        return self

    async def stop(self) -> None:
        """Unregister from the brokers and close the connections; sends after this raise MQClientError."""
        instance, self._instance = self._instance, None
        if instance is None:
            return
        p = self._producer
        instance.unregister_producer(p.group)
        try:
            await asyncio.wait_for(instance.unregister_client(producer_group=p.group), 10.0)
        except Exception as exc:
            log.debug("unregister of producer %s failed: %s", p.group, exc)
        p._instance = None
        if p.tracer is not None:  # joins the dispatcher's thread: off the loop
            await asyncio.to_thread(p.tracer.shutdown)
        await instance.stop()

    async def __aenter__(self) -> AsyncProducer:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    def _running(self) -> LoopClientInstance:
        instance = self._instance
        if instance is None:
            raise MQClientError(CLIENT_ERROR, f"producer {self.group} is not started")
        if not instance.in_loop_thread:
            raise MQClientError(
                CLIENT_ERROR, f"producer {self.group} runs on the loop that started it; call it from there"
            )
        return instance

    # -- sends --------------------------------------------------------------------------------

    async def send(
        self,
        msg: Message,
        selector: MessageQueueSelector | None = None,
        arg: Any = None,
        *,
        mq: MessageQueue | None = None,
    ) -> SendResult:
        """Send and await the broker's answer: round robin with retries, to ``mq``, or to ``selector(mqs, msg, arg)``."""
        self._running()
        return await self._producer.send_coro(msg, selector, arg, mq=mq)

    async def send_batch(self, msgs: Sequence[Message], mq: MessageQueue | None = None) -> SendResult:
        """Send messages of one topic as one SEND_BATCH_MESSAGE (consecutive offsets of one queue)."""
        self._running()
        result = await self._producer._send(list(msgs), None, None, mq)
        assert result is not None
        return result

    async def send_oneway(
        self,
        msg: Message,
        selector: MessageQueueSelector | None = None,
        arg: Any = None,
        *,
        mq: MessageQueue | None = None,
    ) -> None:
        """Send flagged oneway (the broker does not answer); one attempt, failures only logged."""
        self._running()
        await self._producer._send(msg, selector, arg, mq, oneway=True)

    async def fetch_publish_message_queues(self, topic: str) -> list[MessageQueue]:
        """The topic's writable queues (fetching its route when not known yet)."""
        self._running()
        return list(await self._producer._publish_queues(topic))
