"""Asking brokers to make a group's members rebalance now (Gantry's GANTRY_NOTIFY_CONSUMER_IDS_CHANGED).

Each broker sends NOTIFY_CONSUMER_IDS_CHANGED to the members of the group connected to it, even
when the group disables those notifications. An Apache RocketMQ broker does not know the request
and answers REQUEST_CODE_NOT_SUPPORTED: that comes back as the broker's error.
"""

from __future__ import annotations

from collections.abc import Iterable

from brokers.engine.client.admin_bodies import parse_notified_client_ids
from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.errors import RemotingError
from brokers.engine.remoting.headers.replication import GantryNotifyConsumerIdsChangedRequestHeader
from brokers.gateway.client import answered, fanout_to_brokers, run


def notify_consumer_ids_changed(group: str, addrs: Iterable[str]) -> dict[str, tuple[str, ...] | RemotingError]:
    """Broker address -> the client ids it notified, or its error; all brokers at once."""
    out: dict[str, tuple[str, ...] | RemotingError] = {}
    code = RequestCode.GANTRY_NOTIFY_CONSUMER_IDS_CHANGED
    ext = GantryNotifyConsumerIdsChangedRequestHeader(consumer_group=group).encode()
    for addr, reply in run(fanout_to_brokers(code, addrs, ext)).items():
        answer = answered(reply, code)
        out[addr] = answer if isinstance(answer, RemotingError) else parse_notified_client_ids(answer.body)
    return out
