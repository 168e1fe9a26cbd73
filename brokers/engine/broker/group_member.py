"""GroupMember: the broker's place in its broker group (master or slave), for the controller.

It builds the store (:class:`HAMessageStore` with the configured role), starts and stops its HA
parts, and on a slave: learns the master's addresses (the name servers' register answer carries
``masterAddr`` and ``haServerAddr``, as RocketMQ's slaves learn them; ``ha_master_address``
overrides the HA one; the master's HA welcome gives its broker address too), puts the
:class:`SlaveWriteGuard` in front of the write requests, and runs :class:`SlaveSynchronize`
every ``slave_synchronize_interval_s``. While a slave knows no master it re-registers every
second to learn one.
"""
from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from brokers.engine.broker.namesrv_api import RegisterResult
from brokers.engine.broker.slave_synchronize import SlaveSynchronize
from brokers.engine.broker.slave_write_guard import SlaveWriteGuard
from brokers.engine.remoting.client import RemotingClient
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
        self.config = broker.config
        self.master_addr = ""  # the master's broker (remoting) address
        self.master_ha_addr = ""  # the master's HA address, as learned from the name servers
        self.store: HAMessageStore | None = None
        self.slave_synchronize: SlaveSynchronize | None = None
        self.guard: SlaveWriteGuard | None = None
        self._next_sync = 0.0

    @property
    def is_slave(self) -> bool:
        return self.config.broker_role == SLAVE

    def build_store(self, store_config: StoreConfig) -> HAMessageStore:
        self.store = HAMessageStore(store_config, self.config.ha_config(), self.broker.clock,
                                    broker_addr=lambda: self.broker.addr,
                                    master_address=lambda: self.master_ha_addr or None,
                                    on_master=self._on_master_broker_addr)
        return self.store

    def ha_server_addr(self) -> str:
        port = self.store.ha_port if self.store is not None and self.store.ha_port else self.config.effective_ha_listen_port
        return f"{self.config.advertised_ip}:{port}"

    async def start(self, server: RemotingServer) -> None:
        """After the store opened and the processors registered: HA port, guard, slave sync."""
        assert self.store is not None
        if self.is_slave:
            self.guard = SlaveWriteGuard(self.broker)
            self.guard.install(server)
            self.slave_synchronize = SlaveSynchronize(self.broker, self.client)
        await self.store.start_ha()
        cfg = self.config
        if self.is_slave:
            source = cfg.ha_master_address or "the master named by the name servers"
            log.info("broker %s is a SLAVE (brokerId %d) of broker name %s; replicating from %s; HA port %d",
                     cfg.broker_name, cfg.broker_id, cfg.broker_name, source, self.store.ha_port)
        else:
            log.info("broker %s is the %s (brokerId 0); slaves replicate from its HA port %d",
                     cfg.broker_name, cfg.broker_role, self.store.ha_port)

    async def stop(self) -> None:
        if self.store is not None:
            await self.store.stop_ha()

    def learn_from(self, results: list[RegisterResult]) -> None:
        """A slave takes its master's addresses from the register answers (kept when absent)."""
        if not self.is_slave:
            return
        for result in results:
            if result.ok and result.master_addr and result.master_addr != self.broker.addr:
                if result.master_addr != self.master_addr:
                    log.info("slave %s: master broker address %s (from name server %s)",
                             self.config.broker_name, result.master_addr, result.namesrv_addr)
                self.master_addr = result.master_addr
                if self.slave_synchronize is not None:
                    self.slave_synchronize.master_addr = result.master_addr
            if result.ok and result.ha_server_addr and result.ha_server_addr != self.master_ha_addr:
                log.info("slave %s: master HA address %s (from name server %s)%s", self.config.broker_name,
                         result.ha_server_addr, result.namesrv_addr,
                         f"; ha_master_address {self.config.ha_master_address} is used instead"
                         if self.config.ha_master_address else "")
                self.master_ha_addr = result.ha_server_addr

    def _on_master_broker_addr(self, addr: str) -> None:
        if not self.master_addr:
            self.master_addr = addr
        if self.slave_synchronize is not None and not self.slave_synchronize.master_addr:
            self.slave_synchronize.master_addr = addr

    async def tick(self) -> None:
        """Every second on a slave: learn a master while none is known; sync every interval."""
        if not self.is_slave:
            return
        if not self.master_addr or not (self.master_ha_addr or self.config.ha_master_address):
            await self.broker.register_broker_all()
        now = time.monotonic()
        if self.slave_synchronize is not None and now >= self._next_sync and self.slave_synchronize.master_addr:
            self._next_sync = now + self.config.slave_synchronize_interval_s
            await self.slave_synchronize.sync_all()
