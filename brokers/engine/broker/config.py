"""BrokerConfig: everything a broker needs to know at start, frozen.

Built from command-line flags (``python -m brokers.engine broker ...``) or from the console's
``MQ`` settings dict (:meth:`BrokerConfig.from_dict`). Defaults are RocketMQ 4.9.x's
``BrokerConfig`` values unless a comment says otherwise.
"""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from brokers.engine.common.constants import DEFAULT_BROKER_PORT, DEFAULT_CLUSTER, MAX_MESSAGE_SIZE
from brokers.engine.common.namesrv_addr import parse_namesrv_addrs
from brokers.engine.common.perm import PERM_MAX, PERM_MIN, PERM_RW, is_valid_perm
from brokers.engine.common.subscription import SubscriptionLimits
from brokers.engine.common.topic_validator import InvalidNameError, validate_broker_name
from brokers.engine.remoting.limits import DEFAULT_LIMITS, LIMIT_FIELDS, ConnectionLimits
from brokers.engine.remoting.tls import TlsConfig
from brokers.engine.store.config import StoreConfig
from brokers.engine.store.ha.ha_config import BROKER_ROLES, MASTER_ROLES, SLAVE, HAConfig


class BrokerConfigError(ValueError):
    """A broker setting is out of range or malformed; the message names the setting."""


def _guess_local_ip() -> str:
    """Pick an address other hosts can reach, the way RocketMQ picks its default brokerIP1."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))  # no packet is sent; this only selects a route
            addr: str = s.getsockname()[0]
            return addr
    except OSError:
        return "127.0.0.1"


@dataclass(frozen=True, kw_only=True)
class BrokerConfig:
    broker_name: str
    store: StoreConfig
    cluster_name: str = DEFAULT_CLUSTER
    broker_id: int = 0  # 0 = master, >= 1 = a slave of the master of the same broker name
    listen_host: str = "127.0.0.1"
    listen_port: int = DEFAULT_BROKER_PORT  # 0 = ephemeral (tests)
    broker_ip: str | None = None  # advertised address (RocketMQ brokerIP1); default: listen_host
    namesrv_addrs: tuple[str, ...] = ()
    register_interval_s: float = 30.0  # registerNameServerPeriod
    register_timeout_s: float = 6.0  # registerBrokerTimeoutMills
    # Off by default, unlike RocketMQ: topics are created on purpose (console/admin), and a
    # typo in a producer's topic should fail loudly. Turning it on creates TBW102 (perm 7).
    auto_create_topic_enable: bool = False
    auto_create_subscription_group: bool = True
    default_topic_queue_nums: int = 8  # TBW102's queue count
    client_channel_expired_s: float = 120.0  # a client silent this long is dropped
    scan_client_interval_s: float = 10.0
    long_polling_enable: bool = True
    # enablePropertyFilter: serve SQL92 subscriptions (MessageSelector.bySql), filtering each pull by
    # the messages' properties (brokers/engine/filter). Off by default, as in RocketMQ: on, a SQL92
    # pull reads every candidate record's properties from the commit log. Off, a SQL92 subscription
    # is refused at CHECK_CLIENT_CONFIG and at every pull.
    enable_property_filter: bool = False
    # enableMixedMessageType: may a topic's message.type attribute be MIXED (any type of message)?
    # Off by default, as in RocketMQ 5: UPDATE_AND_CREATE_TOPIC refuses +message.type=MIXED.
    enable_mixed_message_type: bool = False
    short_polling_ms: int = 1000  # hold time when long polling is off
    long_poll_check_interval_s: float = 5.0  # re-check of parked pulls
    # Clients time a pull out at 30 s; a parked pull is answered by this hold at the latest.
    max_suspend_ms: int = 20_000
    consumer_offset_flush_interval_s: float = 5.0
    notify_consumer_ids_changed_enable: bool = True
    max_message_size: int = MAX_MESSAGE_SIZE
    broker_permission: int = PERM_RW
    region_id: str = "DefaultRegion"  # MSG_REGION in send responses
    trace_on: bool = True  # TRACE_ON in send responses
    # traceTopicEnable: create the trace topic at start. RocketMQ's default is false, but there topics are
    # auto-created; Gantry's auto-create is off, so without this no client's trace could be written.
    trace_topic_enable: bool = True
    msg_trace_topic_name: str = "RMQ_SYS_TRACE_TOPIC"  # msgTraceTopicName
    rebalance_lock_max_live_s: float = 60.0  # rocketmq.broker.rebalance.lockMaxLiveTime
    client_forward_timeout_s: float = 10.0  # GET_CONSUMER_RUNNING_INFO / CONSUME_MESSAGE_DIRECTLY
    # --- the broker group (RocketMQ's MessageStoreConfig HA settings; store/ha/) ---
    broker_role: str = "ASYNC_MASTER"  # brokerRole: ASYNC_MASTER | SYNC_MASTER | SLAVE
    ha_listen_port: int | None = None  # haListenPort; None = listen port + 1 (0 with port 0)
    ha_master_address: str | None = None  # a slave's master HA host:port; None = from the name servers
    ha_send_heartbeat_interval_ms: int = 5000  # haSendHeartbeatInterval
    ha_transfer_batch_size: int = 256 * 1024  # haTransferBatchSize (RocketMQ: 32 KiB, see ha_config.py)
    ha_slave_fallbehind_max: int = 256 << 20  # haSlaveFallbehindMax
    ha_housekeeping_interval_ms: int = 20_000  # haHousekeepingInterval
    # slaveReadEnable: RocketMQ's default is false (slaves answer pulls PULL_RETRY_IMMEDIATELY
    # and send consumers to the master); Gantry's slaves serve reads, the point of a slave here.
    slave_read_enable: bool = True
    access_message_in_memory_max_ratio: int = 40  # accessMessageInMemoryMaxRatio (% of RAM)
    slave_synchronize_interval_s: float = 10.0  # SlaveSynchronize: topics, groups, offsets
    # --- the ACL (acl/server_acl.py, acl/broker_credential.py) ---
    acl_file: str | None = None  # plain_acl.yml; None: off on loopback, refused elsewhere unless acl_disabled
    acl_disabled: bool = False  # --no-acl: listen on a non-loopback address with no ACL (logged as a warning)
    acl_access_key: str | None = None  # what the broker signs with; None: the ACL file's first admin account
    acl_secret_key: str | None = field(default=None, repr=False)
    # --- limits on the port (docs/security.md); the connection ones are documented in remoting/limits.py ---
    limits: ConnectionLimits = DEFAULT_LIMITS
    # Tags in one TAG subscription, and the expression's length: real subscriptions name a
    # handful; 1024 keeps parsing a pull's or heartbeat's subscription to about a millisecond.
    max_subscription_tags: int = 1024
    max_subscription_expression_length: int = 64 * 1024
    # Tags of all subscriptions of one heartbeat: parsing them stays ~10 ms (a client with 16
    # groups x 8 topics of 64 tags fits).
    max_heartbeat_tags: int = 16_384
    # A heartbeat's body, and the groups and subscriptions it names (counted before any is read):
    # clients send a few KiB naming a few groups; at these caps one heartbeat costs the broker
    # ~10 ms, where one naming 200,000 producer groups (5 MB) stalled it for 3 s.
    max_heartbeat_bytes: int = 1024 * 1024
    max_heartbeat_groups: int = 1_000  # producer groups, and consumer groups, each
    max_heartbeat_subscriptions: int = 10_000  # of all its consumer groups together
    # Queues one LOCK_BATCH_MQ / UNLOCK_BATCH_MQ names: an orderly consumer's queues on one broker.
    max_lock_batch_queues: int = 10_000
    # Bytes of records in one QUERY_MESSAGE answer (RocketMQ caps only the count, 64 x 4 MiB).
    max_query_message_bytes: int = 4 * 1024 * 1024
    # Groups one heartbeat may auto-create, and groups in all (auto-created ones stop there;
    # groups created by the admin protocol are not limited).
    max_auto_create_groups_per_heartbeat: int = 16
    max_subscription_groups: int = 10_000
    # Config file writes (subscription groups) are coalesced over this delay and run in a
    # thread; each still ends in an atomic, fsynced file.
    config_flush_delay_s: float = 0.1
    # --- POP (RocketMQ 5's message-level consumption, broker/pop/): deliveries in flight (popped, not
    # acked) per group, so a group that never acks cannot grow the journal and memory without bound;
    # the invisibleTime a POP or CHANGE_MESSAGE_INVISIBLETIME may ask (Apache's proxy allows up to 12 h);
    # parked pops (Apache's maxPopPollingSize is 100,000 per queue; one cap per broker here);
    # the journal's size that triggers its compaction, and its fsync interval under ASYNC_FLUSH.
    pop_max_inflight_per_group: int = 100_000
    pop_min_invisible_ms: int = 1_000
    pop_max_invisible_ms: int = 12 * 3600 * 1000
    pop_max_polling: int = 10_000
    pop_journal_compact_bytes: int = 16 << 20
    pop_journal_flush_interval_ms: int = 200
    # --- TLS (remoting/tls.py): the remoting and HA ports per tls.mode; connections to name servers
    # and the master speak TLS when tls.outgoing (by default in enforcing mode). None: plain TCP.
    tls: TlsConfig | None = None
    # --- the 5.x gRPC endpoint (brokers/engine/proxy): None = off, 0 = an ephemeral port; it listens on
    # listen_host, speaks TLS whenever the remoting port offers it, and checks the same ACL.
    grpc_port: int | None = None
    grpc_max_clients: int = 10_000  # 5.x client ids served at once; a newcomer past it is refused
    grpc_max_concurrent_rpcs: int = 4_096  # calls in progress on the port (long polls included)
    # bytes of request messages read at once (proxy/intake.py): this / the request cap = read slots
    grpc_request_budget: int = 128 << 20

    def __post_init__(self) -> None:
        for kind, name in (("broker", self.broker_name), ("cluster", self.cluster_name)):
            try:
                validate_broker_name(name, kind)
            except InvalidNameError as exc:
                raise BrokerConfigError(str(exc)) from None
        if not isinstance(self.store, StoreConfig):
            raise BrokerConfigError("store must be a StoreConfig")
        if not 0 <= self.listen_port <= 65535:
            raise BrokerConfigError(f"listen port {self.listen_port} is outside 0..65535")
        if self.broker_id < 0:
            raise BrokerConfigError(f"broker id {self.broker_id} is negative")
        if not 1 <= self.default_topic_queue_nums <= 1024:
            raise BrokerConfigError("default_topic_queue_nums must be within 1..1024")
        if not is_valid_perm(self.broker_permission):
            raise BrokerConfigError(f"broker_permission must be within {PERM_MIN}..{PERM_MAX}")
        if self.max_message_size <= 0:
            raise BrokerConfigError("max_message_size must be positive")
        for name in (
            "max_subscription_tags",
            "max_subscription_expression_length",
            "max_heartbeat_tags",
            "max_query_message_bytes",
            "max_auto_create_groups_per_heartbeat",
            "max_subscription_groups",
            "max_heartbeat_bytes",
            "max_heartbeat_groups",
            "max_heartbeat_subscriptions",
            "max_lock_batch_queues",
            "pop_max_inflight_per_group",
            "pop_min_invisible_ms",
            "pop_max_polling",
            "pop_journal_compact_bytes",
            "pop_journal_flush_interval_ms",
        ):
            if getattr(self, name) < 1:
                raise BrokerConfigError(f"{name} must be at least 1")
        if self.pop_max_invisible_ms < self.pop_min_invisible_ms:
            raise BrokerConfigError("pop_max_invisible_ms must not be below pop_min_invisible_ms")
        if self.config_flush_delay_s < 0:
            raise BrokerConfigError("config_flush_delay_s must not be negative")
        if not isinstance(self.limits, ConnectionLimits):
            raise BrokerConfigError("limits must be a ConnectionLimits")
        for name in (
            "register_interval_s",
            "register_timeout_s",
            "client_channel_expired_s",
            "scan_client_interval_s",
            "long_poll_check_interval_s",
            "consumer_offset_flush_interval_s",
            "rebalance_lock_max_live_s",
        ):
            if getattr(self, name) <= 0:
                raise BrokerConfigError(f"{name} must be positive")
        try:
            object.__setattr__(self, "namesrv_addrs", parse_namesrv_addrs(self.namesrv_addrs, required=False))
        except ValueError as exc:
            raise BrokerConfigError(str(exc)) from None
        self._check_group_role()

    def _check_group_role(self) -> None:
        if self.broker_role not in BROKER_ROLES:
            raise BrokerConfigError(f"broker_role must be one of {', '.join(BROKER_ROLES)}, got {self.broker_role!r}")
        if self.broker_role == SLAVE and self.broker_id < 1:
            raise BrokerConfigError(f"broker_id must be >= 1 for broker_role SLAVE, got {self.broker_id}")
        if self.broker_role in MASTER_ROLES and self.broker_id != 0:
            raise BrokerConfigError(
                f"broker_id must be 0 for broker_role {self.broker_role}, got {self.broker_id} "
                "(a broker with id >= 1 is a slave: broker_role SLAVE)"
            )
        if self.ha_listen_port is not None and not 0 <= self.ha_listen_port <= 65535:
            raise BrokerConfigError(f"ha_listen_port {self.ha_listen_port} is outside 0..65535")
        if self.ha_listen_port is None and self.listen_port == 65535:
            raise BrokerConfigError("ha_listen_port: the listen port + 1 is past 65535; set ha_listen_port")
        if not self.slave_synchronize_interval_s > 0:
            raise BrokerConfigError("slave_synchronize_interval_s must be positive")
        try:
            self.ha_config()
        except ValueError as exc:
            raise BrokerConfigError(str(exc)) from None

    @property
    def effective_ha_listen_port(self) -> int:
        """haListenPort: as set, else the listen port + 1 (RocketMQ's default); 0 (ephemeral) with port 0."""
        if self.ha_listen_port is not None:
            return self.ha_listen_port
        return self.listen_port + 1 if self.listen_port else 0

    def ha_config(self) -> HAConfig:
        """The store's HA settings (store/ha/ha_config.py) from these broker settings."""
        return HAConfig(
            broker_role=self.broker_role,
            listen_host=self.listen_host,
            listen_port=self.effective_ha_listen_port,
            master_address=self.ha_master_address or None,
            sync_timeout_ms=self.store.sync_flush_timeout_ms,
            heartbeat_interval_ms=self.ha_send_heartbeat_interval_ms,
            transfer_batch_size=self.ha_transfer_batch_size,
            slave_fallbehind_max=self.ha_slave_fallbehind_max,
            housekeeping_interval_ms=self.ha_housekeeping_interval_ms,
            access_message_in_memory_max_ratio=self.access_message_in_memory_max_ratio,
            tls=self.tls,
        )

    @property
    def subscription_limits(self) -> SubscriptionLimits:
        """The caps a pull's or heartbeat's subscription is parsed under."""
        return SubscriptionLimits(self.max_subscription_tags, self.max_subscription_expression_length)

    @property
    def advertised_ip(self) -> str:
        """The IP clients and name servers are told (brokerIP1)."""
        if self.broker_ip:
            return self.broker_ip
        if self.listen_host in ("", "0.0.0.0", "::"):
            return _guess_local_ip()
        return self.listen_host

    def with_changes(self, **changes: Any) -> BrokerConfig:
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BrokerConfig:
        """Build from a settings dict with snake_case keys.

        ``store`` may be a StoreConfig or a dict of StoreConfig fields; ``store_dir``,
        ``flush_disk_type`` and ``commitlog_file_size`` at the top level are accepted as a
        shorthand. ``namesrv_addrs`` (or ``namesrv_addr``) may be a ``;``-separated string.
        ``limits`` may be a ConnectionLimits or a dict of its fields, which are also accepted at
        the top level (``max_connections``, ``frame_receive_deadline_s``, ...).
        """
        data = dict(data)
        limits = data.pop("limits", DEFAULT_LIMITS)
        limit_kwargs = dict(limits) if isinstance(limits, Mapping) else {}
        limit_kwargs.update({key: data.pop(key) for key in list(data) if key in LIMIT_FIELDS})
        try:
            base = limits if isinstance(limits, ConnectionLimits) else DEFAULT_LIMITS
            data["limits"] = dataclasses.replace(base, **limit_kwargs) if limit_kwargs else base
        except (TypeError, ValueError) as exc:
            raise BrokerConfigError(f"limits: {exc}") from None
        names = {f.name for f in dataclasses.fields(cls)}
        store = data.pop("store", None)
        store_fields = {f.name for f in dataclasses.fields(StoreConfig)}
        store_kwargs: dict[str, Any] = {}
        if isinstance(store, Mapping):
            store_kwargs.update(store)
        for key in list(data):
            if key in store_fields and key not in names:
                store_kwargs[key] = data.pop(key)
        if "namesrv_addr" in data and "namesrv_addrs" not in data:
            data["namesrv_addrs"] = data.pop("namesrv_addr")
        unknown = set(data) - names
        if unknown:
            raise BrokerConfigError(f"unknown broker settings: {', '.join(sorted(unknown))}")
        if isinstance(store, StoreConfig):
            store_config = dataclasses.replace(store, **store_kwargs) if store_kwargs else store
        else:
            if "store_dir" not in store_kwargs:
                raise BrokerConfigError("store_dir is required")
            store_kwargs.setdefault("max_message_size", data.get("max_message_size", MAX_MESSAGE_SIZE))
            store_config = StoreConfig(**store_kwargs)
        return cls(store=store_config, **data)
