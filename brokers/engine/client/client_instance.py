"""MQClientInstance: what every producer and consumer with one client id shares, as in RocketMQ.

One event loop in a daemon thread, one connection per broker (one RemotingClient), one route
table, one heartbeat carrying every producer group and consumer subscription, and the timers:

- route poll every ``poll_name_server_interval_s`` for every topic a member uses (a consumer
  whose subscribed queues changed gets a rebalance at once), every second while a broker name
  of those routes has no master (its consumers read from a slave) or a member's call failed;
- HEART_BEAT to every master of those topics every ``heartbeat_broker_interval_s`` (and to
  their slaves when a consumer runs, so a slave knows the group while the master is gone);
- rebalance of every consumer every ``rebalance_interval_s``, and at once when a broker sends
  NOTIFY_CONSUMER_IDS_CHANGED;
- consumer offsets persisted every ``persist_consumer_offset_interval_s``.

Its :class:`~.client_remoting_processor.ClientRemotingProcessor` answers the brokers' requests
(GET_CONSUMER_RUNNING_INFO for its consumers, RESET_CONSUMER_CLIENT_OFFSET applied to its push
consumer of the group by :meth:`MQClientInstance.reset_offset`). :mod:`.mq_client_manager` returns
the instance of a client id (``<ip>@<instance name>``), creating and starting it on first use;
:meth:`MQClientInstance.release` stops it when its last member leaves. Public client methods
run coroutines on the instance's loop with :meth:`MQClientInstance.call` (blocking) or
:meth:`MQClientInstance.submit` (a concurrent future), so they work from any thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import random
import threading
from collections.abc import Coroutine
from typing import Any, Protocol, TypeVar

from brokers.engine import event_loop
from brokers.engine.client.admin_plans import AdminPlans
from brokers.engine.client.admin_types import TopicRouteData
from brokers.engine.client.client_config import ClientConfig
from brokers.engine.client.client_remoting_processor import ClientRemotingProcessor
from brokers.engine.client.driver import AsyncDriver
from brokers.engine.client.plan import Call
from brokers.engine.common import json_compat
from brokers.engine.common.constants import MASTER_ID
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.errors import RemotingError
from brokers.engine.remoting.headers.brokers import GetConsumerListByGroupRequestHeader, UnregisterClientRequestHeader
from brokers.engine.remoting.request_guard import RequestSigner
from brokers.engine.remoting.tls import TlsConfig

__all__ = ["CLIENT_INNER_PRODUCER_GROUP", "ClientMember", "ClientRegistry", "ConsumerMember", "MQClientInstance"]

log = logging.getLogger("brokers.engine.client")

T = TypeVar("T")
CLIENT_INNER_PRODUCER_GROUP = "CLIENT_INNER_PRODUCER"  # the group of a consumer's own retry sends
DEGRADED_POLL_S = 1.0  # route poll period while a used broker name has no master (or on request)
MIN_ROUTE_POLL_GAP_S = 0.5
SLAVE_LIST_TIMEOUT_S = (
    1.0  # a slave's consumer list only adds to its master's: a hung slave delays a rebalance this much
)


class ClientMember(Protocol):
    """A producer or consumer registered with an instance."""

    group: str

    def topics(self) -> set[str]: ...

    def on_route(self, topic: str, route: TopicRouteData) -> bool:
        """Take a fresh route; return True when the topic's subscribable queues changed."""
        ...


class ConsumerMember(ClientMember, Protocol):
    def consumer_data(self) -> dict[str, Any]: ...

    async def do_rebalance(self) -> None: ...

    async def persist_offsets(self) -> None: ...

    def running_info_body(self) -> bytes: ...


class ClientRegistry(Protocol):
    """Who hands instances out (:class:`~.mq_client_manager.MQClientManager`) and counts their references."""

    def release(self, instance: MQClientInstance) -> bool:
        """Drop one reference; True when it was the last."""
        ...


class MQClientInstance:
    """The shared core of the clients of one client id; see the module docstring."""

    def __init__(
        self,
        client_id: str,
        namesrv_addrs: tuple[str, ...],
        config: ClientConfig,
        *,
        registry: ClientRegistry | None = None,
        signer: RequestSigner | None = None,
        tls: TlsConfig | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self.client_id = client_id
        self.signer = signer  # signs every request of every member (one account per instance)
        self.tls = tls  # every connection of every member speaks TLS when set (one setting per instance)
        self.namesrv_addrs = namesrv_addrs
        self.config = config
        self.driver = AsyncDriver(namesrv_addrs, config.api_timeout_s, signer=signer, tls=tls)
        self.admin_plans = AdminPlans(namesrv_addrs)
        self.routes: dict[str, TopicRouteData] = {}
        self.producers: dict[str, ClientMember] = {}
        self.consumers: dict[str, ConsumerMember] = {}
        self.loop = loop or event_loop.new_event_loop()  # given: the caller's loop, no thread (.loop_client_instance)
        self._thread = (
            None if loop else threading.Thread(target=self._run_loop, name=f"mq-client-{client_id}", daemon=True)
        )
        self._tasks: list[asyncio.Task[Any]] = []
        self._wakeup: asyncio.Event | None = None
        self._route_wakeup: asyncio.Event | None = None
        self._members_lock = threading.Lock()
        self._registry = registry
        self._stopped = False
        ClientRemotingProcessor(self).register(self.driver.remoting)

    # -- loop plumbing ------------------------------------------------------------------------

    def _run_loop(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def _own_thread(self) -> threading.Thread:
        """The loop's thread (an instance given a loop has none and overrides what uses it)."""
        if self._thread is None:
            raise RuntimeError(f"client instance {self.client_id} runs on its caller's loop, not a thread")
        return self._thread

    def _start(self) -> None:
        self._own_thread().start()
        self.call(self._start_timers())

    async def _start_timers(self) -> None:
        self._wakeup = asyncio.Event()
        self._route_wakeup = asyncio.Event()
        for coro in (self._poll_routes_loop(), self._heartbeat_loop(), self._rebalance_loop(), self._persist_loop()):
            self._tasks.append(self.loop.create_task(coro))

    def call(self, coro: Coroutine[Any, Any, T], timeout_s: float | None = None) -> T:
        """Run ``coro`` on the instance's loop and wait for it (from any thread but the loop's)."""
        if self.in_loop_thread:
            coro.close()
            raise RuntimeError("MQClientInstance.call from its own loop thread would deadlock; await instead")
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout_s)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the loop; return a concurrent future of its result."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    @property
    def in_loop_thread(self) -> bool:
        return threading.current_thread() is self._thread

    # -- members ------------------------------------------------------------------------------

    def register_producer(self, member: ClientMember) -> None:
        with self._members_lock:
            if member.group in self.producers:
                raise ValueError(f"producer group {member.group!r} already runs in client {self.client_id}")
            self.producers[member.group] = member

    def register_consumer(self, member: ConsumerMember) -> None:
        with self._members_lock:
            if member.group in self.consumers:
                raise ValueError(
                    f"consumer group {member.group!r} already runs in client {self.client_id}; give it another instance_name"
                )
            self.consumers[member.group] = member

    def unregister_producer(self, group: str) -> None:
        with self._members_lock:
            self.producers.pop(group, None)

    def unregister_consumer(self, group: str) -> None:
        with self._members_lock:
            self.consumers.pop(group, None)

    def release(self) -> None:
        """Drop one reference; the last one stops the instance (call after unregistering)."""
        if self._registry is None or self._registry.release(self):
            self._shutdown()

    def _shutdown(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        try:
            self.call(self._stop_all(), timeout_s=10.0)
        except Exception as exc:  # the loop stops anyway
            log.warning("client %s did not stop cleanly: %s", self.client_id, exc)
        self.loop.call_soon_threadsafe(self.loop.stop)
        thread = self._own_thread()
        thread.join(10.0)
        if not thread.is_alive():
            self.loop.close()

    async def _stop_all(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()
        await self.driver.close()

    # -- routes -------------------------------------------------------------------------------

    def _all_topics(self) -> set[str]:
        with self._members_lock:
            members: list[ClientMember] = [*self.producers.values(), *self.consumers.values()]
        topics: set[str] = set()
        for m in members:
            topics |= m.topics()
        return topics

    async def update_topic_route(self, topic: str) -> TopicRouteData | None:
        """Fetch ``topic``'s route and hand it to every member using the topic; None when unknown."""
        try:
            route = await self.driver.run(self.admin_plans.examine_topic_route_info(topic))
        except RemotingError as exc:
            log.debug("route of %s not updated: %s", topic, exc)
            return self.routes.get(topic)
        old = self.routes.get(topic)
        self.routes[topic] = route
        if old is not None and old.broker_datas != route.broker_datas and self._wakeup is not None:
            # a master left or came back: tell the group's brokers who we are now, not in 30 s
            self._tasks.append(self.loop.create_task(self.send_heartbeat_to_all_brokers()))
            self._tasks[:] = [t for t in self._tasks if not t.done()]
        changed = False
        with self._members_lock:
            members: list[ClientMember] = [*self.producers.values(), *self.consumers.values()]
        for m in members:
            if topic in m.topics():
                changed = m.on_route(topic, route) or changed
        if changed:
            self.rebalance_immediately()
        return route

    async def _poll_routes_loop(self) -> None:
        """Every ``poll_name_server_interval_s``; every ``DEGRADED_POLL_S`` while a used broker name has
        no master in its route or a member asked (a failed call), so consumers reading from a slave
        see their master return within a second or two and move back to it."""
        assert self._route_wakeup is not None
        last = self.loop.time()
        while True:
            try:
                await asyncio.wait_for(self._route_wakeup.wait(), DEGRADED_POLL_S)
            except TimeoutError:
                pass
            asked = self._route_wakeup.is_set()
            self._route_wakeup.clear()
            if not (asked or self._degraded() or self.loop.time() - last >= self.config.poll_name_server_interval_s):
                continue
            last = self.loop.time()
            for topic in sorted(self._all_topics()):
                await self.update_topic_route(topic)
            await asyncio.sleep(MIN_ROUTE_POLL_GAP_S)  # failures asking for a poll do not make a storm

    def _degraded(self) -> bool:
        """True when a route of a used topic lists a broker name without a master."""
        return any(
            route is not None and any(not b.master_addr for b in route.broker_datas)
            for route in (self.routes.get(t) for t in self._all_topics())
        )

    def refresh_routes_soon(self, addr: str | None = None) -> None:
        """Poll the name servers now (thread-safe); members call it when a broker address failed."""
        if self._route_wakeup is None:
            return
        if self.in_loop_thread:
            self._route_wakeup.set()
        else:
            self.loop.call_soon_threadsafe(self._route_wakeup.set)

    def broker_addrs(self, *, slaves: bool = False) -> list[str]:
        """Addresses of every broker serving a topic some member uses: masters, and with ``slaves``
        their slaves too (RocketMQ heartbeats a broker group's slaves when the client has consumers)."""
        addrs: set[str] = set()
        for topic in self._all_topics():
            route = self.routes.get(topic)
            if route is None:
                continue
            for b in route.broker_datas:
                addrs.update(a for i, a in b.broker_addrs.items() if a and (slaves or i == MASTER_ID))
        return sorted(addrs)

    def master_addr(self, broker_name: str) -> str | None:
        for route in self.routes.values():
            addr = route.master_addr(broker_name)
            if addr:
                return addr
        return None

    # -- heartbeat ----------------------------------------------------------------------------

    def heartbeat_body(self) -> bytes:
        with self._members_lock:
            producers = sorted(self.producers)
            consumers = list(self.consumers.values())
        if consumers:
            producers = sorted({*producers, CLIENT_INNER_PRODUCER_GROUP})
        data = {
            "clientID": self.client_id,
            "consumerDataSet": [c.consumer_data() for c in consumers],
            "producerDataSet": [{"groupName": g} for g in producers],
        }
        return json.dumps(data, separators=(",", ":")).encode()

    async def send_heartbeat_to_all_brokers(self) -> int:
        """HEART_BEAT to every master of every used topic (and their slaves when a consumer runs);
        return how many answered."""
        with self._members_lock:
            has_consumers = bool(self.consumers)
        addrs = self.broker_addrs(slaves=has_consumers)
        if not addrs:
            return 0
        body = self.heartbeat_body()

        async def one(addr: str) -> bool:
            try:
                reply = await self.driver.invoke(Call(RequestCode.HEART_BEAT, body=body, addr=addr))
                return reply.code == ResponseCode.SUCCESS
            except RemotingError as exc:
                log.debug("heartbeat to %s failed: %s", addr, exc)
                return False

        return sum(await asyncio.gather(*(one(a) for a in addrs)))

    async def _heartbeat_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.heartbeat_broker_interval_s)
            await self.send_heartbeat_to_all_brokers()

    async def unregister_client(self, producer_group: str | None = None, consumer_group: str | None = None) -> None:
        """UNREGISTER_CLIENT on every broker of the used topics (a clean shutdown)."""
        ext = UnregisterClientRequestHeader(
            client_id=self.client_id, producer_group=producer_group or None, consumer_group=consumer_group or None
        ).encode()
        calls = [
            self.driver.invoke(Call(RequestCode.UNREGISTER_CLIENT, ext, addr=a)) for a in self.broker_addrs(slaves=True)
        ]
        for result in await asyncio.gather(*calls, return_exceptions=True):
            if isinstance(result, BaseException):
                log.debug("unregister of %s failed: %s", self.client_id, result)

    # -- rebalance and offsets ----------------------------------------------------------------

    def rebalance_immediately(self) -> None:
        """Wake the rebalance timer now (thread-safe)."""
        if self._wakeup is None:
            return
        if self.in_loop_thread:
            self._wakeup.set()
        else:
            self.loop.call_soon_threadsafe(self._wakeup.set)

    async def _rebalance_loop(self) -> None:
        assert self._wakeup is not None
        while True:
            try:
                await asyncio.wait_for(self._wakeup.wait(), self.config.rebalance_interval_s)
            except TimeoutError:
                pass
            self._wakeup.clear()
            await self.do_rebalance()

    async def do_rebalance(self) -> None:
        with self._members_lock:
            consumers = list(self.consumers.values())
        for consumer in consumers:
            try:
                await consumer.do_rebalance()
            except Exception:
                log.exception("rebalance of group %s failed", consumer.group)

    async def _persist_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.persist_consumer_offset_interval_s)
            with self._members_lock:
                consumers = list(self.consumers.values())
            for consumer in consumers:
                try:
                    await consumer.persist_offsets()
                except Exception:
                    log.exception("offset persistence of group %s failed", consumer.group)

    async def find_consumer_id_list(self, topic: str, group: str) -> list[str] | None:
        """GET_CONSUMER_LIST_BY_GROUP on the master and slaves of one broker name of ``topic`` at once,
        lists merged (the next name when none answers; None when no broker does). RocketMQ asks one
        broker, but a master just back knows only the clients that heartbeated it since, while its slave
        kept every consumer: a rebalance on the master's partial list gives a queue to two consumers,
        whose commits move its offset back and forth. A consumer that left unregisters from (or loses
        its connection to) every broker; a slave silent for SLAVE_LIST_TIMEOUT_S is left out."""
        route = self.routes.get(topic)
        datas = list(route.broker_datas) if route is not None else []
        random.shuffle(datas)
        for data in datas:
            short = SLAVE_LIST_TIMEOUT_S if data.broker_addrs.get(MASTER_ID) else None
            answers = await asyncio.gather(
                *(
                    self._consumer_ids(a, group, None if i == MASTER_ID else short)
                    for i, a in sorted(data.broker_addrs.items())
                    if a
                )
            )
            ids = {cid for answer in answers if answer for cid in answer}
            if ids:
                return sorted(ids)
        return None

    async def _consumer_ids(self, addr: str, group: str, timeout_s: float | None) -> list[str] | None:
        try:
            reply = await self.driver.invoke(
                Call(
                    RequestCode.GET_CONSUMER_LIST_BY_GROUP,
                    GetConsumerListByGroupRequestHeader(consumer_group=group).encode(),
                    addr=addr,
                    timeout_s=timeout_s,
                )
            )
        except RemotingError as exc:
            log.debug("consumer list of %s from %s failed: %s", group, addr, exc)
            return None
        if reply.code != ResponseCode.SUCCESS or not reply.body:
            return None
        ids = json_compat.loads(reply.body).get("consumerIdList")
        return [str(i) for i in ids] if ids else None

    async def reset_offset(self, topic: str, group: str, offset_table: dict[MessageQueue, int]) -> set[MessageQueue]:
        """MQClientInstance.resetOffset: reset the push consumer of ``group`` (a pull consumer is left alone,
        as Java leaves its lite pull consumer), then rebalance at once so its queues are pulled from there."""
        consumer = self.consumers.get(group)
        reset = getattr(consumer, "reset_offset", None)
        if consumer is None or reset is None or getattr(consumer, "consume_type", None) != "CONSUME_PASSIVELY":
            log.info("client %s: [reset-offset] no push consumer of group %s", self.client_id, group)
            return set()
        done: set[MessageQueue] = await reset(topic, offset_table)
        self.rebalance_immediately()
        return done
