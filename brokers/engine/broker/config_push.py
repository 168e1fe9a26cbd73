"""ConfigPush: a master's topic and subscription-group changes reach its slaves before it answers.

A slave copies its master's tables every ``slave_synchronize_interval_s`` (``slave_synchronize.py``),
so a topic created on a master that dies within that interval was, on its slaves, never created:
its messages were on the slave but a consumer was told ``topic[...] not exist``. Now each change
travels to the slaves at once, and the admin request that made it answers only when they have it:

* a slave subscribes on the connection it already holds to its master (GANTRY_SUBSCRIBE_CONFIG,
  10007, header ``slaveAddr``), before each periodic copy; the master keeps that connection;
* each change of the master's topic or group table (a DataVersion step) is pushed on every
  subscribed connection as GANTRY_PUSH_CONFIG (10008, JSON body below), JSON until the slave has
  spoken binary (``ChannelContext.request_serialize_type``);
* a slave whose table is at ``previousVersion`` applies the change; any other one copies the whole
  table from its master first (as its periodic sync would); either way it answers SUCCESS only once
  the table is on its disk;
* UPDATE_AND_CREATE_TOPIC, DELETE_TOPIC_IN_BROKER, UPDATE_AND_CREATE_SUBSCRIPTIONGROUP and
  DELETE_SUBSCRIPTIONGROUP take the pushes of their own change (:meth:`ConfigPush.take_started`, right
  after making it) and await them (:meth:`ConfigPush.settled_response`): they answer SUCCESS when every subscribed
  slave confirmed, else SLAVE_NOT_AVAILABLE with a remark naming each slave that did not (the change
  stands on the master, and the slave still copies it within its sync interval). A change that no
  admin request made (a retry topic created by a consumer's sendback, an auto-created group) is
  pushed the same way, without anyone waiting.

Push body::

    {"table": "topics" | "groups", "previousVersion": {"counter":..,"timestamp":..},
     "dataVersion": {...}, "update": {"name": {config as in GET_ALL_*}}, "delete": ["name", ...]}
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from brokers.engine.broker.data_version import DataVersion
from brokers.engine.common import json_compat
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.errors import RemotingError

if TYPE_CHECKING:
    from brokers.engine.remoting.channel import ChannelContext

log = logging.getLogger("brokers.engine.broker")

PUSH_TIMEOUT_S = 5.0  # a slave applies a change in memory and writes one small file; 5 s is a stalled slave
TOPICS, GROUPS = "topics", "groups"


def push_body(
    table: str, previous: DataVersion, current: DataVersion, update: dict[str, dict[str, Any]], delete: list[str]
) -> bytes:
    """The GANTRY_PUSH_CONFIG body of one change."""
    return json_compat.dumps(
        {
            "table": table,
            "previousVersion": previous.to_json(),
            "dataVersion": current.to_json(),
            "update": update,
            "delete": delete,
        }
    ).encode("utf-8")


class ConfigPush:
    """The master's side: the slaves' subscriptions, one push per change, and waiting for them."""

    def __init__(self, *, timeout_s: float = PUSH_TIMEOUT_S) -> None:
        self.timeout_s = timeout_s
        self._slaves: dict[str, ChannelContext] = {}  # slave broker address -> its connection to this master
        self._pending: set[asyncio.Task[str | None]] = set()  # holds each push until it is done
        self._started: list[asyncio.Task[str | None]] = []  # pushes not yet taken by the change's handler

    @property
    def slaves(self) -> list[str]:
        """Addresses of the slaves subscribed on a connection that is still open."""
        return sorted(addr for addr, ctx in self._slaves.items() if not ctx.closed)

    def subscribe(self, slave_addr: str, ctx: ChannelContext) -> None:
        if self._slaves.get(slave_addr) is not ctx:
            log.info("slave %s subscribed to config pushes on %s", slave_addr, ctx)
        self._slaves[slave_addr] = ctx

    def forget(self) -> None:
        """Drop every subscription (this broker is no longer a master)."""
        self._slaves.clear()

    def push(
        self,
        table: str,
        previous: DataVersion,
        current: DataVersion,
        *,
        update: dict[str, dict[str, Any]] | None = None,
        delete: list[str] | None = None,
    ) -> None:
        """Send one change to every subscribed slave (in tasks; :meth:`settle` waits for them)."""
        if not self._slaves:
            return
        body = push_body(table, previous, current, update or {}, delete or [])
        loop = asyncio.get_running_loop()
        self._started = [task for task in self._started if not task.done()]
        for addr, ctx in list(self._slaves.items()):
            if ctx.closed:
                del self._slaves[addr]
                continue
            task = loop.create_task(self._push_one(addr, ctx, body))
            self._pending.add(task)
            self._started.append(task)
            task.add_done_callback(self._pending.discard)

    async def _push_one(self, addr: str, ctx: ChannelContext, body: bytes) -> str | None:
        try:
            reply = await ctx.invoke(
                RemotingCommand.request(RequestCode.GANTRY_PUSH_CONFIG, None, body), self.timeout_s
            )
        except RemotingError as exc:
            log.warning("config push to slave %s failed: %s", addr, exc)
            return f"slave {addr}: {exc}"
        if reply.code != ResponseCode.SUCCESS:
            log.warning("config push to slave %s answered code %s: %s", addr, reply.code, reply.remark)
            return f"slave {addr} answered code {reply.code}: {reply.remark}"
        return None

    def take_started(self) -> list[asyncio.Task[str | None]]:
        """The pushes started since the last call. A handler calls it right after its change (no
        await in between), so what it takes are exactly the pushes of that change."""
        started, self._started = self._started, []
        return started

    async def settled_response(
        self, request: RemotingCommand, what: str, pushes: list[asyncio.Task[str | None]]
    ) -> RemotingCommand:
        """SUCCESS when every slave confirmed ``pushes``, else SLAVE_NOT_AVAILABLE naming the others."""
        missing = [why for why in await asyncio.gather(*pushes) if why] if pushes else []
        if not missing:
            return request.response(ResponseCode.SUCCESS)
        return request.response(
            ResponseCode.SLAVE_NOT_AVAILABLE,
            f"{what} on the master; not confirmed by {'; '.join(missing)} (a slave copies it "
            f"within its sync interval once reachable)",
        )
