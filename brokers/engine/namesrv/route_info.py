"""RouteInfoManager: the name server's tables of clusters, brokers, topics and broker liveness.

Pure data, no I/O.  The tables are RocketMQ's:

- ``topic_queue_table``: topic -> broker name -> QueueData (queue numbers, perm, sys flag);
- ``broker_addr_table``: broker name -> BrokerData (cluster, broker id -> address);
- ``cluster_addr_table``: cluster name -> set of broker names;
- ``broker_live_table``: broker address -> BrokerLiveInfo (last registration time on the
  monotonic clock, the topic configs' DataVersion, the connection it registered on, HA address);
- ``filter_server_table``: broker address -> filter server addresses (kept, never used).

Topic configs are taken only from the master's (broker id 0) registration, and only when its
DataVersion differs from the one last registered from that address or the registration is the
broker's first (RocketMQ's ``isBrokerTopicConfigChanged``).  A re-registration never removes a
topic; topics go away by DELETE_TOPIC_IN_NAMESRV, unregistration, expiry, or the broker's
connection closing.

Group epochs (Gantry; promotion with fencing, docs/broker-group-promotion.md):
``broker_epoch_table`` keeps the highest ``gantryEpoch`` a master (broker id 0) of a broker name
registered with (a slave's epoch proves no newer master, so it sets nothing). A registration as
broker id 0 with a lower epoch is refused and changes nothing (a stale master: a newer one was
promoted); one with a higher epoch replaces the master. Epoch 0 is what a RocketMQ 4.x broker
(no ``gantryEpoch`` field) registers with, so such groups behave exactly as before. The table
lives in memory only: a restarted name server learns the epochs again from the registrations
(until the new master's next one, it may accept an old master; that master is refused at its
next registration and steps down then). Gantry also refuses a claim on an id that a live
registration from another connection holds at another address (``broker_claims.py``): the
last registration does not simply win, as it does in RocketMQ 4.x.

Thread safety: the name server calls every method from its event-loop thread; each method also
holds one ``threading.Lock`` for its whole (non-blocking) body, so tests and tools may call it
from other threads too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from typing import Any

from brokers.engine.common.constants import MASTER_ID
from brokers.engine.common.perm import PERM_READ, PERM_WRITE
from brokers.engine.common.route import BrokerData, QueueData
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.namesrv.broker_claims import live_holder_refusal, stale_epoch_refusal

BROKER_CHANNEL_EXPIRED_S = 120.0  # RocketMQ BROKER_CHANNEL_EXPIRED_TIME: 4 missed 30 s registrations


@dataclass(slots=True)
class BrokerLiveInfo:
    last_update_monotonic: float
    data_version: dict[str, Any] | None
    channel_key: Hashable | None
    ha_server_addr: str = ""
    remote_addr: str = ""  # the peer address of the connection the registration came over


@dataclass(frozen=True, slots=True)
class RegisterBrokerResult:
    """What REGISTER_BROKER answers: the master's address and HA address (slaves only)."""

    master_addr: str = ""
    ha_server_addr: str = ""
    refused: str = ""  # non-empty: the registration was refused (a stale epoch) and changed nothing
    epoch: int = 0  # the broker name's highest group epoch known here
    next_slave_id: int = 0  # with a refusal: 1 + the highest broker id of the group (where to rejoin)


@dataclass(frozen=True, slots=True)
class RemovedBroker:
    """A broker address dropped by expiry or connection loss."""

    broker_addr: str
    channel_key: Hashable | None


class RouteInfoManager:
    """The route tables; see the module docstring for what each holds."""

    def __init__(self, broker_channel_expired_s: float = BROKER_CHANNEL_EXPIRED_S) -> None:
        self.broker_channel_expired_s = broker_channel_expired_s
        self._lock = threading.Lock()
        self.topic_queue_table: dict[str, dict[str, QueueData]] = {}
        self.broker_addr_table: dict[str, BrokerData] = {}
        self.cluster_addr_table: dict[str, set[str]] = {}
        self.broker_live_table: dict[str, BrokerLiveInfo] = {}
        self.filter_server_table: dict[str, list[str]] = {}
        self.broker_epoch_table: dict[str, int] = {}

    # -- registration --------------------------------------------------------------------------

    def register_broker(
        self,
        cluster_name: str,
        broker_addr: str,
        broker_name: str,
        broker_id: int,
        ha_server_addr: str,
        topic_config_wrapper: dict[str, Any] | None,
        channel_key: Hashable | None,
        now: float,
        filter_server_list: list[str] | None = None,
        remote_addr: str = "",
        epoch: int = 0,
    ) -> RegisterBrokerResult:
        """Record a broker's (re-)registration at monotonic time ``now``.

        ``topic_config_wrapper`` is the TopicConfigSerializeWrapper JSON form
        (``{"topicConfigTable": {topic: TopicConfig JSON}, "dataVersion": {...}}``) or None.
        """
        data_version = None
        configs: list[TopicConfig] = []
        if topic_config_wrapper is not None:  # parse everything before touching the tables
            data_version = topic_config_wrapper.get("dataVersion")
            configs = [_as_topic_config(c) for c in (topic_config_wrapper.get("topicConfigTable") or {}).values()]
        with self._lock:
            highest = self.broker_epoch_table.get(broker_name, 0)
            held = self.broker_addr_table.get(broker_name)
            addrs = dict(held.broker_addrs) if held is not None else {}
            live, registered = (lambda addr: self._live(addr, now)), self.broker_live_table.get
            refused = stale_epoch_refusal(
                broker_name, broker_addr, broker_id, epoch, highest, addrs, live, registered
            ) or live_holder_refusal(
                broker_name, broker_addr, broker_id, epoch, highest, addrs, live, registered, channel_key
            )
            if refused is not None:
                return RegisterBrokerResult(
                    refused.master_addr, refused.ha_server_addr, refused.why, highest, refused.next_slave_id
                )
            if broker_id == MASTER_ID and epoch > highest:  # only a master's registration sets the epoch
                highest = self.broker_epoch_table[broker_name] = epoch
            self.cluster_addr_table.setdefault(cluster_name, set()).add(broker_name)
            broker_data = self.broker_addr_table.get(broker_name)
            register_first = broker_data is None
            if broker_data is None:
                broker_data = BrokerData(cluster_name, broker_name)
                self.broker_addr_table[broker_name] = broker_data
            # One address has one id: a slave switched to master is re-keyed, not duplicated.
            for other_id in [i for i, a in broker_data.broker_addrs.items() if a == broker_addr and i != broker_id]:
                del broker_data.broker_addrs[other_id]
            old_addr = broker_data.broker_addrs.get(broker_id)
            broker_data.broker_addrs[broker_id] = broker_addr
            register_first = register_first or old_addr is None

            if topic_config_wrapper is not None and broker_id == MASTER_ID:
                if register_first or self._topic_config_changed(broker_addr, data_version):
                    for config in configs:
                        self._create_and_update_queue_data(broker_name, config)

            self.broker_live_table[broker_addr] = BrokerLiveInfo(
                now, data_version, channel_key, ha_server_addr, remote_addr
            )
            if filter_server_list:
                self.filter_server_table[broker_addr] = list(filter_server_list)
            else:
                self.filter_server_table.pop(broker_addr, None)

            if broker_id != MASTER_ID:
                master_addr = broker_data.broker_addrs.get(MASTER_ID)
                if master_addr:
                    master_live = self.broker_live_table.get(master_addr)
                    return RegisterBrokerResult(
                        master_addr, master_live.ha_server_addr if master_live else "", epoch=highest
                    )
            return RegisterBrokerResult(epoch=highest)

    def _live(self, broker_addr: str, now: float) -> BrokerLiveInfo | None:
        """The live registration at ``broker_addr`` (its connection open, not expired), else None."""
        live = self.broker_live_table.get(broker_addr)
        if live is None or now - live.last_update_monotonic > self.broker_channel_expired_s:
            return None
        return live

    def registration_at(self, broker_addr: str) -> BrokerLiveInfo | None:
        """A copy of the registration holding ``broker_addr`` (live, or expired but not yet scanned), else None."""
        with self._lock:
            held = self.broker_live_table.get(broker_addr)
            return replace(held) if held is not None else None

    def registration_channels_of(self, broker_name: str) -> set[Hashable | None]:
        """The connections of the broker name's registrations (master and slaves, expired ones too)."""
        with self._lock:
            broker_data = self.broker_addr_table.get(broker_name)
            addrs = broker_data.broker_addrs.values() if broker_data is not None else ()
            return {held.channel_key for addr in addrs if (held := self.broker_live_table.get(addr)) is not None}

    def broker_names_of_topic(self, topic: str, cluster_name: str | None = None) -> list[str]:
        """The broker names DELETE_TOPIC_IN_NAMESRV would remove ``topic``'s queues of."""
        with self._lock:
            names = sorted(self.topic_queue_table.get(topic, {}))
            if cluster_name:
                in_cluster = self.cluster_addr_table.get(cluster_name, set())
                names = [name for name in names if name in in_cluster]
            return names

    def _topic_config_changed(self, broker_addr: str, data_version: dict[str, Any] | None) -> bool:
        prev = self.broker_live_table.get(broker_addr)
        return prev is None or prev.data_version != data_version

    def is_broker_topic_config_changed(self, broker_addr: str, data_version: dict[str, Any] | None) -> bool:
        """QUERY_DATA_VERSION: does ``data_version`` differ from the one last registered?"""
        with self._lock:
            return self._topic_config_changed(broker_addr, data_version)

    def update_broker_info_update_timestamp(self, broker_addr: str, now: float) -> bool:
        """Refresh a live broker's registration time (QUERY_DATA_VERSION with nothing changed)."""
        with self._lock:
            live = self.broker_live_table.get(broker_addr)
            if live is None:
                return False
            live.last_update_monotonic = now
            return True

    def query_broker_data_version(self, broker_addr: str) -> dict[str, Any] | None:
        with self._lock:
            live = self.broker_live_table.get(broker_addr)
            return live.data_version if live else None

    def _create_and_update_queue_data(self, broker_name: str, config: TopicConfig) -> None:
        queue_data = QueueData(
            broker_name, config.read_queue_nums, config.write_queue_nums, config.perm, config.topic_sys_flag
        )
        self.topic_queue_table.setdefault(config.topic_name, {})[broker_name] = queue_data

    def register_topic(self, topic: str, queue_datas: list[QueueData]) -> list[str]:
        """REGISTER_TOPIC_IN_NAMESRV (5.x): put ``topic``'s queue data of registered broker names; the names
        not registered, when there are any, and then nothing changes (5.x keeps those before the first unknown)."""
        with self._lock:
            unknown = sorted({q.broker_name for q in queue_datas} - self.broker_addr_table.keys())
            if not unknown:
                self.topic_queue_table.setdefault(topic, {}).update({q.broker_name: q for q in queue_datas})
            return unknown

    def unregister_broker(self, cluster_name: str, broker_addr: str, broker_name: str, broker_id: int) -> None:
        """Remove one broker address; a broker name left without addresses leaves every table.

        Unlike RocketMQ 4.9.8, the id's address is removed only when it is ``broker_addr``, so a
        late unregistration of an old address cannot drop its replacement.
        """
        with self._lock:
            self.broker_live_table.pop(broker_addr, None)
            self.filter_server_table.pop(broker_addr, None)
            broker_data = self.broker_addr_table.get(broker_name)
            if broker_data is None:
                return
            if broker_data.broker_addrs.get(broker_id) == broker_addr:
                del broker_data.broker_addrs[broker_id]
            if not broker_data.broker_addrs:
                self._remove_broker_names({broker_name}, cluster_name)

    def _remove_broker_names(self, broker_names: set[str], cluster_name: str | None = None) -> None:
        for name in broker_names:
            self.broker_addr_table.pop(name, None)
        for cluster in [cluster_name] if cluster_name is not None else list(self.cluster_addr_table):
            names = self.cluster_addr_table.get(cluster)
            if names is None:
                continue
            names -= broker_names
            if not names:
                del self.cluster_addr_table[cluster]
        for topic in list(self.topic_queue_table):
            queue_datas = self.topic_queue_table[topic]
            for name in broker_names:
                queue_datas.pop(name, None)
            if not queue_datas:
                del self.topic_queue_table[topic]

    # -- liveness ------------------------------------------------------------------------------

    def scan_not_active_broker(self, now: float, expired_s: float | None = None) -> list[RemovedBroker]:
        """Drop brokers whose last registration is more than ``expired_s`` (default
        ``broker_channel_expired_s``) before monotonic time ``now``; return what was dropped."""
        if expired_s is None:
            expired_s = self.broker_channel_expired_s
        with self._lock:
            expired = [
                RemovedBroker(addr, live.channel_key)
                for addr, live in self.broker_live_table.items()
                if now - live.last_update_monotonic > expired_s
            ]
            for removed in expired:
                self._remove_broker_addr(removed.broker_addr)
            return expired

    def on_channel_destroy(self, channel_key: Hashable) -> list[RemovedBroker]:
        """Drop every broker that registered over the connection that just closed."""
        with self._lock:
            gone = [
                RemovedBroker(addr, key)
                for addr, live in self.broker_live_table.items()
                if (key := live.channel_key) == channel_key
            ]
            for removed in gone:
                self._remove_broker_addr(removed.broker_addr)
            return gone

    def _remove_broker_addr(self, broker_addr: str) -> None:
        self.broker_live_table.pop(broker_addr, None)
        self.filter_server_table.pop(broker_addr, None)
        emptied: set[str] = set()
        for name, broker_data in list(self.broker_addr_table.items()):
            for broker_id in [i for i, a in broker_data.broker_addrs.items() if a == broker_addr]:
                del broker_data.broker_addrs[broker_id]
            if not broker_data.broker_addrs:
                emptied.add(name)
        if emptied:
            self._remove_broker_names(emptied)

    # -- admin operations ----------------------------------------------------------------------

    def delete_topic(self, topic: str, cluster_name: str | None = None) -> bool:
        """Remove a topic's route (only that cluster's brokers' queues when a cluster is named)."""
        with self._lock:
            queue_datas = self.topic_queue_table.get(topic)
            if queue_datas is None:
                return False
            if not cluster_name:
                del self.topic_queue_table[topic]
                return True
            names = self.cluster_addr_table.get(cluster_name, set())
            removed = [name for name in queue_datas if name in names]
            for name in removed:
                del queue_datas[name]
            if not queue_datas:
                del self.topic_queue_table[topic]
            return bool(removed)

    def wipe_write_perm_of_broker(self, broker_name: str) -> int:
        """Clear the WRITE bit of the broker's queues in every topic; return the topics touched."""
        return self._operate_write_perm(broker_name, lambda perm: perm & ~PERM_WRITE)

    def add_write_perm_of_broker(self, broker_name: str) -> int:
        """Set the broker's queues to READ|WRITE in every topic; return the topics touched."""
        return self._operate_write_perm(broker_name, lambda perm: PERM_READ | PERM_WRITE)

    def _operate_write_perm(self, broker_name: str, change: Callable[[int], int]) -> int:
        with self._lock:
            count = 0
            for queue_datas in self.topic_queue_table.values():
                queue_data = queue_datas.get(broker_name)
                if queue_data is not None:
                    queue_datas[broker_name] = replace(queue_data, perm=change(queue_data.perm))
                    count += 1
            return count

    # -- reads ---------------------------------------------------------------------------------

    def pickup_topic_route_data(self, topic: str) -> dict[str, Any] | None:
        """Return the TopicRouteData JSON form (brokerAddrs keyed by int), or None when unknown.

        A route exists when the topic has queue data and at least one of its broker names has
        broker data.  Lists are sorted by broker name.
        """
        with self._lock:
            queue_datas = self.topic_queue_table.get(topic)
            if not queue_datas:
                return None
            broker_datas = []
            filter_servers: dict[str, list[str]] = {}
            for name in sorted(queue_datas):
                broker_data = self.broker_addr_table.get(name)
                if broker_data is None:
                    continue
                broker_datas.append(broker_data.to_json())
                for addr in broker_data.broker_addrs.values():
                    if addr in self.filter_server_table:
                        filter_servers[addr] = list(self.filter_server_table[addr])
            if not broker_datas:
                return None
            return {
                "brokerDatas": broker_datas,
                "filterServerTable": filter_servers,
                "queueDatas": [queue_datas[name].to_json() for name in sorted(queue_datas)],
            }

    def get_all_cluster_info(self) -> dict[str, Any]:
        """Return the ClusterInfo JSON form: brokerAddrTable and clusterAddrTable."""
        with self._lock:
            return {
                "brokerAddrTable": {name: data.to_json() for name, data in sorted(self.broker_addr_table.items())},
                "clusterAddrTable": {
                    cluster: sorted(names) for cluster, names in sorted(self.cluster_addr_table.items())
                },
            }

    def get_all_topic_list(self) -> list[str]:
        with self._lock:
            return sorted(self.topic_queue_table)

    def get_topics_by_cluster(self, cluster_name: str) -> list[str]:
        with self._lock:
            names = self.cluster_addr_table.get(cluster_name, set())
            return sorted(
                topic for topic, queue_datas in self.topic_queue_table.items() if names.intersection(queue_datas)
            )

    def broker_epoch(self, broker_name: str) -> int:
        with self._lock:
            return self.broker_epoch_table.get(broker_name, 0)

    def broker_addrs(self) -> list[str]:
        """Addresses of the brokers currently registered (live)."""
        with self._lock:
            return sorted(self.broker_live_table)


def _as_topic_config(config: object) -> TopicConfig:
    if isinstance(config, TopicConfig):
        return config
    if not isinstance(config, dict):
        raise ValueError(f"topic config is not an object: {config!r}")
    return TopicConfig.from_json(config)
