"""Reads of broker state for the console, through the admin client only."""
from __future__ import annotations

import logging
from dataclasses import dataclass

from brokers.admin_client import get_admin_client
from brokers.engine.remoting.errors import RemotingError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BrokerRow:
    cluster: str
    broker_name: str
    broker_id: int
    addr: str
    version: str
    boot_timestamp: str
    msg_put_total_today: str
    msg_get_total_today: str
    commit_log_disk_ratio: str
    error: str = ""


@dataclass(frozen=True)
class BrokerOverview:
    namesrv_addr: str
    brokers: tuple[BrokerRow, ...]
    error: str = ""


def _percent(ratio: str) -> str:
    """Render a 0..1 ratio string as a percentage; pass anything else through."""
    try:
        return f"{float(ratio) * 100:.1f} %"
    except ValueError:
        return ratio


def broker_overview() -> BrokerOverview:
    """Return the live brokers the name servers know, each with its runtime figures.

    A broker that does not answer its runtime query still appears (the name server holds it
    live), with the error; a name server that does not answer gives an empty list and an error.
    """
    client = get_admin_client()
    namesrv = client.namesrv_addr_string
    try:
        info = client.examine_broker_cluster_info()
    except (RemotingError, OSError) as exc:
        log.warning("cluster info unavailable: %s", exc)
        return BrokerOverview(namesrv_addr=namesrv, brokers=(), error=f"name server unreachable: {exc}")
    rows = []
    for b in sorted(info.brokers, key=lambda b: (b.cluster, b.broker_name, b.broker_id)):
        try:
            rt = client.get_broker_runtime_info(b.addr)
            error = ""
        except (RemotingError, OSError) as exc:
            rt, error = {}, str(exc)
        rows.append(
            BrokerRow(
                cluster=b.cluster,
                broker_name=b.broker_name,
                broker_id=b.broker_id,
                addr=b.addr,
                version=rt.get("brokerVersionDesc", ""),
                boot_timestamp=rt.get("bootTimestamp", ""),
                msg_put_total_today=rt.get("msgPutTotalTodayNow", ""),
                msg_get_total_today=rt.get("msgGetTotalTodayNow", ""),
                commit_log_disk_ratio=_percent(rt.get("commitLogDiskRatio", "")),
                error=error,
            )
        )
    return BrokerOverview(namesrv_addr=namesrv, brokers=tuple(rows))
