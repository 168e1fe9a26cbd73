"""Who may claim a broker id at registration: the stale-epoch refusal and the live-holder refusal.

A REGISTER_BROKER claims ``(brokerName, brokerId) -> brokerAddr``. ``RouteInfoManager`` asks these
two checks, in order, before it changes anything; a refusal changes no table.

1. **Stale epoch** (promotion's fencing, docs/broker-group-promotion.md): a master (id 0) whose
   ``gantryEpoch`` is below the group's highest is a deposed master; so is one with the group's
   epoch (above 0) while another live address holds id 0 with it. The refusal carries
   ``next_slave_id`` (where to rejoin), which tells the broker to step down.
2. **Live holder** (route-hijack protection; beyond RocketMQ 4.x, where the last registration wins):
   while the id is held by a *live* registration (not expired; its connection still open, since a
   closed connection drops its registrations at once) at another address over *another
   connection*, the claim is refused. A master claim with an epoch above the group's highest is a
   promotion and replaces the holder. The refusal carries no ``next_slave_id``: the claimant is
   not told to step down, it keeps retrying at its registration interval and succeeds once the
   holder's connection closes or its registration expires (``broker_channel_expired_s``).

The same connection may move its own registration to another address (the address rule in
``broker_address_rule.py`` has already tied the address to that connection's host).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import Protocol

from brokers.engine.common.constants import MASTER_ID


class LiveRegistration(Protocol):
    """What the checks read of a live registration (``route_info.BrokerLiveInfo``)."""

    channel_key: Hashable | None
    ha_server_addr: str
    remote_addr: str


LiveLookup = Callable[[str], "LiveRegistration | None"]  # address -> its registration, or None


@dataclass(frozen=True, slots=True)
class ClaimRefusal:
    """Why a claim is refused, and what the answer tells the claimant."""

    why: str
    master_addr: str  # the group's master as registered here ("" when none)
    ha_server_addr: str  # that master's HA address
    next_slave_id: int = 0  # > 0: a stale master, which should rejoin the group with this id


def stale_epoch_refusal(
    broker_name: str,
    broker_addr: str,
    broker_id: int,
    epoch: int,
    highest: int,
    addrs: Mapping[int, str],
    live: LiveLookup,
    registered: LiveLookup,
) -> ClaimRefusal | None:
    """Check 1 of the module docstring; ``highest`` is the group's epoch, ``addrs`` its id -> address,
    ``live`` finds live registrations only, ``registered`` expired ones too (for the master's HA address)."""
    if broker_id != MASTER_ID:
        return None
    current = addrs.get(MASTER_ID, "")
    holder = live(current) if current else None
    if epoch < highest:
        why = f"stale epoch {epoch} < {highest}; the master of {broker_name} is now {current or 'not registered'}"
    elif epoch == highest and epoch > 0 and current and current != broker_addr and holder is not None:
        why = f"epoch {epoch} of {broker_name} is held by its master {current}; a new master needs a higher epoch"
    else:
        return None
    next_id = 1 + max((i for i, a in addrs.items() if a != broker_addr), default=0)
    known = registered(current) if current else None
    return ClaimRefusal(why, current, known.ha_server_addr if known else "", next_id)


def live_holder_refusal(
    broker_name: str,
    broker_addr: str,
    broker_id: int,
    epoch: int,
    highest: int,
    addrs: Mapping[int, str],
    live: LiveLookup,
    registered: LiveLookup,
    channel_key: Hashable | None,
) -> ClaimRefusal | None:
    """Check 2 of the module docstring; ``channel_key`` is the claimant's connection."""
    current = addrs.get(broker_id, "")
    if not current or current == broker_addr:
        return None
    holder = live(current)
    if holder is None or holder.channel_key == channel_key:
        return None
    if broker_id == MASTER_ID and epoch > highest:
        return None  # a promotion
    why = (
        f"{broker_name} id {broker_id} is held by {current}, registered live over another connection "
        f"(peer {holder.remote_addr or 'unknown'}); {broker_addr} cannot replace it"
        + ("; a new master needs a higher gantryEpoch" if broker_id == MASTER_ID else "")
    )
    master = addrs.get(MASTER_ID, "")
    known = registered(master) if master else None
    return ClaimRefusal(why, master, known.ha_server_addr if known else "")
