"""SlaveSynchronize: a slave copies its master's configuration every 10 s (RocketMQ's
``SlaveSynchronize``): topics (GET_ALL_TOPIC_CONFIG, 21), consumer offsets
(GET_ALL_CONSUMER_OFFSET, 43), delay offsets (GET_ALL_DELAY_OFFSET, 45) and subscription groups
(GET_ALL_SUBSCRIPTIONGROUP_CONFIG, 201), from the master's broker address (the name servers'
``masterAddr``, or the one the master gave in the HA welcome).

Topics and groups are replaced wholesale when the master's ``dataVersion`` differs, as RocketMQ
does; the slave then re-registers so the name servers carry its copy. Delay offsets are taken
as they are (the slave runs no delayed delivery). Consumer offsets are merged, see
:func:`merge_consumer_offsets`: RocketMQ 4.x overwrites them, which moves an offset a consumer
committed on the slave while the master was down backwards once the master (with its older
value) is back; Gantry does not, and the returning master takes those commits back itself
(GANTRY_GET_MASTERLESS_OFFSETS, see ``masterless_offsets.py``), so the two tables converge on
the higher value.

Between two copies, the master pushes each topic and group change (``config_push.py``): every round
starts by subscribing to those pushes (GANTRY_SUBSCRIBE_CONFIG) on this slave's connection to the
master, and :meth:`SlaveSynchronize.apply_push` takes them, only from that connection. A topic the
master deleted loses its consume queues here too. A topic whose consume queues this slave holds
but whose config never arrived (its master died first) is served with a config derived from the
queues (:meth:`SlaveSynchronize.derive_missing_topics`, logged), so its messages stay readable.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from brokers.engine.broker.config_push import GROUPS, TOPICS
from brokers.engine.broker.data_version import DataVersion
from brokers.engine.common.perm import PERM_RW
from brokers.engine.common.subscription_group_config import SubscriptionGroupConfig
from brokers.engine.common import json_compat
from brokers.engine.common.topic_config import TopicConfig
from brokers.engine.remoting.channel import ChannelContext
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.headers.replication import SubscribeConfigRequestHeader

if TYPE_CHECKING:
    from brokers.engine.broker.broker_context import BrokerContext

log = logging.getLogger("brokers.engine.broker")

OffsetKey = tuple[str, int]  # ("topic@group", queue id)


def merge_consumer_offsets(
    local: dict[str, dict[int, int]], master: dict[str, dict[int, int]], last_synced: dict[OffsetKey, int]
) -> tuple[dict[str, dict[int, int]], dict[OffsetKey, int]]:
    """Merge the master's consumer offsets into the slave's; return (new table, new last_synced).

    The rule, per (topic@group, queue):

    * if the slave's value differs from what the last sync left there, a consumer committed it
      on this slave since (the master was unreachable): keep ``max(slave's, master's)`` — a
      commit made on the slave is never moved backwards by the master's older value;
    * otherwise take the master's value (so a reset made on the master, even backwards, reaches
      the slave);
    * entries only the slave has are kept; entries only the master has are added.

    Once the master's value reaches the slave's commit, the two agree and the entry follows the
    master again. ``last_synced`` is what this sync leaves, for the next comparison.
    """
    merged: dict[str, dict[int, int]] = {key: dict(queues) for key, queues in local.items()}
    for key, queues in master.items():
        mine = merged.setdefault(key, {})
        for qid, offset in queues.items():
            current = mine.get(qid)
            if current is None or current == last_synced.get((key, qid)):
                mine[qid] = offset
            else:
                mine[qid] = max(current, offset)
    synced = {(key, qid): offset for key, queues in merged.items() for qid, offset in queues.items()}
    return merged, synced


class SlaveSynchronize:
    def __init__(self, broker: BrokerContext, client: RemotingClient, *, timeout_s: float = 3.0) -> None:
        self.broker = broker
        self.client = client
        self.timeout_s = timeout_s
        self.master_addr = ""
        self._last_synced_offsets: dict[OffsetKey, int] = {}
        self.syncs = 0

    async def _get(self, code: int) -> dict[str, Any] | None:
        response = await self.client.invoke(self.master_addr, RemotingCommand.request(code), self.timeout_s)
        if response.code != ResponseCode.SUCCESS:
            log.warning(
                "slave sync: master %s answered code %s to request %s: %s",
                self.master_addr,
                response.code,
                code,
                response.remark,
            )
            return None
        data = json_compat.loads(response.body) if response.body else {}
        return data if isinstance(data, dict) else None

    async def subscribe(self) -> None:
        """Ask the master to push its topic and group changes on this connection (an Apache master
        answers REQUEST_CODE_NOT_SUPPORTED: the periodic copies are then all there is)."""
        header = SubscribeConfigRequestHeader(slave_addr=self.broker.addr)
        request = RemotingCommand.request(RequestCode.GANTRY_SUBSCRIBE_CONFIG, header.encode())
        response = await self.client.invoke(self.master_addr, request, self.timeout_s)
        if response.code != ResponseCode.SUCCESS:
            log.debug(
                "slave sync: master %s did not take the config subscription: %s %s",
                self.master_addr,
                response.code,
                response.remark,
            )

    async def sync_all(self) -> bool:
        """One round: subscribe to pushes, then the four copies; False when there is no master to copy
        from or a copy failed."""
        addr = self.master_addr
        if not addr or addr == self.broker.addr:
            return False
        ok = True
        for what, step in (
            ("config subscription", self.subscribe),
            ("topic config", self.sync_topic_config),
            ("consumer offsets", self.sync_consumer_offset),
            ("delay offsets", self.sync_delay_offset),
            ("subscription groups", self.sync_subscription_group),
        ):
            try:
                await step()
            except Exception as exc:
                ok = False
                log.warning("slave sync of %s from master %s failed: %s", what, addr, exc or type(exc).__name__)
        if ok:
            self.syncs += 1
        return ok

    async def sync_topic_config(self) -> None:
        data = await self._get(RequestCode.GET_ALL_TOPIC_CONFIG)
        if data is None:
            return
        version = DataVersion.from_json(data.get("dataVersion"))
        if version == self.broker.topic_config_manager.data_version:
            return
        table = {name: TopicConfig.from_json(tc) for name, tc in (data.get("topicConfigTable") or {}).items()}
        self._install_topics(table, version)
        log.info("slave sync: topic config copied from master %s (%d topics)", self.master_addr, len(table))

    def _install_topics(self, table: dict[str, TopicConfig], version: DataVersion) -> None:
        """Make ``table`` this slave's topic table at ``version``; drop the queues of topics it no longer has."""
        tcm = self.broker.topic_config_manager
        gone = set(tcm.topic_config_table) - set(table)
        tcm.topic_config_table.clear()
        tcm.topic_config_table.update(table)
        tcm.data_version = version
        tcm.persist()
        if gone:
            self.broker.store.delete_topics(gone)
            log.info(
                "slave sync: topics deleted on master %s, their queues dropped here: %s", self.master_addr, sorted(gone)
            )
        self.broker.request_register()

    async def sync_subscription_group(self) -> None:
        data = await self._get(RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG)
        if data is None:
            return
        version = DataVersion.from_json(data.get("dataVersion"))
        if version == self.broker.subscription_group_manager.data_version:
            return
        table = {g: SubscriptionGroupConfig.from_json(c) for g, c in (data.get("subscriptionGroupTable") or {}).items()}
        self._install_groups(table, version)
        log.info("slave sync: subscription groups copied from master %s (%d groups)", self.master_addr, len(table))

    def _install_groups(self, table: dict[str, SubscriptionGroupConfig], version: DataVersion) -> None:
        sgm = self.broker.subscription_group_manager
        sgm.subscription_group_table.clear()
        sgm.subscription_group_table.update(table)
        sgm.data_version = version
        sgm.persist()

    async def apply_push(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        """GANTRY_PUSH_CONFIG from the master: apply one change, or copy the whole table when this
        slave is not at the change's previous version; SUCCESS once it is on disk here."""
        if not self.master_addr or ctx.attributes.get("addr") != self.master_addr:
            return request.response(
                ResponseCode.NO_PERMISSION,
                f"config push over a connection to "
                f"{ctx.attributes.get('addr') or ctx.remote_addr}, not to this slave's master "
                f"{self.master_addr or '(none known)'}",
            )
        try:
            data = json_compat.loads(request.body)
            table, previous = data["table"], DataVersion.from_json(data["previousVersion"])
            current, update, delete = (
                DataVersion.from_json(data["dataVersion"]),
                dict(data["update"]),
                list(data["delete"]),
            )
        except (ValueError, KeyError, TypeError) as exc:
            return request.response(ResponseCode.SYSTEM_ERROR, f"malformed config push: {exc}")
        if table == TOPICS:
            tcm = self.broker.topic_config_manager
            await self._apply_change(
                tcm.topic_config_table,
                tcm.data_version,
                previous,
                current,
                update,
                delete,
                TopicConfig.from_json,
                self._install_topics,
                self.sync_topic_config,
            )
        elif table == GROUPS:
            sgm = self.broker.subscription_group_manager
            await self._apply_change(
                sgm.subscription_group_table,
                sgm.data_version,
                previous,
                current,
                update,
                delete,
                SubscriptionGroupConfig.from_json,
                self._install_groups,
                self.sync_subscription_group,
            )
        else:
            return request.response(ResponseCode.SYSTEM_ERROR, f"config push of unknown table {table!r}")
        return request.response(ResponseCode.SUCCESS)

    @staticmethod
    async def _apply_change(
        table: dict[str, Any],
        version: DataVersion,
        previous: DataVersion,
        current: DataVersion,
        update: dict[str, dict[str, Any]],
        delete: list[str],
        decode: Callable[[dict[str, Any]], Any],
        install: Callable[[dict[str, Any], DataVersion], object],
        copy_whole: Callable[[], Awaitable[object]],
    ) -> None:
        """One pushed change: applied when this slave's table is at ``previous``, nothing when it is at
        ``current`` already, else the whole table copied from the master."""
        if version == previous:
            merged = dict(table)
            merged.update({name: decode(config) for name, config in update.items()})
            for name in delete:
                merged.pop(name, None)
            install(merged, current)
        elif version != current:
            await copy_whole()

    def derive_missing_topics(self) -> list[str]:
        """Give each topic that has consume queues here but no config a config derived from them
        (read and write queues = its highest queue id + 1, perm RW), so reads of it are served; the
        master's next copy replaces it. Returns the topics derived (each logged)."""
        tcm = self.broker.topic_config_manager
        counts = self.broker.store.queue_counts()
        missing = sorted(topic for topic in counts if topic not in tcm.topic_config_table)
        for topic in missing:
            tcm.topic_config_table[topic] = TopicConfig(topic, counts[topic], counts[topic], PERM_RW)
            log.warning(
                "slave %s: topic %s has %d consume queue(s) here but its config never came from the master; "
                "serving it with a config derived from its queues",
                self.broker.config.broker_name,
                topic,
                counts[topic],
            )
        if missing:
            tcm.persist()
            self.broker.request_register()
        return missing

    async def sync_consumer_offset(self) -> None:
        data = await self._get(RequestCode.GET_ALL_CONSUMER_OFFSET)
        if data is None:
            return
        master = {
            str(k): {int(q): int(o) for q, o in (v or {}).items()} for k, v in (data.get("offsetTable") or {}).items()
        }
        com = self.broker.consumer_offset_manager
        com.masterless.forget_confirmed(master)
        merged, self._last_synced_offsets = merge_consumer_offsets(com.offset_table, master, self._last_synced_offsets)
        if merged != com.offset_table:
            com.offset_table = merged
            com.persist(force=True)

    async def sync_delay_offset(self) -> None:
        data = await self._get(RequestCode.GET_ALL_DELAY_OFFSET)
        service = self.broker.schedule_message_service
        if data is None or service is None:
            return
        table = {int(level): int(offset) for level, offset in (data.get("offsetTable") or {}).items()}
        if table != service.offset_table:
            service.offset_table = table
            service.persist(force=True)
