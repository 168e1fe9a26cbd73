"""ClientManager: which producers and consumers are connected, per group (RocketMQ's
ProducerManager + ConsumerManager + ClientHousekeepingService).

Clients are registered by HEART_BEAT and keyed by their **connection** (as RocketMQ does): a
client id reconnecting on a new connection is a new member. For each consumer group the broker
keeps the members, the consume type/model/from-where and the subscriptions per topic (a
subscription is replaced only by a higher ``subVersion``; topics missing from a heartbeat are
dropped).

NOTIFY_CONSUMER_IDS_CHANGED (40, oneway, header ``consumerGroup``) goes to every member of a
consumer group when (protocol reference §2.3, §7.2):

- a heartbeat brings a new connection into the group, or adds/removes a subscribed topic
  (all members are told, the newcomer included);
- a member leaves by UNREGISTER_CLIENT, or its connection closes (the remaining members);
- a member is expired for silence longer than ``client_channel_expired_s`` (the remaining
  members). RocketMQ's expiry scan itself is silent, leaving the others to notice at their next
  20 s rebalance; telling them at once is harmless and rebalances sooner.

Nothing is sent when the broker's ``notify_consumer_ids_changed_enable`` or the group's
``notifyConsumerIdsChangedEnable`` is off.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from brokers.engine.broker.heartbeat import SubscriptionData
from brokers.engine.common.clock import Clock
from brokers.engine.remoting.channel import ChannelContext
from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.headers.pushes import NotifyConsumerIdsChangedRequestHeader

log = logging.getLogger("brokers.engine.broker")


@dataclass(slots=True)
class ClientChannelInfo:
    ctx: ChannelContext
    client_id: str
    language: str = "JAVA"
    version: int = 0
    last_update: float = 0.0  # clock.monotonic() of the last heartbeat

    @property
    def client_addr(self) -> str:
        return self.ctx.remote_addr

    def to_connection_json(self) -> dict[str, Any]:
        """RocketMQ's Connection body entry (§4.7)."""
        return {
            "clientAddr": self.client_addr,
            "clientId": self.client_id,
            "language": self.language,
            "version": self.version,
        }


@dataclass(slots=True)
class ConsumerGroupInfo:
    group_name: str
    consume_type: str = "CONSUME_PASSIVELY"
    message_model: str = "CLUSTERING"
    consume_from_where: str = "CONSUME_FROM_LAST_OFFSET"
    channel_info_table: dict[int, ClientChannelInfo] = field(default_factory=dict)
    subscription_table: dict[str, SubscriptionData] = field(default_factory=dict)

    def all_channels(self) -> list[ClientChannelInfo]:
        return list(self.channel_info_table.values())

    def all_client_ids(self) -> list[str]:
        """Client ids of the live members, without duplicates, in join order."""
        return list(dict.fromkeys(info.client_id for info in self.channel_info_table.values()))

    def find_channel(self, client_id: str) -> ClientChannelInfo | None:
        for info in self.channel_info_table.values():
            if info.client_id == client_id and not info.ctx.closed:
                return info
        return None

    def update_channel(
        self, info: ClientChannelInfo, consume_type: str, message_model: str, consume_from_where: str
    ) -> bool:
        """Refresh or add a member; True when the connection is new to the group."""
        self.consume_type, self.message_model, self.consume_from_where = consume_type, message_model, consume_from_where
        old = self.channel_info_table.get(info.ctx.id)
        self.channel_info_table[info.ctx.id] = info
        if old is None:
            log.info("new consumer connected, group %s: %s %s", self.group_name, info.client_id, info.client_addr)
            return True
        if old.client_id != info.client_id:
            log.warning(
                "consumer connection %s of group %s changed client id %s -> %s",
                info.client_addr,
                self.group_name,
                old.client_id,
                info.client_id,
            )
        return False

    def update_subscription(self, subs: Iterable[SubscriptionData]) -> bool:
        """Merge a heartbeat's subscriptions; True when the set of topics changed."""
        changed = False
        topics: set[str] = set()
        for sub in subs:
            topics.add(sub.topic)
            old = self.subscription_table.get(sub.topic)
            if old is None:
                self.subscription_table[sub.topic] = sub
                changed = True
            elif sub.sub_version > old.sub_version:
                self.subscription_table[sub.topic] = sub
        for topic in [t for t in self.subscription_table if t not in topics]:
            log.info("consumer group %s no longer subscribes %s", self.group_name, topic)
            del self.subscription_table[topic]
            changed = True
        return changed


class ClientManager:
    """Producer and consumer registries, expiry and membership notifications."""

    def __init__(
        self,
        clock: Clock,
        *,
        channel_expired_s: float = 120.0,
        notify_enabled: Callable[[str], bool] = lambda group: True,
    ) -> None:
        self.clock = clock
        self.channel_expired_s = channel_expired_s
        self.notify_enabled = notify_enabled
        self.producer_table: dict[str, dict[int, ClientChannelInfo]] = {}
        self.consumer_table: dict[str, ConsumerGroupInfo] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    # -- producers ----------------------------------------------------------------------------

    def register_producer(self, group: str, info: ClientChannelInfo) -> None:
        members = self.producer_table.setdefault(group, {})
        if info.ctx.id not in members:
            log.info("new producer connected, group %s: %s %s", group, info.client_id, info.client_addr)
        members[info.ctx.id] = info

    def unregister_producer(self, group: str, ctx: ChannelContext, client_id: str | None = None) -> bool:
        members = self.producer_table.get(group)
        if not members:
            return False
        removed = members.pop(ctx.id, None) is not None
        if not removed and client_id:
            for key in [k for k, v in members.items() if v.client_id == client_id]:
                del members[key]
                removed = True
        if not members:
            del self.producer_table[group]
        return removed

    def producer_connections(self, group: str) -> list[ClientChannelInfo]:
        return list(self.producer_table.get(group, {}).values())

    # -- consumers ----------------------------------------------------------------------------

    def get_consumer_group_info(self, group: str) -> ConsumerGroupInfo | None:
        return self.consumer_table.get(group)

    def find_subscription_data(self, group: str, topic: str) -> SubscriptionData | None:
        info = self.consumer_table.get(group)
        return info.subscription_table.get(topic) if info else None

    def register_consumer(
        self,
        group: str,
        info: ClientChannelInfo,
        consume_type: str,
        message_model: str,
        consume_from_where: str,
        subscriptions: Iterable[SubscriptionData],
        *,
        notify: bool = True,
    ) -> bool:
        """Add or refresh a member; True (and members notified) when membership or topics changed."""
        group_info = self.consumer_table.get(group)
        if group_info is None:
            group_info = self.consumer_table[group] = ConsumerGroupInfo(
                group, consume_type, message_model, consume_from_where
            )
        joined = group_info.update_channel(info, consume_type, message_model, consume_from_where)
        topics_changed = group_info.update_subscription(subscriptions)
        if joined or topics_changed:
            if notify:
                self._notify_consumer_ids_changed(group, group_info.all_channels())
            return True
        return False

    def unregister_consumer(
        self, group: str, ctx: ChannelContext, client_id: str | None = None, *, notify: bool = True
    ) -> bool:
        """Remove a member (by connection, else by client id); tell the rest. True when removed."""
        group_info = self.consumer_table.get(group)
        if group_info is None:
            return False
        removed = group_info.channel_info_table.pop(ctx.id, None)
        if removed is None and client_id:
            for key in [k for k, v in group_info.channel_info_table.items() if v.client_id == client_id]:
                removed = group_info.channel_info_table.pop(key)
        if removed is None:
            return False
        log.info("consumer left group %s: %s %s", group, removed.client_id, removed.client_addr)
        self._after_consumer_removed(group, group_info, notify)
        return True

    def _after_consumer_removed(self, group: str, group_info: ConsumerGroupInfo, notify: bool) -> None:
        if not group_info.channel_info_table:
            self.consumer_table.pop(group, None)
            log.info("consumer group %s has no members left, removed", group)
        elif notify:
            self._notify_consumer_ids_changed(group, group_info.all_channels())

    def query_topic_consume_by_who(self, topic: str) -> set[str]:
        return {g for g, info in self.consumer_table.items() if topic in info.subscription_table}

    # -- connection events and expiry ---------------------------------------------------------

    def do_channel_close_event(self, ctx: ChannelContext) -> None:
        """A connection closed: drop its producers and consumers, tell the consumer groups."""
        for group in list(self.producer_table):
            self.unregister_producer(group, ctx)
        for group, group_info in list(self.consumer_table.items()):
            removed = group_info.channel_info_table.pop(ctx.id, None)
            if removed is not None:
                log.info("consumer connection closed, group %s: %s %s", group, removed.client_id, removed.client_addr)
                self._after_consumer_removed(group, group_info, True)

    def scan_not_active_channel(self) -> list[ClientChannelInfo]:
        """Remove and close members silent for longer than ``channel_expired_s``; return them."""
        now = self.clock.monotonic()
        expired: list[ClientChannelInfo] = []
        for group in list(self.producer_table):
            members = self.producer_table[group]
            for key, info in list(members.items()):
                if now - info.last_update > self.channel_expired_s:
                    log.warning(
                        "producer %s of group %s silent for %.0fs, removed",
                        info.client_id,
                        group,
                        now - info.last_update,
                    )
                    del members[key]
                    expired.append(info)
            if not members:
                del self.producer_table[group]
        for group, group_info in list(self.consumer_table.items()):
            gone = [
                k
                for k, info in group_info.channel_info_table.items()
                if now - info.last_update > self.channel_expired_s
            ]
            for key in gone:
                info = group_info.channel_info_table.pop(key)
                log.warning(
                    "consumer %s of group %s silent for %.0fs, removed", info.client_id, group, now - info.last_update
                )
                expired.append(info)
            if gone:
                self._after_consumer_removed(group, group_info, True)
        for info in expired:
            still_used = any(info.ctx.id in m for m in self.producer_table.values()) or any(
                info.ctx.id in g.channel_info_table for g in self.consumer_table.values()
            )
            if not still_used:
                info.ctx.close()
        return expired

    # -- notifications ------------------------------------------------------------------------

    def notify_group_now(self, group: str) -> list[str]:
        """Tell every member of ``group`` to rebalance now, whatever the notify settings say (an
        operator's explicit request); the client ids told."""
        group_info = self.consumer_table.get(group)
        members = [info for info in (group_info.all_channels() if group_info else []) if not info.ctx.closed]
        self._send_to_members(group, members)
        return sorted(info.client_id for info in members)

    def _notify_consumer_ids_changed(self, group: str, members: list[ClientChannelInfo]) -> None:
        if not members or not self.notify_enabled(group):
            return
        self._send_to_members(group, members)

    def _send_to_members(self, group: str, members: list[ClientChannelInfo]) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        for info in members:
            if info.ctx.closed:
                continue
            task = loop.create_task(self._send_notify(group, info))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    @staticmethod
    async def _send_notify(group: str, info: ClientChannelInfo) -> None:
        header = NotifyConsumerIdsChangedRequestHeader(consumer_group=group)
        request = RemotingCommand.request(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, header.encode(), oneway=True)
        try:
            await info.ctx.invoke_oneway(request)
        except Exception as exc:  # a dead connection is cleaned up by its close event
            log.info("NOTIFY_CONSUMER_IDS_CHANGED to %s (%s) failed: %s", info.client_id, info.client_addr, exc)

    async def drain(self) -> None:
        """Wait for notifications in flight (used at stop)."""
        if self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
