"""acl_overview: the ACL as the cluster's brokers hold it, without secrets (what the page and the API show)."""

from __future__ import annotations

from dataclasses import dataclass

from brokers.gateway.acl import AclAccount, AclListing, acl_brokers, acl_read
from brokers.gateway.errors import RemotingError
from console.errors import InvalidInput


@dataclass(frozen=True)
class BrokerAcl:
    """One broker's answer: its ACL version, or why it could not be read."""

    cluster: str
    broker_name: str
    broker_id: int
    addr: str
    counter: int | None = None  # the ACL file's dataVersion counter
    accounts: int | None = None
    reload_error: str = ""  # the broker's file is invalid: an older config is in force
    error: str = ""


@dataclass(frozen=True)
class AclOverview:
    """The accounts and global white addresses of the first broker that answered (masters first),
    each broker's version, and whether every broker that answered holds the same ACL."""

    accounts: tuple[AclAccount, ...]
    global_white_remote_addresses: tuple[str, ...]
    brokers: tuple[BrokerAcl, ...]
    consistent: bool
    source: str  # the address the accounts were read from ("" when none answered)
    error: str = ""

    def account(self, access_key: str) -> AclAccount | None:
        return next((a for a in self.accounts if a.access_key == access_key), None)


def _same(a: AclListing, b: AclListing) -> bool:
    return (a.accounts, a.global_white_remote_addresses) == (b.accounts, b.global_white_remote_addresses)


def acl_overview(*, cluster: str | None = None) -> AclOverview:
    """Read every broker's ACL (masters before slaves); never raises for a broker that does not answer.

    A ``cluster`` the name servers do not know is the caller's mistake (InvalidInput naming the field),
    not an unavailable ACL."""
    try:
        brokers = sorted(acl_brokers(cluster), key=lambda b: (b.broker_id != 0, b.cluster, b.broker_name, b.broker_id))
        known = sorted({b.cluster for b in acl_brokers()}) if cluster is not None and not brokers else ()
    except RemotingError as exc:
        return AclOverview((), (), (), True, "", f"no name server answered: {exc}")
    if cluster is not None and not brokers and known:
        raise InvalidInput("cluster", f"unknown cluster {cluster!r}; known: {', '.join(known)}.")
    rows, listings = [], []
    for broker in brokers:
        try:
            listing = acl_read(broker.addr)
        except RemotingError as exc:
            rows.append(BrokerAcl(broker.cluster, broker.broker_name, broker.broker_id, broker.addr, error=str(exc)))
            continue
        listings.append(listing)
        rows.append(
            BrokerAcl(
                broker.cluster,
                broker.broker_name,
                broker.broker_id,
                broker.addr,
                listing.counter,
                len(listing.accounts),
                listing.reload_error,
            )
        )
    rows.sort(key=lambda r: (r.cluster, r.broker_name, r.broker_id))
    if not listings:
        error = "no broker answered" if rows else "the name servers know no broker"
        return AclOverview((), (), tuple(rows), True, "", error if not rows else f"{error}: {rows[0].error}")
    first = listings[0]
    return AclOverview(
        first.accounts,
        first.global_white_remote_addresses,
        tuple(rows),
        all(_same(first, other) for other in listings[1:]),
        first.broker_addr,
    )
