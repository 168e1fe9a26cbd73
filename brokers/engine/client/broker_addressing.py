"""Which address of a broker group a client talks to (RocketMQ 4.x's MQClientInstance
``findBrokerAddressInSubscribe`` / ``findBrokerAddressInAdmin``), and which addresses failed lately.

A broker name's route entry lists its group by broker id (``{0: master, 1: slave, ...}``):

* pulls go to the broker id the last pull answer of that queue suggested (``suggestWhichBrokerId``,
  0 until one answered), else the master, else any address of the broker name (the lowest id);
  so consumers keep reading a broker's queues from its slave while the master is gone, and go
  back to the master once it is listed again and a pull answer suggests it;
* offsets (commit, query) and queue positions go to the master, else any address (RocketMQ
  sends them to the master only while it is listed; a slave takes them while it is not);
* sends go to masters only (routes' publish queues list only broker names with a master).

Gantry adds one thing to RocketMQ's rule: an address whose call just failed with a connection
error or a timeout is skipped for ``UNREACHABLE_S`` when the group has another one, so a killed
master's queues move to the slave at the next pull instead of after the name server expires it
and the client's route poll notices (up to 2 min + 30 s in RocketMQ 4.x).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from brokers.engine.common.constants import MASTER_ID
from brokers.engine.common.route import BrokerData

__all__ = ["UNREACHABLE_S", "UnreachableAddrs", "find_broker_address_in_admin", "find_broker_address_in_subscribe"]

UNREACHABLE_S = 5.0


class UnreachableAddrs:
    """Addresses whose last call failed, each until ``UNREACHABLE_S`` after the failure (thread-safe)."""

    def __init__(self, monotonic: Callable[[], float] = time.monotonic, hold_s: float = UNREACHABLE_S) -> None:
        self._monotonic = monotonic
        self.hold_s = hold_s
        self._until: dict[str, float] = {}
        self._lock = threading.Lock()

    def mark(self, addr: str) -> None:
        with self._lock:
            self._until[addr] = self._monotonic() + self.hold_s

    def clear(self, addr: str) -> None:
        if addr in self._until:
            with self._lock:
                self._until.pop(addr, None)

    def reachable(self, addr: str) -> bool:
        until = self._until.get(addr)
        return until is None or self._monotonic() >= until


def _first_reachable(candidates: list[tuple[int, str]], reachable: Callable[[str], bool]) -> tuple[int, str] | None:
    for broker_id, addr in candidates:
        if reachable(addr):
            return broker_id, addr
    return candidates[0] if candidates else None


def find_broker_address_in_subscribe(
    data: BrokerData | None, broker_id: int, reachable: Callable[[str], bool] = lambda a: True
) -> tuple[int, str] | None:
    """(broker id, address) to pull from: ``broker_id``, else the master, else the lowest id; skipping
    unreachable ones while another exists. None when the broker name has no address."""
    if data is None or not data.broker_addrs:
        return None
    addrs = data.broker_addrs
    order = [broker_id] if broker_id in addrs else []
    if MASTER_ID in addrs and MASTER_ID not in order:
        order.append(MASTER_ID)
    order += [i for i in sorted(addrs) if i not in order]
    return _first_reachable([(i, addrs[i]) for i in order], reachable)


def find_broker_address_in_admin(
    data: BrokerData | None, reachable: Callable[[str], bool] = lambda a: True
) -> tuple[int, str] | None:
    """(broker id, address) for offsets and queue positions: the master, else the lowest id."""
    return find_broker_address_in_subscribe(data, MASTER_ID, reachable)
