"""BrokerController: wires the store, the config managers, the client registry, long polling,
the processors and the name-server registration together, and starts and stops them.

Before anything: the ACL (``acl/server_acl.py``): an ACL file is loaded, or a non-loopback listen
address without one refuses to start (unless ``acl_disabled``); every request then passes the
server's AclGuard first, and the broker signs its own requests (``acl/broker_credential.py``).

Start order: load topics/offsets/groups from ``<store_dir>/config``; listen (port 0 picks an
ephemeral port; until the store is open every request is answered SYSTEM_BUSY); open the store
with the advertised host using the real port (it is embedded in every record and message id);
register the processors; on a master, take back the offsets its slaves took while it was away
(``masterless_offsets.py``, also whenever a slave connects by HA); register with every name
server; start the timers (re-registration,
client expiry scan, consumer offset flush, stats sampling, delayed delivery, long-poll re-check).

Stop (idempotent): unregister from the name servers, answer parked pulls, stop listening,
write the config files, close the store (flush, checkpoint, remove the abort file).

The controller is the processors' ``BrokerContext`` (``broker_context.py``); they never import
this module. It holds the store through the ``MessageStore`` Protocol and builds the local
``DefaultMessageStore``. ``startup.py`` is the command line that runs one.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
import shutil
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from brokers.engine.acl.broker_credential import BrokerCredential
from brokers.engine.acl.server_acl import server_acl_guard
from brokers.engine.broker.broker_stats import BrokerStats
from brokers.engine.broker.client_manager import ClientManager
from brokers.engine.broker.config import BrokerConfig
from brokers.engine.broker.consumer_offset_manager import ConsumerOffsetManager
from brokers.engine.broker.group_member import LEARN_MASTER_INTERVAL_S, GroupMember
from brokers.engine.broker.masterless_offsets import takes_masterless_commits, take_masterless_offsets
from brokers.engine.broker.namesrv_api import BrokerIdentity, BrokerOuterAPI, RegisterResult
from brokers.engine.broker.config_push import GROUPS, TOPICS, ConfigPush
from brokers.engine.broker.processors.acl_admin import AclAdminProcessor
from brokers.engine.broker.processors.admin import AdminBrokerProcessor
from brokers.engine.broker.processors.admin_batch import GroupBatchProcessor
from brokers.engine.broker.processors.gantry_ext import GantryExtensionProcessor
from brokers.engine.broker.processors.client import ClientManageProcessor
from brokers.engine.broker.processors.offset import ConsumerOffsetProcessor
from brokers.engine.broker.processors.promote import PromoteSlaveProcessor
from brokers.engine.broker.pop.service import PopService
from brokers.engine.broker.processors.pop import PopMessageProcessor
from brokers.engine.broker.processors.pop_state import PopStateProcessor
from brokers.engine.broker.processors.pull import PullMessageProcessor
from brokers.engine.broker.processors.query import QueryMessageProcessor
from brokers.engine.broker.processors.send import SendMessageProcessor
from brokers.engine.broker.processors.store_admin import StoreAdminProcessor
from brokers.engine.broker.pull_request_hold_service import PullRequestHoldService
from brokers.engine.broker.rebalance_lock_manager import RebalanceLockManager
from brokers.engine.broker.schedule_message_service import ScheduleMessageService
from brokers.engine.broker.subscription_group_manager import SubscriptionGroupManager
from brokers.engine.broker.topic_config_manager import TopicConfigManager
from brokers.engine.common.cancellation import cancel_and_wait
from brokers.engine.common.clock import SYSTEM_CLOCK, Clock
from brokers.engine.common.constants import MQ_VERSION, MQ_VERSION_NAME
from brokers.engine.remoting.channel import ChannelContext
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.server import RemotingServer
from brokers.engine.store.file_io import OS_FILE_IO, FileIO, makedirs_private
from brokers.engine.store.message_store import MessageStore
from brokers.engine.store.retention import retention_properties

log = logging.getLogger("brokers.engine.broker")

STATS_SAMPLE_INTERVAL_S = 1.0
UNREGISTER_TIMEOUT_S = 2.0


class BrokerController:
    """One broker: its parts, their start and stop order, and the calls processors make back."""

    def __init__(self, config: BrokerConfig, clock: Clock = SYSTEM_CLOCK, file_io: FileIO = OS_FILE_IO) -> None:
        self.config = config
        self.clock = clock
        self.file_io = file_io  # every store and config file write goes through it (store/file_io.py)
        self.config_dir = Path(config.store.store_dir) / "config"
        self.acl_guard = server_acl_guard(
            host=config.listen_host,
            acl_file=config.acl_file,
            no_acl=config.acl_disabled,
            name=f"broker {config.broker_name}",
            clock=clock,
        )  # AclConfigError: do not start
        acl_source = (
            None if self.acl_guard is None else (self.acl_guard.reloader or self.acl_guard)
        )  # the file, re-read
        self.credential = BrokerCredential(
            access_key=config.acl_access_key, secret_key=config.acl_secret_key, acl_source=acl_source, clock=clock
        )
        if self.acl_guard is not None and self.credential.access_key is None:
            log.warning(
                "broker %s: the ACL file has no admin account and no --acl-access-key was given: "
                "requests to name servers and the master go unsigned",
                config.broker_name,
            )
        self.topic_config_manager = TopicConfigManager(config, self.config_dir, clock, file_io=file_io)
        self.consumer_offset_manager = ConsumerOffsetManager(self.config_dir, file_io=file_io)
        self.subscription_group_manager = SubscriptionGroupManager(
            self.config_dir,
            clock,
            auto_create=config.auto_create_subscription_group,
            max_groups=config.max_subscription_groups,
            flush_delay_s=config.config_flush_delay_s,
            file_io=file_io,
        )
        self.client_manager = ClientManager(
            clock, channel_expired_s=config.client_channel_expired_s, notify_enabled=self._notify_enabled
        )
        self.rebalance_lock_manager = RebalanceLockManager(clock, config.rebalance_lock_max_live_s)
        self.broker_stats = BrokerStats(clock)
        self.schedule_message_service: ScheduleMessageService | None = ScheduleMessageService(
            lambda: self.store, self.config_dir, clock, file_io=file_io
        )
        self.pull_message_processor = PullMessageProcessor(self)
        self.pull_request_hold_service = PullRequestHoldService(
            execute=self.pull_message_processor.execute_request_when_wakeup,
            max_offset=lambda topic, queue_id: self.store.get_max_offset_in_queue(topic, queue_id),
            check_interval_s=config.long_poll_check_interval_s,
        )
        self.config_push = ConfigPush()
        self.pop_service = PopService(self)  # POP state, its journal and timers (broker/pop/)
        self.outer_api = BrokerOuterAPI(
            config.namesrv_addrs, RemotingClient(name="broker-outer", signer=self.credential, tls=config.tls)
        )
        self.group_member = GroupMember(self, self.outer_api.client)
        self.grpc_endpoint = None  # the 5.x clients' port (brokers/engine/proxy), started when grpc_port is set
        if config.grpc_port is not None:
            from brokers.engine.proxy.endpoint import broker_endpoint  # grpc and the 5.x stubs load only when used

            self.grpc_endpoint = broker_endpoint(self)
        self._store: MessageStore | None = None
        self.server: RemotingServer | None = None
        self.last_register_results: list[RegisterResult] = []
        self._ready = False
        self._started = False
        self._stopped = False
        self._register_lock: asyncio.Lock | None = None
        self._timers: list[asyncio.Task[None]] = []
        self._background: set[asyncio.Task[None]] = set()

    # -- addresses ----------------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self.server is None:
            raise RuntimeError("broker not started")
        return self.server.port

    @property
    def addr(self) -> str:
        """The advertised address (brokerIP1:port) registered with the name servers."""
        return f"{self.config.advertised_ip}:{self.port}"

    @property
    def grpc_addr(self) -> str | None:
        """The 5.x gRPC endpoint's advertised address, None when it is off."""
        return self.grpc_endpoint.addr if self.grpc_endpoint is not None else None

    @property
    def identity(self) -> BrokerIdentity:
        return BrokerIdentity(
            self.config.cluster_name,
            self.config.broker_name,
            self.addr,
            self.config.broker_id,
            self.group_member.ha_server_addr(),
            self.group_member.epoch,
        )

    @property
    def store(self) -> MessageStore:
        """The store; open from ``start()`` until ``stop()`` (RuntimeError before start)."""
        if self._store is None:
            raise RuntimeError("broker not started")
        return self._store

    @property
    def ready(self) -> bool:
        return self._ready

    # -- lifecycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        if self._started:
            raise RuntimeError(f"broker {self.config.broker_name} already started")
        self._started = True
        self._register_lock = asyncio.Lock()
        makedirs_private(str(self.config_dir))
        self.topic_config_manager.load()
        self.consumer_offset_manager.load()
        self.subscription_group_manager.load()
        if self.schedule_message_service is not None:
            self.schedule_message_service.load()
        self.topic_config_manager.add_change_listener(lambda tc: self.request_register())
        self.topic_config_manager.delta_listeners.append(
            lambda before, after, update, delete: self.config_push.push(
                TOPICS, before, after, update=update, delete=delete
            )
        )
        self.subscription_group_manager.delta_listeners.append(
            lambda before, after, update, delete: self.config_push.push(
                GROUPS, before, after, update=update, delete=delete
            )
        )

        server = RemotingServer(
            self.config.listen_host,
            self.config.listen_port,
            name=self.config.broker_name,
            guard=self.acl_guard,
            limits=self.config.limits,
            tls=self.config.tls,
        )
        server.register_default_processor(self._default_processor)
        server.add_close_listener(self.client_manager.do_channel_close_event)
        self.server = server
        try:
            await server.start()
            store_config = dataclasses.replace(self.config.store, store_host=self.addr)
            self._store = self.group_member.build_store(store_config)
            self._store.open()
            self._store.add_arrival_listener(self.pull_request_hold_service.notify_message_arriving)
            for processor in (
                SendMessageProcessor(self),
                self.pull_message_processor,
                ConsumerOffsetProcessor(self),
                ClientManageProcessor(self),
                QueryMessageProcessor(self),
                AdminBrokerProcessor(self),
                GroupBatchProcessor(self),
                GantryExtensionProcessor(self),
                StoreAdminProcessor(self),
                PromoteSlaveProcessor(self, self.group_member),
                AclAdminProcessor(self, self.acl_guard),
                PopMessageProcessor(self, self.pop_service),
                PopStateProcessor(self, self.pop_service),
            ):
                processor.register(server)
            self.pull_request_hold_service.start()
            self.pop_service.start()
            self.consumer_offset_manager.masterless.is_masterless = lambda: takes_masterless_commits(self._store)
            await self.group_member.start(server)
            self._watch_slaves()
            if self.schedule_message_service is not None and not self.group_member.is_slave:
                self.schedule_message_service.start()  # a slave delivers no delayed messages (RocketMQ)
            self._ready = True
            if self.grpc_endpoint is not None:
                await self.grpc_endpoint.start()
            if not self.group_member.is_slave:  # before consumers can read this master's (maybe stale) offsets
                try:
                    await asyncio.wait_for(
                        take_masterless_offsets(self, self.outer_api.client, "master start", retries=0), 5.0
                    )
                except TimeoutError:
                    log.warning(
                        "the slaves' masterless offsets were not read within 5 s of the start; "
                        "they are taken when a slave connects by HA"
                    )
            await self.register_broker_all()
        except BaseException:
            await self._shutdown(unregister=False)
            raise
        cfg = self.config
        self._timers = [
            self._every(cfg.register_interval_s, self.register_broker_all, "register broker"),
            self._every(cfg.scan_client_interval_s, self.client_manager.scan_not_active_channel, "client expiry scan"),
            self._every(
                cfg.consumer_offset_flush_interval_s, self.consumer_offset_manager.persist, "consumer offset flush"
            ),
            self._every(cfg.consumer_offset_flush_interval_s, self._retry_config_writes, "config file retry"),
            self._every(STATS_SAMPLE_INTERVAL_S, self.broker_stats.sample, "stats sampling"),
            self._every(LEARN_MASTER_INTERVAL_S, self.group_member.tick, "broker group"),
        ]
        log.info(
            "broker %s (cluster %s, %s, brokerId %d) started at %s, store %s",
            cfg.broker_name,
            cfg.cluster_name,
            cfg.broker_role,
            cfg.broker_id,
            self.addr,
            cfg.store.store_dir,
        )

    async def stop(self) -> None:
        """Shut down cleanly; calling it again (or before start) does nothing."""
        if not self._started or self._stopped:
            return
        await self._shutdown(unregister=True)

    async def _shutdown(self, *, unregister: bool) -> None:
        self._stopped = True
        await cancel_and_wait(self._timers)
        self._timers = []
        await cancel_and_wait(list(self._background))  # re-registrations in flight must not follow the unregister
        if unregister and self._ready and self.config.namesrv_addrs:
            try:
                await asyncio.wait_for(
                    self.outer_api.unregister_broker_all(self.identity, timeout_s=UNREGISTER_TIMEOUT_S),
                    UNREGISTER_TIMEOUT_S + 1,
                )
            except Exception as exc:
                log.warning("unregistering from the name servers failed: %s", exc)
        if self._ready:
            await self.pull_request_hold_service.stop()
            await self.pop_service.stop()
        if self.schedule_message_service is not None:
            await self.schedule_message_service.stop()
        self._ready = False
        if self.grpc_endpoint is not None:
            await self.grpc_endpoint.stop()
        if self.server is not None:
            await self.server.stop()
        await self.client_manager.drain()
        await self.subscription_group_manager.flusher.wait_idle()  # a write in its thread ends first
        for what, persist in (
            ("consumer offsets", lambda: self.consumer_offset_manager.persist(force=True)),
            ("topics", self.topic_config_manager.persist),
            ("subscription groups", self.subscription_group_manager.persist),
        ):
            try:
                persist()
            except OSError as exc:
                log.error("writing %s at stop failed: %s", what, exc)
        await self.group_member.stop()
        if self._store is not None:
            self._store.close()
        await self.outer_api.close()
        log.info("broker %s stopped", self.config.broker_name)

    def _retry_config_writes(self) -> None:
        """Write topics.json and subscriptionGroup.json again if a write failed (a full disk)."""
        self.topic_config_manager.retry_persist()
        self.subscription_group_manager.flusher.retry()

    def _every(self, interval_s: float, fn: Callable[[], object], name: str) -> asyncio.Task[None]:
        async def loop() -> None:
            while True:
                await asyncio.sleep(interval_s)
                try:
                    result = fn()
                    if inspect.isawaitable(result):
                        await result
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("%s failed", name)

        return asyncio.get_running_loop().create_task(loop(), name=f"{self.config.broker_name} {name}")

    # -- name servers -------------------------------------------------------------------------

    async def register_broker_all(self, *, oneway: bool = False) -> list[RegisterResult]:
        """Register (topics included) with every name server; one at a time per broker."""
        if not self.config.namesrv_addrs or self.server is None or self._register_lock is None or self._stopped:
            return []
        async with self._register_lock:
            wrapper = self.topic_config_manager.build_serialize_wrapper()
            results = await self.outer_api.register_broker_all(
                self.identity, wrapper, timeout_s=self.config.register_timeout_s, oneway=oneway
            )
        self.last_register_results = results
        self.group_member.learn_from(results)
        return results

    def request_register(self) -> None:
        """Re-register soon (after a topic change), without waiting for it."""
        if not self._ready or self._stopped:
            return
        self._spawn(self.register_broker_all())

    def _watch_slaves(self) -> None:
        """On a master: each slave that connects by HA is asked for the offsets it took while masterless."""
        ha_service = getattr(self._store, "ha_service", None)
        if ha_service is not None:
            ha_service.on_slave_connected = lambda peer: self._spawn(
                take_masterless_offsets(self, self.outer_api.client, f"slave {peer} connected by HA")
            )

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- helpers for processors ---------------------------------------------------------------

    def _notify_enabled(self, group: str) -> bool:
        if not self.config.notify_consumer_ids_changed_enable:
            return False
        cfg = self.subscription_group_manager.subscription_group_table.get(group)
        return cfg is None or cfg.notify_consumer_ids_changed_enable

    async def _default_processor(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        if not self._ready:
            return request.response(
                ResponseCode.SYSTEM_BUSY,
                f"[STARTING] broker {self.config.broker_name} is not ready yet, try again shortly",
            )
        return request.response(ResponseCode.REQUEST_CODE_NOT_SUPPORTED, f" request type {request.code} not supported")

    def runtime_info(self) -> dict[str, str]:
        """The KVTable of GET_BROKER_RUNTIME_INFO (§4.12)."""
        table = {
            "brokerVersionDesc": MQ_VERSION_NAME,
            "brokerVersion": str(MQ_VERSION),
            "sendThreadPoolQueueSize": "0",
            "sendThreadPoolQueueCapacity": "10000",
            "pullThreadPoolQueueSize": "0",
            "pullThreadPoolQueueCapacity": "100000",
            "queryThreadPoolQueueSize": "0",
            "queryThreadPoolQueueCapacity": "20000",
            "EndTransactionQueueSize": "0",
            "EndTransactionThreadPoolQueueCapacity": "100000",
            "dispatchBehindBytes": "0",
            "pageCacheLockTimeMills": "0",
            "sendThreadPoolQueueHeadWaitTimeMills": "0",
            "pullThreadPoolQueueHeadWaitTimeMills": "0",
            "queryThreadPoolQueueHeadWaitTimeMills": "0",
            "startAcceptSendRequestTimeStamp": "0",
            "remainTransientStoreBufferNumbs": "0",
            "remainHowManyDataToCommit": "0",
            "remainHowManyDataToFlush": "0",
        }
        table.update(_disk_figures(self.config.store.store_dir))
        stats = self.broker_stats.runtime_info()
        table.update(stats)
        if self._store is not None:
            try:
                table.update({k: str(v) for k, v in self._store.runtime_info().items()})
            except Exception as exc:
                log.warning("store runtime info failed: %s", exc)
        for key in [k for k in stats if k.startswith(("msgPutTotal", "msgGetTotal"))] + ["bootTimestamp"]:
            table[key] = stats[key]  # the broker counts these; the store's figures are its own
        table.setdefault("earliestMessageTimeStamp", "0")
        return table

    def config_properties(self) -> dict[str, str]:
        """Broker and store settings under RocketMQ's property names (GET_BROKER_CONFIG)."""
        cfg, store = self.config, self.config.store
        return {
            "brokerName": cfg.broker_name,
            "brokerClusterName": cfg.cluster_name,
            "brokerId": str(cfg.broker_id),
            "brokerRole": cfg.broker_role,  # RocketMQ's MessageStoreConfig.brokerRole; what a promotion changes
            "brokerIP1": cfg.advertised_ip,
            "listenPort": str(self.port if self.server else cfg.listen_port),
            "namesrvAddr": ";".join(cfg.namesrv_addrs),
            "brokerPermission": str(cfg.broker_permission),
            "autoCreateTopicEnable": str(cfg.auto_create_topic_enable).lower(),
            "autoCreateSubscriptionGroup": str(cfg.auto_create_subscription_group).lower(),
            "defaultTopicQueueNums": str(cfg.default_topic_queue_nums),
            "longPollingEnable": str(cfg.long_polling_enable).lower(),
            "enablePropertyFilter": str(cfg.enable_property_filter).lower(),
            "enableMixedMessageType": str(cfg.enable_mixed_message_type).lower(),
            "shortPollingTimeMills": str(cfg.short_polling_ms),
            "notifyConsumerIdsChangedEnable": str(cfg.notify_consumer_ids_changed_enable).lower(),
            "registerNameServerPeriod": str(int(cfg.register_interval_s * 1000)),
            "registerBrokerTimeoutMills": str(int(cfg.register_timeout_s * 1000)),
            "flushConsumerOffsetInterval": str(int(cfg.consumer_offset_flush_interval_s * 1000)),
            "channelNotActiveInterval": str(int(cfg.client_channel_expired_s * 1000)),
            "regionId": cfg.region_id,
            "traceOn": str(cfg.trace_on).lower(),
            "traceTopicEnable": str(cfg.trace_topic_enable).lower(),
            "msgTraceTopicName": cfg.msg_trace_topic_name,
            "storePathRootDir": store.store_dir,
            "flushDiskType": store.flush_disk_type,
            "mappedFileSizeCommitLog": str(store.commitlog_file_size),
            "maxMessageSize": str(cfg.max_message_size),
            **retention_properties(store),
        }


def _disk_figures(path: str) -> dict[str, str]:
    try:
        usage = shutil.disk_usage(path)
    except OSError:
        return {"commitLogDiskRatio": "0.0", "commitLogDirCapacity": "Total : 0 GiB, Free : 0 GiB."}
    gib = 1 << 30
    return {
        "commitLogDiskRatio": f"{usage.used / usage.total if usage.total else 0.0}",
        "consumeQueueDiskRatio": f"{usage.used / usage.total if usage.total else 0.0}",
        "commitLogDirCapacity": f"Total : {usage.total / gib:.2f} GiB, Free : {usage.free / gib:.2f} GiB.",
    }
