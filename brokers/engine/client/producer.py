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

Blocking methods may be called from any thread. ``send`` and ``send_batch`` do the request and
its answer in the calling thread, on connections of the producer's own (:mod:`.direct_connection`;
``ProducerConfig.direct_send``), with the same queue selection, fault avoidance, retries,
results and errors: handing each send to the client instance's loop thread and waiting for it
cost two thread wake-ups per send. Route lookups and the first HEART_BEAT to a broker still run on
the instance's loop (:mod:`.client_instance`), as do the other methods. From asyncio code,
``await asyncio.wrap_future(producer.send_async(m))``.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from brokers.engine.client.admin_types import TopicRouteData
from brokers.engine.client.client_config import ClientConfig, ProducerConfig
from brokers.engine.client.client_instance import MQClientInstance
from brokers.engine.client.errors import CLIENT_ERROR, MQBrokerError, MQClientError
from brokers.engine.client.identity import UniqIdGenerator
from brokers.engine.client.latency_fault_tolerance import MQFaultStrategy
from brokers.engine.client.credentials import acl_signer
from brokers.engine.client.direct_connection import DirectConnections
from brokers.engine.client.mq_client_manager import acquire_client_instance, default_instance_name
from brokers.engine.client.plan import Call, Plan, Reply
from brokers.engine.client.producer_plans import DEFAULT_PRODUCER_GROUP, ProducerPlans
from brokers.engine.client.send_result import SendResult
from brokers.engine.client.trace_dispatcher import new_tracer
from brokers.engine.client.trace_hooks import trace_pub
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.common.message import PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX, Message, tag_hash
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.errors import RemotingError
from brokers.engine.remoting.tls import TlsConfig

__all__ = ["MessageQueueSelector", "Producer", "SendCallback", "select_message_queue_by_hash", "trace_sender_factory"]

log = logging.getLogger("brokers.engine.client")
T = TypeVar("T")

MessageQueueSelector = Callable[[list[MessageQueue], Message, Any], MessageQueue]
SendCallback = Callable[["SendResult | None", "BaseException | None"], None]
# Send response codes after which another broker is tried (DefaultMQProducerImpl.sendDefaultImpl).
_RETRY_ON = frozenset(
    {
        ResponseCode.TOPIC_NOT_EXIST,
        ResponseCode.SERVICE_NOT_AVAILABLE,
        ResponseCode.SYSTEM_ERROR,
        ResponseCode.NO_PERMISSION,
        ResponseCode.SYSTEM_BUSY,
        204,
        205,
    }
)
_trace_instances = itertools.count(1)  # trace producers' instance names
_DIRECT_CODES = frozenset(
    {RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_BATCH_MESSAGE}
)  # sent from the caller's thread


def select_message_queue_by_hash(mqs: list[MessageQueue], msg: Message, arg: Any) -> MessageQueue:
    """RocketMQ's SelectMessageQueueByHash: ``abs(arg.hashCode() % n)`` with Java's String hash of ``str(arg)``."""
    return mqs[abs(tag_hash(str(arg))) % len(mqs)]


def trace_sender_factory(
    namesrv_addr: str, access_key: str | None, secret_key: str | None, tls: TlsConfig | None
) -> Callable[[str], Producer]:
    """How a traced client's dispatcher makes its trace producer: same name servers, account and TLS."""
    # An instance of its own per trace producer: a producer and a consumer of one name may both trace,
    # and one client instance takes a producer group once.
    return lambda group: Producer(
        group,
        namesrv_addr,
        instance_name=f"trace-{os.getpid()}-{next(_trace_instances)}",
        access_key=access_key,
        secret_key=secret_key,
        tls=tls,
    ).start()


def _retryable(exc: RemotingError) -> bool:
    return not isinstance(exc, MQBrokerError) or exc.code in _RETRY_ON


class Producer:
    """Sends messages of one producer group; see the module docstring."""

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
        self.group = group
        # Message trace (trace_dispatcher.py): Pub records of stored sends, sent in the background.
        self.tracer = new_tracer(
            trace_enabled, trace_topic, group, trace_sender_factory(namesrv_addr, access_key, secret_key, tls)
        )
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
        self._direct: DirectConnections | None = None

    # -- lifecycle ----------------------------------------------------------------------------

    def start(self) -> Producer:
        if self._instance is not None:
            return self
        instance = acquire_client_instance(
            self.namesrv_addr, self.instance_name, self.client_config, self.signer, self.tls
        )
        self._plans = ProducerPlans(
            instance.namesrv_addrs,
            self.group,
            clock=self.clock,
            instance_name=self.instance_name,
            timeout_s=self.config.send_timeout_s,
            retry_times=0,
            compress_over=self.config.compress_over,
        )
        try:
            instance.register_producer(self)
        except ValueError:
            instance.release()
            raise
        self._instance = instance
        if self.config.direct_send:  # the instance's account and TLS, as its own connections have
            self._direct = DirectConnections(signer=instance.signer, tls=instance.tls)
        self._callbacks = concurrent.futures.ThreadPoolExecutor(
            self.config.async_workers, thread_name_prefix=f"producer-{self.group}"
        )
        if self.tracer is not None:
            self.tracer.start()
        return self

    def shutdown(self) -> None:
        instance, self._instance = self._instance, None
        if instance is None:
            return
        if self.tracer is not None:
            self.tracer.shutdown()
        instance.unregister_producer(self.group)
        try:
            instance.call(instance.unregister_client(producer_group=self.group), timeout_s=10.0)
        except Exception as exc:
            log.debug("unregister of producer %s failed: %s", self.group, exc)
        instance.release()
        direct, self._direct = self._direct, None
        if direct is not None:
            direct.close()
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

    def send(
        self,
        msg: Message,
        selector: MessageQueueSelector | None = None,
        arg: Any = None,
        *,
        mq: MessageQueue | None = None,
    ) -> SendResult:
        """Send and wait for the broker's answer: round robin with retries, to ``mq``, or to ``selector(mqs, msg, arg)``."""
        instance = self._running()
        direct = self._direct
        if direct is None or instance.in_loop_thread:
            return instance.call(self.send_coro(msg, selector, arg, mq=mq))
        result = self._send_direct(instance, direct, msg, selector, arg, mq)
        assert result is not None
        return result

    def send_async(
        self,
        msg: Message,
        callback: SendCallback | None = None,
        selector: MessageQueueSelector | None = None,
        arg: Any = None,
        *,
        mq: MessageQueue | None = None,
    ) -> concurrent.futures.Future[SendResult]:
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

    def send_oneway(
        self,
        msg: Message,
        selector: MessageQueueSelector | None = None,
        arg: Any = None,
        *,
        mq: MessageQueue | None = None,
    ) -> None:
        """Send flagged oneway (the broker does not answer); one attempt, failures only logged."""
        self._running().call(self._send(msg, selector, arg, mq, oneway=True))

    def send_batch(self, msgs: Sequence[Message], mq: MessageQueue | None = None) -> SendResult:
        """Send messages of one topic as one SEND_BATCH_MESSAGE (consecutive offsets of one queue)."""
        instance = self._running()
        direct = self._direct
        if direct is None or instance.in_loop_thread:
            result = instance.call(self._send(list(msgs), None, None, mq))
        else:
            result = self._send_direct(instance, direct, list(msgs), None, None, mq)
        assert result is not None
        return result

    def fetch_publish_message_queues(self, topic: str) -> list[MessageQueue]:
        return list(self._running().call(self._publish_queues(topic)))

    async def send_coro(
        self,
        msg: Message,
        selector: MessageQueueSelector | None = None,
        arg: Any = None,
        *,
        mq: MessageQueue | None = None,
    ) -> SendResult:
        """The send as a coroutine of the instance's loop (what ``send`` and ``send_async`` run)."""
        result = await self._send(msg, selector, arg, mq)
        assert result is not None
        return result

    # -- the send path ------------------------------------------------------------------------

    def _with_uniq_key(self, msg: Message) -> Message:
        if msg.properties.get(PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX):
            return msg
        properties = {**msg.properties, PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX: self._uniq.next_id()}
        if type(msg) is Message:  # a copy without dataclasses.replace's field walk (a third of a batch's client time)
            return Message(msg.topic, msg.body, msg.tags, msg.keys, properties, msg.flag)
        return replace(msg, properties=properties)

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

    async def _send(
        self,
        what: Message | list[Message],
        selector: MessageQueueSelector | None,
        arg: Any,
        mq: MessageQueue | None,
        *,
        oneway: bool = False,
    ) -> SendResult | None:
        plans = self._plans
        instance = self._running()
        assert plans is not None
        msg, batch, topic = self._keyed(what)
        queues = await self._publish_queues(topic)
        mq = self._selected(queues, msg, batch, topic, selector, arg, mq)
        attempts = 1 if (mq is not None or oneway) else 1 + self.config.retry_times_when_send_failed
        last_broker: str | None = None
        last_error: RemotingError | None = None
        for attempt in range(attempts):
            target = self._target(queues, mq, last_broker, topic)
            last_broker = target.broker_name
            begin = self.clock.monotonic()
            try:
                if oneway:
                    await self._send_oneway(plans, instance, msg, target)
                    return None
                plan = plans.send_batch(batch, target) if batch is not None else plans.send(msg, target)
                result = await instance.driver.run(plan)
                self._record_latency(target, begin, failed=False)
                self._trace(msg, batch, result, begin)
                return result
            except RemotingError as exc:
                self._record_latency(target, begin, failed=True)
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

    def _keyed(self, what: Message | list[Message]) -> tuple[Message, list[Message] | None, str]:
        """(message, batch or None, topic), every message with its UNIQ_KEY; a batch's first message stands for it."""
        if isinstance(what, list):
            if not what:
                raise MQClientError(CLIENT_ERROR, "the batch is empty")
            batch = [self._with_uniq_key(m) for m in what]
            return batch[0], batch, batch[0].topic
        msg = self._with_uniq_key(what)
        return msg, None, msg.topic

    def _target(
        self, queues: list[MessageQueue], mq: MessageQueue | None, last_broker: str | None, topic: str
    ) -> MessageQueue:
        """The queue of one attempt: ``mq`` when given, else fault-avoiding round robin (another broker than the last)."""
        if mq is not None:
            return mq
        if not queues:
            raise MQClientError(CLIENT_ERROR, f"topic {topic!r} has no writable queue")
        return self.fault_strategy.select_one_message_queue(queues, last_broker)

    def _record_latency(self, target: MessageQueue, begin: float, *, failed: bool) -> None:
        """Tell the fault strategy how long an attempt on ``target``'s broker took and whether it failed."""
        self.fault_strategy.update_fault_item(target.broker_name, int((self.clock.monotonic() - begin) * 1000), failed)

    def _trace(self, msg: Message, batch: list[Message] | None, result: SendResult, begin: float) -> None:
        """Queue the Pub trace record of a stored single send (tracing on; batches are not traced, as in RocketMQ)."""
        if self.tracer is not None and batch is None:
            cost_ms = int((self.clock.monotonic() - begin) * 1000)
            trace_pub(self.tracer, self.group, msg, result, self.clock.now_ms() - cost_ms, cost_ms)

    @staticmethod
    def _selected(
        queues: list[MessageQueue],
        msg: Message,
        batch: list[Message] | None,
        topic: str,
        selector: MessageQueueSelector | None,
        arg: Any,
        mq: MessageQueue | None,
    ) -> MessageQueue | None:
        """The queue a selector picks (None without one: ``mq``, or round robin)."""
        if selector is None:
            return mq
        if not queues:
            raise MQClientError(CLIENT_ERROR, f"topic {topic!r} has no writable queue")
        return selector(list(queues), msg if batch is None else batch[0], arg)

    # -- the send path from the caller's thread ---------------------------------------------------

    def _send_direct(
        self,
        instance: MQClientInstance,
        direct: DirectConnections,
        what: Message | list[Message],
        selector: MessageQueueSelector | None,
        arg: Any,
        mq: MessageQueue | None,
    ) -> SendResult:
        """:meth:`_send` run in the calling thread: the send requests on ``direct``, route lookups on the loop."""
        plans = self._plans
        assert plans is not None
        msg, batch, topic = self._keyed(what)
        queues = self._publish.get(topic) or instance.call(self._publish_queues(topic))
        mq = self._selected(queues, msg, batch, topic, selector, arg, mq)
        attempts = 1 if mq is not None else 1 + self.config.retry_times_when_send_failed
        last_broker: str | None = None
        last_error: RemotingError | None = None
        for attempt in range(attempts):
            target = self._target(queues, mq, last_broker, topic)
            last_broker = target.broker_name
            begin = self.clock.monotonic()
            try:
                plan = plans.send_batch(batch, target) if batch is not None else plans.send(msg, target)
                result = self._run_direct(instance, direct, plan)
                self._record_latency(target, begin, failed=False)
                self._trace(msg, batch, result, begin)
                return result
            except RemotingError as exc:
                self._record_latency(target, begin, failed=True)
                if not _retryable(exc):
                    raise
                last_error = exc
                log.info("send to %s failed (attempt %d of %d): %s", target, attempt + 1, attempts, exc)
                if mq is None and attempt + 1 < attempts:
                    queues = self._publish.get(topic) or instance.call(self._publish_queues(topic))
        assert last_error is not None
        raise last_error

    @staticmethod
    def _run_direct(instance: MQClientInstance, direct: DirectConnections, plan: Plan[SendResult]) -> SendResult:
        """Drive a send plan: its send request on ``direct``, any other step (route, HEART_BEAT) on the instance's loop."""
        value: Any = None
        error: BaseException | None = None
        driver = instance.driver
        while True:
            try:
                step = plan.throw(error) if error is not None else plan.send(value)
            except StopIteration as stop:
                result: SendResult = stop.value
                return result
            value, error = None, None
            try:
                if isinstance(step, Call) and step.code in _DIRECT_CODES and step.addr is not None and not step.oneway:
                    request = RemotingCommand.request(step.code, step.ext_fields, step.body)
                    value = Reply(step.addr, direct.invoke(step.addr, request, step.timeout_s or driver.timeout_s))
                else:
                    value = instance.call(_on_loop(driver.execute(step)))
            except RemotingError as exc:
                error = exc

    async def _send_oneway(
        self, plans: ProducerPlans, instance: MQClientInstance, msg: Message, target: MessageQueue
    ) -> None:
        out = plans.prepare(msg)
        addr = await instance.driver.run(plans.broker_addr(target.topic, target.broker_name, allow_template=True))
        await instance.driver.invoke(Call(out.code, plans.send_ext(out, target), out.body, addr=addr, oneway=True))


async def _on_loop(step: Awaitable[T]) -> T:
    return await step


def _run_callback(callback: SendCallback, result: SendResult | None, error: BaseException | None) -> None:
    try:
        callback(result, error)
    except Exception:
        log.exception("send callback raised")
