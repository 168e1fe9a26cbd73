"""Producer: RocketMQ's DefaultMQProducer over the wire protocol, with queue selection and retries.

::

    producer = Producer("orders-producer", "127.0.0.1:9876")
    producer.start()
    result = producer.send(Message("Orders", b"..."))                   # sync: SendResult
    future = producer.send_async(Message("Orders", b"..."), callback)   # concurrent future
    producer.send_oneway(Message("Orders", b"..."))                      # no answer awaited
    producer.send_batch([Message("Orders", b"1"), Message("Orders", b"2")])
    producer.send(msg, select_message_queue_by_hash, order_id)          # ordered: one queue per key
    producer.shutdown()

Routes come from the name servers at the first send of a topic and every
``poll_name_server_interval_s`` (the client instance's timer); sends go to the writable queues of
brokers with a master. Each attempt takes the next queue round robin, skipping the broker of a
failed previous attempt; a failed attempt (no answer, or a retryable refusal) is retried up to
``retry_times_when_send_failed`` times, each time on another broker when there is one. With
``send_latency_fault_enable``, slow or failing brokers are avoided for a while
(:mod:`.latency_fault_tolerance`). Ordered sends (a selector) and sends to a given queue make one
attempt. A message keeps one UNIQ_KEY (its ``msg_id``) across attempts.

Blocking methods may be called from any thread; the work runs on the client instance's loop
(:mod:`.client_instance`). From asyncio code, ``await asyncio.wrap_future(producer.send_async(m))``.
"""
from __future__ import annotations

import concurrent.futures
import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from brokers.engine.client.admin_types import TopicRouteData
from brokers.engine.client.client_config import ClientConfig, ProducerConfig
from brokers.engine.client.client_instance import MQClientInstance
from brokers.engine.client.errors import CLIENT_ERROR, MQBrokerError, MQClientError
from brokers.engine.client.identity import UniqIdGenerator
from brokers.engine.client.latency_fault_tolerance import MQFaultStrategy
from brokers.engine.client.credentials import acl_signer
from brokers.engine.client.mq_client_manager import acquire_client_instance, default_instance_name
from brokers.engine.client.plan import Call
from brokers.engine.client.producer_plans import DEFAULT_PRODUCER_GROUP, ProducerPlans
from brokers.engine.client.send_result import SendResult
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.common.message import PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, Message, tag_hash
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.remoting.codes import ResponseCode
from brokers.engine.remoting.errors import RemotingError
from brokers.engine.remoting.tls import TlsConfig

__all__ = ["MessageQueueSelector", "Producer", "SendCallback", "select_message_queue_by_hash"]

log = logging.getLogger("brokers.engine.client")

MessageQueueSelector = Callable[[list[MessageQueue], Message, Any], MessageQueue]
SendCallback = Callable[["SendResult | None", "BaseException | None"], None]
# Send response codes after which another broker is tried (DefaultMQProducerImpl.sendDefaultImpl).
_RETRY_ON = frozenset({ResponseCode.TOPIC_NOT_EXIST, ResponseCode.SERVICE_NOT_AVAILABLE, ResponseCode.SYSTEM_ERROR,
                       ResponseCode.NO_PERMISSION, ResponseCode.SYSTEM_BUSY, 204, 205})


def select_message_queue_by_hash(mqs: list[MessageQueue], msg: Message, arg: Any) -> MessageQueue:
    """RocketMQ's SelectMessageQueueByHash: ``abs(arg.hashCode() % n)`` with Java's String hash of ``str(arg)``."""
    return mqs[abs(tag_hash(str(arg))) % len(mqs)]


def _retryable(exc: RemotingError) -> bool:
    return not isinstance(exc, MQBrokerError) or exc.code in _RETRY_ON


class Producer:
    """Sends messages of one producer group; see the module docstring."""

    def __init__(self, group: str = DEFAULT_PRODUCER_GROUP, namesrv_addr: str = "127.0.0.1:9876", instance_name: str | None = None, *,
                 config: ProducerConfig | None = None, client_config: ClientConfig | None = None, clock: Clock = SYSTEM_CLOCK,
                 access_key: str | None = None, secret_key: str | None = None, tls: TlsConfig | None = None) -> None:
        self.group = group
        self.signer = acl_signer(access_key, secret_key)  # ACL: every request signed with this account
        self.tls = tls  # connections of the client instance speak TLS (remoting/tls.py)
        self.namesrv_addr = namesrv_addr
        self.instance_name = instance_name or default_instance_name()
        self.config = config or ProducerConfig()
        self.client_config = client_config
        self.clock = clock
        self.fault_strategy = MQFaultStrategy(self.config.send_latency_fault_enable, clock)
        self._uniq = UniqIdGenerator(clock=clock)
        self._publish: dict[str, list[MessageQueue]] = {}
        self._instance: MQClientInstance | None = None
        self._plans: ProducerPlans | None = None
        self._callbacks: concurrent.futures.ThreadPoolExecutor | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> Producer:
        if self._instance is not None:
            return self
        instance = acquire_client_instance(self.namesrv_addr, self.instance_name, self.client_config, self.signer, self.tls)
        self._plans = ProducerPlans(instance.namesrv_addrs, self.group, clock=self.clock, instance_name=self.instance_name,
                                    timeout_s=self.config.send_timeout_s, retry_times=0, compress_over=self.config.compress_over)
        try:
            instance.register_producer(self)
        except ValueError:
            instance.release()
            raise
        self._instance = instance
        self._callbacks = concurrent.futures.ThreadPoolExecutor(self.config.async_workers, thread_name_prefix=f"producer-{self.group}")
        return self

    def shutdown(self) -> None:
        instance, self._instance = self._instance, None
        if instance is None:
            return
        instance.unregister_producer(self.group)
        try:
            instance.call(instance.unregister_client(producer_group=self.group), timeout_s=10.0)
        except Exception as exc:
            log.debug("unregister of producer %s failed: %s", self.group, exc)
        instance.release()
        if self._callbacks is not None:
            self._callbacks.shutdown(wait=True)

    def __enter__(self) -> Producer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.shutdown()

    @property
    def client_id(self) -> str:
        return self._running().client_id

    def _running(self) -> MQClientInstance:
        if self._instance is None:
            raise MQClientError(CLIENT_ERROR, f"producer {self.group} is not started")
        return self._instance

    # -- ClientMember -------------------------------------------------------------------------

    def topics(self) -> set[str]:
        return set(self._publish)

    def on_route(self, topic: str, route: TopicRouteData) -> bool:
        queues = route.publish_queues()
        if queues:
            self._publish[topic] = queues
        return False

    # -- public sends -------------------------------------------------------------------------

    def send(self, msg: Message, selector: MessageQueueSelector | None = None, arg: Any = None, *,
             mq: MessageQueue | None = None) -> SendResult:
        """Send and wait for the broker's answer: round robin with retries, to ``mq``, or to ``selector(mqs, msg, arg)``."""
        instance = self._running()
        return instance.call(self.send_coro(msg, selector, arg, mq=mq))

    def send_async(self, msg: Message, callback: SendCallback | None = None, selector: MessageQueueSelector | None = None,
                   arg: Any = None, *, mq: MessageQueue | None = None) -> concurrent.futures.Future[SendResult]:
        """Send without waiting; the future (and ``callback(result, error)``, on a callback thread) gets the outcome."""
        future = self._running().submit(self.send_coro(msg, selector, arg, mq=mq))
        if callback is not None:
            executor = self._callbacks
            assert executor is not None

            def done(f: concurrent.futures.Future[SendResult]) -> None:
                error = f.exception()
                executor.submit(_run_callback, callback, None if error else f.result(), error)

            future.add_done_callback(done)
        return future

    def send_oneway(self, msg: Message, selector: MessageQueueSelector | None = None, arg: Any = None, *,
                    mq: MessageQueue | None = None) -> None:
        """Send flagged oneway (the broker does not answer); one attempt, failures only logged."""
        self._running().call(self._send(msg, selector, arg, mq, oneway=True))

    def send_batch(self, msgs: Sequence[Message], mq: MessageQueue | None = None) -> SendResult:
        """Send messages of one topic as one SEND_BATCH_MESSAGE (consecutive offsets of one queue)."""
        return self._running().call(self._send(list(msgs), None, None, mq))

    def fetch_publish_message_queues(self, topic: str) -> list[MessageQueue]:
        return list(self._running().call(self._publish_queues(topic)))

    async def send_coro(self, msg: Message, selector: MessageQueueSelector | None = None, arg: Any = None, *,
                        mq: MessageQueue | None = None) -> SendResult:
        """The send as a coroutine of the instance's loop (what ``send`` and ``send_async`` run)."""
        result = await self._send(msg, selector, arg, mq)
        assert result is not None
        return result

    # -- the send path ------------------------------------------------------------------------

    def _with_uniq_key(self, msg: Message) -> Message:
        if msg.properties.get(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX):
            return msg
        return replace(msg, properties={**msg.properties, PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX: self._uniq.next_id()})

    async def _publish_queues(self, topic: str, refresh: bool = False) -> list[MessageQueue]:
        queues = self._publish.get(topic)
        if queues and not refresh:
            return queues
        instance = self._running()
        self._publish.setdefault(topic, [])  # the instance polls the topic's route from now on
        await instance.update_topic_route(topic)
        queues = self._publish.get(topic)
        if not queues:  # a topic the name server does not know: route it like TBW102 (auto-create)
            assert self._plans is not None
            queues = await instance.driver.run(self._plans.publish_queues(topic))
            self._publish[topic] = list(queues)
        return queues

    async def _send(self, what: Message | list[Message], selector: MessageQueueSelector | None, arg: Any,
                    mq: MessageQueue | None, *, oneway: bool = False) -> SendResult | None:
        plans = self._plans
        instance = self._running()
        assert plans is not None
        batch = what if isinstance(what, list) else None
        if batch is not None:
            if not batch:
                raise MQClientError(CLIENT_ERROR, "the batch is empty")
            batch = [self._with_uniq_key(m) for m in batch]
            topic = batch[0].topic
        else:
            assert isinstance(what, Message)
            msg = self._with_uniq_key(what)
            topic = msg.topic
        queues = await self._publish_queues(topic)
        if selector is not None:
            if not queues:
                raise MQClientError(CLIENT_ERROR, f"topic {topic!r} has no writable queue")
            mq = selector(list(queues), msg if batch is None else batch[0], arg)
        attempts = 1 if (mq is not None or oneway) else 1 + self.config.retry_times_when_send_failed
        last_broker: str | None = None
        last_error: RemotingError | None = None
        for attempt in range(attempts):
            if mq is not None:
                target = mq
            elif not queues:
                raise MQClientError(CLIENT_ERROR, f"topic {topic!r} has no writable queue")
            else:
                target = self.fault_strategy.select_one_message_queue(queues, last_broker)
            last_broker = target.broker_name
            begin = self.clock.monotonic()
            try:
                if oneway:
                    await self._send_oneway(plans, instance, msg, target)
                    return None
                plan = plans.send_batch(batch, target) if batch is not None else plans.send(msg, target)
                result = await instance.driver.run(plan)
                self.fault_strategy.update_fault_item(target.broker_name, int((self.clock.monotonic() - begin) * 1000), False)
                return result
            except RemotingError as exc:
                self.fault_strategy.update_fault_item(target.broker_name, int((self.clock.monotonic() - begin) * 1000), True)
                if oneway:
                    log.warning("oneway send to %s failed: %s", target, exc)
                    return None
                if not _retryable(exc):
                    raise
                last_error = exc
                log.info("send to %s failed (attempt %d of %d): %s", target, attempt + 1, attempts, exc)
                if mq is None and attempt + 1 < attempts:
                    queues = await self._publish_queues(topic)
        assert last_error is not None
        raise last_error

    async def _send_oneway(self, plans: ProducerPlans, instance: MQClientInstance, msg: Message, target: MessageQueue) -> None:
        out = plans.prepare(msg)
        addr = await instance.driver.run(plans.broker_addr(target.topic, target.broker_name, allow_template=True))
        await instance.driver.invoke(Call(out.code, plans.send_ext(out, target), out.body, addr=addr, oneway=True))


def _run_callback(callback: SendCallback, result: SendResult | None, error: BaseException | None) -> None:
    try:
        callback(result, error)
    except Exception:
        log.exception("send callback raised")
