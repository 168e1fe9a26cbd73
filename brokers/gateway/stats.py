"""Every queue's offsets and every group's committed offsets, one request per broker.

The metrics sampler's read (Gantry's GANTRY_GET_QUEUE_STATS, see
``brokers/engine/broker/processors/gantry_ext.py``): each broker answers everything at one instant
of its own clock, so rates computed from consecutive answers are not skewed by request latency.
The answer is read by :mod:`brokers.engine.client.admin_queue_stats`.
"""

from __future__ import annotations

from brokers.engine.client.admin_queue_stats import BrokerQueueStats, GroupOffset, QueueStat, parse_queue_stats
from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.errors import RemotingError
from brokers.gateway.client import answered, fanout_to_brokers, run
from brokers.gateway.cluster import masters

__all__ = ["BrokerQueueStats", "GroupOffset", "QueueStat", "broker_stats"]


def broker_stats(brokers: dict[str, str] | None = None) -> dict[str, BrokerQueueStats | RemotingError]:
    """Broker name -> its stats or the error it gave; ``brokers`` (name -> master address)
    defaults to every master the name server knows. One request per broker, all at once."""
    brokers = masters() if brokers is None else brokers
    by_addr = {addr: name for name, addr in brokers.items()}
    out: dict[str, BrokerQueueStats | RemotingError] = {}
    for addr, reply in run(fanout_to_brokers(RequestCode.GANTRY_GET_QUEUE_STATS, by_addr)).items():
        answer = answered(reply, RequestCode.GANTRY_GET_QUEUE_STATS)
        out[by_addr[addr]] = (
            answer if isinstance(answer, RemotingError) else parse_queue_stats(by_addr[addr], addr, answer.body)
        )
    return out
