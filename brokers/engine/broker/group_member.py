"""GroupMember: the broker's place in its broker group (master or slave), for the controller.

It builds the store (:class:`HAMessageStore` with the configured role), starts and stops its HA
parts, and on a slave: learns the master's addresses (the name servers' register answer carries
``masterAddr`` and ``haServerAddr``, as RocketMQ's slaves learn them; ``ha_master_address``
overrides the HA one; the master's HA welcome gives its broker address too), puts the
:class:`SlaveWriteGuard` in front of the write requests, and runs :class:`SlaveSynchronize`
every ``slave_synchronize_interval_s``. While a slave knows no master, or its HA link is down,
it re-registers every second to learn one (a newly promoted master, say).

Promotion and fencing (docs/broker-group-promotion.md, "The promotion contract"):

* ``promote`` (GANTRY_PROMOTE_SLAVE, ``processors/promote.py``): the slave stops copying, starts
  a new group epoch at its log's end (``<store_dir>/epoch``), takes writes as SYNC_MASTER or
  ASYNC_MASTER, serves HA to the other slaves, and registers as broker id 0 with that epoch;
* a master accepts no send until a name server answered its registration OK (``confirmed``), so
  a restarted old master never takes one before the name servers could call it stale;
* ``step_down``: a name server refused the registration as stale (or, with no name servers, a
  slave said hello with a higher epoch): puts stop at once, the broker rejoins as a SLAVE of the
  new master under the id the name server gave, and its HA client truncates the divergent tail
  (logged by the store) before it replicates.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from brokers.engine.broker.config import BrokerConfig
from brokers.engine.broker.namesrv_api import RegisterResult
from brokers.engine.broker.promotion_plan import PromotionPlan, plan_promotion
from brokers.engine.broker.slave_synchronize import SlaveSynchronize
from brokers.engine.broker.slave_write_guard import SlaveWriteGuard
from brokers.engine.remoting.channel import ChannelContext
from brokers.engine.remoting.client import RemotingClient
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.store.config import StoreConfig
from brokers.engine.store.ha.ha_config import SLAVE
from brokers.engine.store.ha.ha_message_store import HAMessageStore

if TYPE_CHECKING:
    from brokers.engine.broker.broker_context import BrokerContext
    from brokers.engine.remoting.server import RemotingServer

log = logging.getLogger("brokers.engine.broker")

LEARN_MASTER_INTERVAL_S = 1.0


class GroupMember:
    def __init__(self, broker: BrokerContext, client: RemotingClient) -> None:
        self.broker = broker
        self.client = client
        self.master_addr = ""  # the master's broker (remoting) address
        self.master_ha_addr = ""  # the master's HA address, as learned from the name servers
        self.store: HAMessageStore | None = None
        self.slave_synchronize: SlaveSynchronize | None = None
        self.guard: SlaveWriteGuard | None = None
        self._next_sync = 0.0
        self.confirmed = not broker.config.namesrv_addrs  # a master: a name server accepted it as master
        self.namesrv_epoch = 0  # the highest group epoch the name servers answered
        self.promotions = 0
        self.fenced_reason = ""
        self._change_lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()
        client.register_processor(RequestCode.GANTRY_PUSH_CONFIG, self._on_config_push)

    async def _on_config_push(self, ctx: ChannelContext, request: RemotingCommand) -> RemotingCommand:
        """A master's config push (``config_push.py``), taken by this slave's SlaveSynchronize."""
        sync = self.slave_synchronize
        if sync is None:
            return request.response(
                ResponseCode.SYSTEM_ERROR,
                f"broker {self.config.broker_name} at {self.broker.addr} is not a slave: it takes no config pushes",
            )
        return await sync.apply_push(ctx, request)

    @property
    def config(self) -> BrokerConfig:
        return self.broker.config

    @property
    def is_slave(self) -> bool:
        return self.config.broker_role == SLAVE

    def write_refusal(self) -> str | None:
        """Why a master refuses sends now (not yet confirmed by a name server), else None."""
        if self.fenced_reason and not self.is_slave:
            return (
                f"service not available now: broker {self.config.broker_name} is a stale master and takes no "
                f"writes ({self.fenced_reason}); it rejoins its group as a slave"
            )
        if self.is_slave or self.confirmed:
            return None
        return (
            f"service not available now: broker {self.config.broker_name} (epoch {self.epoch}) waits for a name "
            "server to confirm it as its group's master (a restarted master may be stale); try again shortly"
        )

    @property
    def epoch(self) -> int:
        return self.store.epoch if self.store is not None else 0

    def build_store(self, store_config: StoreConfig) -> HAMessageStore:
        self.store = HAMessageStore(
            store_config,
            self.config.ha_config(),
            self.broker.clock,
            file_io=self.broker.file_io,
            broker_addr=lambda: self.broker.addr,
            master_address=lambda: self.master_ha_addr or None,
            on_master=self._on_master_broker_addr,
            on_stale=self._on_stale_hello,
        )
        return self.store

    def ha_server_addr(self) -> str:
        port = (
            self.store.ha_port
            if self.store is not None and self.store.ha_port
            else self.config.effective_ha_listen_port
        )
        return f"{self.config.advertised_ip}:{port}"

    async def start(self, server: RemotingServer) -> None:
        """After the store opened and the processors registered: HA port, guard, slave sync."""
        assert self.store is not None
        self.guard = SlaveWriteGuard(self.broker, self.write_refusal)
        self.guard.install(server)
        if self.is_slave:
            self.slave_synchronize = SlaveSynchronize(self.broker, self.client)
        await self.store.start_ha()
        cfg = self.config
        if self.is_slave:
            source = cfg.ha_master_address or "the master named by the name servers"
            log.info(
                "broker %s is a SLAVE (brokerId %d) of broker name %s; replicating from %s; HA port %d",
                cfg.broker_name,
                cfg.broker_id,
                cfg.broker_name,
                source,
                self.store.ha_port,
            )
        else:
            log.info(
                "broker %s is the %s (brokerId 0); slaves replicate from its HA port %d",
                cfg.broker_name,
                cfg.broker_role,
                self.store.ha_port,
            )

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)
        if self.store is not None:
            await self.store.stop_ha()

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def learn_from(self, results: list[RegisterResult]) -> None:
        """Take what the register answers say: a master is confirmed, or stale (it steps down);
        a slave takes its master's addresses (kept when absent)."""
        for result in results:
            self.namesrv_epoch = max(self.namesrv_epoch, result.epoch)
        if not self.is_slave:
            stale = next((r for r in results if r.stale), None)
            if stale is not None:
                self.fence(f"name server {stale.namesrv_addr} refused it as master: {stale.detail}")
                self._spawn(self.step_down(stale.master_addr, stale.ha_server_addr, stale.slave_id))
            elif not self.confirmed and any(r.ok for r in results):
                self.confirmed = True
                log.info(
                    "broker %s is confirmed as the %s of its group at epoch %d by name server(s) %s; taking writes",
                    self.config.broker_name,
                    self.config.broker_role,
                    self.epoch,
                    ", ".join(r.namesrv_addr for r in results if r.ok),
                )
            return
        for result in results:
            if result.ok and result.master_addr and result.master_addr != self.broker.addr:
                if result.master_addr != self.master_addr:
                    log.info(
                        "slave %s: master broker address %s (from name server %s)",
                        self.config.broker_name,
                        result.master_addr,
                        result.namesrv_addr,
                    )
                self.master_addr = result.master_addr
                if self.slave_synchronize is not None:
                    self.slave_synchronize.master_addr = result.master_addr
            if result.ok and result.ha_server_addr and result.ha_server_addr != self.master_ha_addr:
                log.info(
                    "slave %s: master HA address %s (from name server %s)%s",
                    self.config.broker_name,
                    result.ha_server_addr,
                    result.namesrv_addr,
                    f"; ha_master_address {self.config.ha_master_address} is used instead"
                    if self.config.ha_master_address
                    else "",
                )
                self.master_ha_addr = result.ha_server_addr

    def _on_master_broker_addr(self, addr: str) -> None:
        if not self.master_addr:
            self.master_addr = addr
        if self.slave_synchronize is not None and not self.slave_synchronize.master_addr:
            self.slave_synchronize.master_addr = addr

    async def tick(self) -> None:
        """Every second: an unconfirmed master retries its registration; a slave learns a master
        while none is known or its HA link is down; it syncs every interval."""
        if not self.is_slave:
            if not self.confirmed and not self.fenced_reason:
                await self.broker.register_broker_all()
            return
        client = self.store.ha_client if self.store is not None else None
        if (
            not self.master_addr
            or not (self.master_ha_addr or self.config.ha_master_address)
            or (client is not None and client.state != "CONNECTED" and client.state != "PAUSED")
        ):
            await self.broker.register_broker_all()
        now = time.monotonic()
        if self.slave_synchronize is not None and now >= self._next_sync and self.slave_synchronize.master_addr:
            self._next_sync = now + self.config.slave_synchronize_interval_s
            await self.slave_synchronize.sync_all()
        if self.slave_synchronize is not None:
            self.slave_synchronize.derive_missing_topics()

    # --- promotion and fencing ------------------------------------------------------------------

    def promotion_plan(self, *, force: bool, dry_run: bool, role: str) -> PromotionPlan:
        """What promoting this slave would do and lose (``promotion_plan.py``)."""
        assert self.store is not None
        client = self.store.ha_client
        cfg = self.config
        return plan_promotion(
            broker_name=cfg.broker_name,
            broker_id=cfg.broker_id,
            from_role=cfg.broker_role,
            requested_role=role,
            group_role=client.master_role if client is not None else "",
            epoch=self.epoch,
            highest_known_epoch=max(self.namesrv_epoch, client.master_epoch if client is not None else 0),
            max_phy_offset=self.store.max_phy_offset,
            master_max_offset=client.master_max_offset if client is not None else 0,
            acked_offset=client.group_acked if client is not None else 0,
            master_reachable=client is not None and client.state in ("CONNECTED", "PAUSED"),
            master_addr=self.master_addr or (client.connected_to if client is not None else ""),
            force=force,
            dry_run=dry_run,
        )

    async def promote(self, plan: PromotionPlan, *, force: bool = False) -> list[RegisterResult]:
        """Make this slave the master under ``plan.new_epoch`` (online) and register as id 0."""
        assert self.store is not None
        async with self._change_lock:
            if not self.is_slave:
                raise RuntimeError(f"{self.config.broker_name} is no longer a slave")
            old_id, master = self.config.broker_id, self.master_addr
            entry = await self.store.become_master(plan.to_role, plan.new_epoch)
            self.broker.config = self.config.with_changes(broker_role=plan.to_role, broker_id=0)
            self.confirmed = not self.config.namesrv_addrs
            self.fenced_reason = ""
            self.slave_synchronize = None
            self.master_addr = self.master_ha_addr = ""
            self.promotions += 1
            if self.broker.schedule_message_service is not None:
                self.broker.schedule_message_service.start()
            log.warning(
                "PROMOTED: broker %s id %d (slave of %s) is now the %s (brokerId 0) at epoch %d, which starts at "
                "commit-log offset %d (the master had %d, the group acknowledged %d; force=%s)",
                self.config.broker_name,
                old_id,
                master or "?",
                plan.to_role,
                entry.epoch,
                entry.start_offset,
                plan.known_master_max_offset,
                plan.acked_offset,
                force,
            )
        return await self.broker.register_broker_all()

    def fence(self, why: str) -> None:
        """Stop taking writes at once: this broker is a stale master."""
        if self.store is None or self.is_slave and self.store.broker_role == SLAVE:
            return
        if not self.fenced_reason:
            log.error(
                "FENCED: broker %s at %s stops taking writes at epoch %d: %s",
                self.config.broker_name,
                self.broker.addr,
                self.epoch,
                why,
            )
        self.fenced_reason = why
        self.confirmed = False
        self.store.fence()

    async def step_down(self, master_addr: str, master_ha_addr: str, slave_id: int) -> None:
        """Rejoin the group as a slave of the master the name servers named."""
        assert self.store is not None
        async with self._change_lock:
            if self.is_slave:
                return
            new_id = slave_id if slave_id > 0 else 1
            self.broker.config = self.config.with_changes(broker_role=SLAVE, broker_id=new_id)
            self.broker.config_push.forget()
            self.master_addr, self.master_ha_addr = master_addr, master_ha_addr
            self.slave_synchronize = SlaveSynchronize(self.broker, self.client)
            self.slave_synchronize.master_addr = master_addr
            if self.broker.schedule_message_service is not None:
                await self.broker.schedule_message_service.stop()
            log.warning(
                "broker %s rejoins its group as a SLAVE (brokerId %d) of master %s (HA %s); a divergent tail "
                "is truncated before replicating",
                self.config.broker_name,
                new_id,
                master_addr or "?",
                master_ha_addr or "?",
            )
            await self.store.become_slave()
        await self.broker.register_broker_all()

    def _on_stale_hello(self, epoch: int) -> None:
        """A slave said hello with a higher epoch than this master's: ask the name servers (they
        decide; a stray hello alone must not depose a master), or step down if there are none."""
        if self.is_slave:
            return
        if not self.config.namesrv_addrs:
            self.fence(f"a slave has seen epoch {epoch}, above this master's {self.epoch}")
            self._spawn(self.step_down(self.config.ha_master_address or "", "", 0))
            return
        log.warning(
            "a slave has seen epoch %d, above this master's %d: checking with the name servers", epoch, self.epoch
        )
        self.broker.request_register()
