"""AsyncPushConsumer: the push consumer for asyncio code, with a coroutine listener, on the caller's loop.

::

    async def on_messages(msgs: list[ReceivedMessage], context: ConsumeConcurrentlyContext) -> ConsumeConcurrentlyStatus:
        for m in msgs:
            await handle(m.body)
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS

    consumer = AsyncPushConsumer("orders-consumer", "127.0.0.1:9876")   # strategy: AVG by default
    consumer.subscribe("Orders", "TagA || TagB")
    consumer.register_listener(on_messages)
    async with consumer:
        await stop_event.wait()

It is the blocking :class:`~.push_consumer.PushConsumer` (concurrently mode): the same
subscriptions and ``%RETRY%<group>``, clustering (rebalance over the group's members with the
strategy given, any of ``client.allocation``'s) or broadcasting, long-polling pull loops per
held queue, flow control, offsets committed as it commits them (piggybacked on pulls, persisted
every ``persist_consumer_offset_interval_s``, at a queue's drop and at stop), offset resets by
the brokers. What differs is where it runs: on a
:class:`~.loop_client_instance.LoopClientInstance` on the loop that awaits ``start()``, the
listener being awaited there by :class:`~.async_consume_service.AsyncConsumeConcurrentlyService`
(at most ``ConsumerConfig.consume_thread_max`` calls at once) — no thread pool. Orderly
consumption is the blocking PushConsumer's only.
"""

from __future__ import annotations

import asyncio
import logging

from brokers.engine.client.allocation import AllocateMessageQueueStrategy
from brokers.engine.client.async_consume_service import AsyncConsumeConcurrentlyService, AsyncMessageListener
from brokers.engine.client.client_config import ClientConfig, ConsumerConfig
from brokers.engine.client.client_instance import MQClientInstance
from brokers.engine.client.errors import CLIENT_ERROR, MQClientError
from brokers.engine.client.loop_client_instance import LoopClientInstance
from brokers.engine.client.puller import SUB_ALL
from brokers.engine.client.push_consumer import PushConsumer
from brokers.engine.client.send_back import MessageBackSender
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.subscription import EXPRESSION_TAG
from brokers.engine.remoting.tls import TlsConfig

__all__ = ["AsyncPushConsumer"]

log = logging.getLogger("brokers.engine.client")


class _LoopPushConsumer(PushConsumer):
    """The PushConsumer with an async consume service, started and stopped by awaiting."""

    async_listener: AsyncMessageListener | None = None

    def _check_startable(self) -> None:
        if self.async_listener is None:
            raise MQClientError(CLIENT_ERROR, "register a listener before start()")

    def _build_fetching(self, instance: MQClientInstance) -> None:
        assert self._plans is not None and self.offset_store is not None and self.async_listener is not None
        sender = MessageBackSender(instance, self._plans, self.group, self.config.max_reconsume_times)
        service = AsyncConsumeConcurrentlyService(
            self.group, self.async_listener, self.config, self.offset_store, sender, self.clustering, clock=self.clock
        )
        service.tracer = self.tracer
        self.consume_service = service  # type: ignore[assignment]  # the asyncio twin of the concurrent service, same calls
        if self.tracer is not None:
            self.tracer.start()

    def _close_fetching(self, await_termination_s: float) -> None:
        """Nothing to do without threads (``stop_on_loop`` awaits the consume service)."""

    async def start_on_loop(self, instance: LoopClientInstance) -> None:
        """ConsumerBase.start, awaited: build, register with ``instance``, routes, heartbeat, first rebalance."""
        self._check_startable()
        if not self.subscriptions:
            raise MQClientError(CLIENT_ERROR, "subscribe to a topic before start()")
        self.start_timestamp = self.clock.now_ms()
        self._build(instance)
        instance.register_consumer(self)
        self._instance = instance
        self._running = True
        await self._start_async()

    async def stop_on_loop(self) -> None:
        """ConsumerBase.shutdown, awaited: stop pulling, let listener calls finish, commit, unregister."""
        instance = self._instance
        if instance is None:
            return
        self._running = False
        instance.unregister_consumer(self.group)
        await self._stop_fetching()
        service = self.consume_service
        if isinstance(service, AsyncConsumeConcurrentlyService):
            await service.stop(self.config.await_termination_s)
        if self.tracer is not None:  # joins the dispatcher's thread: off the loop
            await asyncio.to_thread(self.tracer.shutdown)
        try:
            await asyncio.wait_for(self._shutdown_async(), 30.0)
        except Exception as exc:
            log.warning("shutdown of consumer %s incomplete: %s", self.group, exc)
        self._instance = None


class AsyncPushConsumer:
    """A consumer of one group awaiting a coroutine listener; see the module docstring.

    The arguments are the blocking PushConsumer's (without ``orderly``), ``trace_enabled``/``trace_topic`` included.
    """

    def __init__(
        self,
        group: str,
        namesrv_addr: str = "127.0.0.1:9876",
        strategy: AllocateMessageQueueStrategy | None = None,
        message_model: str = "CLUSTERING",
        consume_from_where: str = "CONSUME_FROM_LAST_OFFSET",
        instance_name: str | None = None,
        *,
        config: ConsumerConfig | None = None,
        client_config: ClientConfig | None = None,
        clock: Clock = SYSTEM_CLOCK,
        access_key: str | None = None,
        secret_key: str | None = None,
        tls: TlsConfig | None = None,
        trace_enabled: bool = False,
        trace_topic: str | None = None,
    ) -> None:
        self._consumer = _LoopPushConsumer(
            group,
            namesrv_addr,
            strategy,
            message_model,
            consume_from_where,
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
        return self._consumer.group

    @property
    def client_id(self) -> str:
        return self._consumer.client_id

    def subscribe(self, topic: str, expression: str = SUB_ALL, expression_type: str = EXPRESSION_TAG) -> None:
        """Consume ``topic``'s messages matching ``*`` or ``TagA || TagB``, or a SQL92 selector with
        ``expression_type="SQL92"`` (before ``start()``)."""
        if self._instance is not None:
            raise MQClientError(CLIENT_ERROR, "subscribe before start()")
        self._consumer.subscribe(topic, expression, expression_type)

    def register_listener(self, listener: AsyncMessageListener) -> None:
        """Set the listener, ``async fn(msgs, context) -> ConsumeConcurrentlyStatus`` (before ``start()``)."""
        if self._instance is not None:
            raise MQClientError(CLIENT_ERROR, "register the listener before start()")
        if not asyncio.iscoroutinefunction(listener) and not asyncio.iscoroutinefunction(
            getattr(listener, "__call__", None)
        ):
            raise TypeError(
                "the listener of an AsyncPushConsumer is a coroutine function: async def on_messages(msgs, context)"
            )
        self._consumer.async_listener = listener

    register_message_listener = register_listener

    async def start(self) -> AsyncPushConsumer:
        """Start on the running loop: routes, heartbeat, the first rebalance, then pulling."""
        if self._instance is not None:
            return self
        c = self._consumer
        c._check_startable()
        instance = LoopClientInstance(c.namesrv_addr, c.instance_name, c.client_config, signer=c.signer, tls=c.tls)
        await instance.start()
        try:
            await c.start_on_loop(instance)
        except BaseException:
            await c.stop_on_loop()
            await instance.stop()
            raise
        self._instance = instance
        return self

    async def stop(self) -> None:
        """Stop pulling, await listener calls in progress (``await_termination_s``), commit offsets, unregister."""
        instance, self._instance = self._instance, None
        if instance is None:
            return
        await self._consumer.stop_on_loop()
        await instance.stop()

    async def __aenter__(self) -> AsyncPushConsumer:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # -- what the blocking consumer also tells ---------------------------------------------------

    def assigned_queues(self) -> set[MessageQueue]:
        """The queues this member holds now (after the last rebalance)."""
        return self._consumer.assigned_queues()

    def committed_offset(self, mq: MessageQueue) -> int:
        """The offset this consumer would commit for ``mq`` now (-1 when none)."""
        return self._consumer.committed_offset(mq)

    async def persist_offsets(self) -> None:
        """Commit the held queues' offsets to the brokers now (the instance does it every few seconds)."""
        await self._consumer.persist_offsets()

    def suspend(self) -> None:
        """Pause the pull loops; held queues stay held."""
        self._consumer.suspend()

    def resume(self) -> None:
        self._consumer.resume()
