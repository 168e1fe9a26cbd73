"""The ACL of the cluster's brokers: read (accounts without secrets) and changed, broker by broker.

Each call is one of the engine's plans (:mod:`brokers.engine.client.admin_acl`) run on the shared
admin client, which signs with MQ ACCESS_KEY / SECRET_KEY (an admin account: the ACL codes are
admin-only). Like RocketMQ's ``mqadmin updateAclConfig -c CLUSTER``, a change goes to every broker
of the cluster, masters and slaves, since each checks requests against its own file (brokers of
``run_cluster --acl-file`` share one file; each rewrites it the same way).
"""

from __future__ import annotations

from brokers.engine.client.admin_acl import (
    AccessConfigChange,
    AclAccount,
    AclListing,
    create_and_update_access_config,
    delete_access_config,
    get_acl_accounts,
    update_global_white_addrs_config,
)
from brokers.engine.client.admin_types import BrokerInfo
from brokers.engine.remoting.errors import RemotingError
from brokers.gateway.client import run
from brokers.gateway.cluster import cluster_info

__all__ = [
    "AccessConfigChange",
    "AclAccount",
    "AclListing",
    "acl_account_delete",
    "acl_account_upsert",
    "acl_brokers",
    "acl_global_white_update",
    "acl_read",
]


def acl_brokers(cluster: str | None = None) -> tuple[BrokerInfo, ...]:
    """Every broker (masters and slaves) of ``cluster``, or of every cluster; 503 when no name server answers."""
    return tuple(b for b in cluster_info().brokers if cluster is None or b.cluster == cluster)


def acl_read(addr: str) -> AclListing:
    """The ACL in force on the broker at ``addr`` (GANTRY_GET_ACL_ACCOUNTS): never a secret."""
    return run(get_acl_accounts(addr))


def _each(addrs: tuple[str, ...], plan_for) -> dict[str, RemotingError | None]:
    """Run one plan per broker, in turn; address -> its error (None: applied)."""
    out: dict[str, RemotingError | None] = {}
    for addr in addrs:
        try:
            run(plan_for(addr))
        except RemotingError as exc:
            out[addr] = exc
        else:
            out[addr] = None
    return out


def acl_account_upsert(addrs: tuple[str, ...], change: AccessConfigChange) -> dict[str, RemotingError | None]:
    """UPDATE_AND_CREATE_ACL_CONFIG to each broker."""
    return _each(addrs, lambda addr: create_and_update_access_config(addr, change))


def acl_account_delete(addrs: tuple[str, ...], access_key: str) -> dict[str, RemotingError | None]:
    """DELETE_ACL_CONFIG to each broker."""
    return _each(addrs, lambda addr: delete_access_config(addr, access_key))


def acl_global_white_update(addrs: tuple[str, ...], addresses: tuple[str, ...]) -> dict[str, RemotingError | None]:
    """UPDATE_GLOBAL_WHITE_ADDRS_CONFIG to each broker (the list joined with commas; empty clears it)."""
    return _each(addrs, lambda addr: update_global_white_addrs_config(addr, ",".join(addresses)))
