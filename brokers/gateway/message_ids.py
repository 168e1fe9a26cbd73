"""Offset message ids resolved against the cluster, never taken as addresses to connect to.

An offset message id encodes its store host (``ip:port``) and commit-log offset. Anyone may type
one into the console, so the host is only a claim: the message is read (VIEW_MESSAGE_BY_ID) only
when that address is a member of this cluster (a master or a slave in the name servers' cluster
info). Any other id gets one error, :data:`NOT_IN_CLUSTER`, whatever the address would have
answered, so the console cannot be used to probe other hosts and ports (SSRF).
"""

from __future__ import annotations

from dataclasses import dataclass

from brokers.engine.client.admin import decode_offset_msg_id
from brokers.engine.common.message import MessageExt
from brokers.gateway.client import get_admin_client
from brokers.gateway.cluster import broker_names_by_addr
from console.errors import NotFound

NOT_IN_CLUSTER = "no broker of this cluster holds a message with this id"


class MessageIdNotInCluster(NotFound):
    """The id names no broker of this cluster (or that broker has no message at its offset)."""

    def __init__(self) -> None:
        super().__init__(NOT_IN_CLUSTER)


@dataclass(frozen=True)
class ResolvedMessageId:
    msg_id: str
    broker_name: str
    broker_addr: str
    commit_log_offset: int


def resolve_offset_msg_id(msg_id: str, names: dict[str, str] | None = None) -> ResolvedMessageId:
    """The cluster member an offset message id points at; MessageIdNotInCluster when none.

    MQClientError (code -1) when ``msg_id`` is not an offset message id at all.
    """
    addr, offset = decode_offset_msg_id(msg_id)
    names = broker_names_by_addr() if names is None else names
    if addr not in names:
        raise MessageIdNotInCluster()
    return ResolvedMessageId(msg_id.strip(), names[addr], addr, offset)


def view_message_in_cluster(resolved: ResolvedMessageId) -> MessageExt:
    """The message at a resolved id, read from its broker (a cluster member only)."""
    return get_admin_client().view_message(resolved.msg_id)
