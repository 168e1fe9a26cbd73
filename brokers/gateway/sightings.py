"""Recording which brokers answered, for the overview's "last seen" and its "expired" alert.

The name server forgets a broker that stops heartbeating, and its protocol does not expose
heartbeat times; :class:`brokers.models.BrokerSighting` rows remember each broker the console
saw answering, each under the name-server set (tier) it answered in. The periodic health scan
(``health.scan``, every 30 s, one scan per set) records them from its reading of the overview; the overview and the API only read them, so a page load writes nothing
and a broker that vanishes while nobody has the console open still shows as expired.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Protocol

from django.utils import timezone

from brokers.models import BrokerSighting
from console import namesrv_scope

__all__ = ["SeenBroker", "broker_sightings_record"]


class SeenBroker(Protocol):
    """A broker that answered: where it is and who it says it is (an overview row, say; read-only)."""

    @property
    def addr(self) -> str: ...
    @property
    def cluster(self) -> str: ...
    @property
    def broker_name(self) -> str: ...
    @property
    def broker_id(self) -> int: ...


def broker_sightings_record(*, brokers: Iterable[SeenBroker], now: datetime | None = None) -> int:
    """Note that each of ``brokers`` of the current set answered at ``now`` (default: now); how many rows were written.

    A broker seen for the first time gets ``first_seen_at`` too; one seen before keeps it, and
    takes its current cluster, name and id (a broker restarted under another name keeps its row).
    """
    now = now or timezone.now()
    tier = namesrv_scope.current_name()
    known = {s.addr: s for s in BrokerSighting.objects.filter(namesrv_set=tier)}
    written = 0
    for b in brokers:
        seen = known.get(b.addr)
        if seen is None:
            known[b.addr] = BrokerSighting.objects.create(
                namesrv_set=tier,
                addr=b.addr,
                cluster=b.cluster,
                broker_name=b.broker_name,
                broker_id=b.broker_id,
                first_seen_at=now,
                last_seen_at=now,
            )
        else:
            BrokerSighting.objects.filter(pk=seen.pk).update(
                last_seen_at=now, cluster=b.cluster, broker_name=b.broker_name, broker_id=b.broker_id
            )
        written += 1
    return written
