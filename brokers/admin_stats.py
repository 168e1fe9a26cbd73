"""Every queue's offsets and every group's committed offsets, one request per broker.

The metrics sampler's read (Gantry's GANTRY_GET_QUEUE_STATS, see
``brokers/engine/broker/processors/gantry_ext.py``): each broker answers everything at one instant
of its own clock, so rates computed from consecutive answers are not skewed by request latency.
"""
from __future__ import annotations

from dataclasses import dataclass

from brokers.admin_extras import fanout_to_brokers, namesrv_survey, reply_failure, require_cluster_info, run
from brokers.engine.client.admin_bodies import as_dict, load_object
from brokers.engine.remoting.codes import RequestCode
from brokers.engine.remoting.errors import RemotingError


@dataclass(frozen=True)
class QueueStat:
    topic: str
    queue_id: int
    min_offset: int
    max_offset: int
    put_bytes: int | None  # record bytes put since the broker started; None where the broker does not say


@dataclass(frozen=True)
class GroupOffset:
    group: str
    topic: str
    queue_id: int
    committed_offset: int
    max_offset: int


@dataclass(frozen=True)
class BrokerStats:
    broker_name: str
    addr: str
    timestamp_ms: int
    queues: tuple[QueueStat, ...]
    offsets: tuple[GroupOffset, ...]


def master_addrs() -> dict[str, str]:
    """Broker name -> master address, from the first name server that answers."""
    info = require_cluster_info(namesrv_survey())
    return {name: data.master_addr for name, data in sorted(info.broker_datas.items()) if data.master_addr}


def parse_queue_stats(name: str, addr: str, body: bytes) -> BrokerStats:
    obj = as_dict(load_object(body))
    queues = tuple(
        QueueStat(str(q["topic"]), int(q["queueId"]), int(q["minOffset"]), int(q["maxOffset"]),
                  None if q.get("putBytes") is None else int(q["putBytes"]))
        for q in obj.get("queues") or ())
    offsets = tuple(
        GroupOffset(str(o["group"]), str(o["topic"]), int(o["queueId"]), int(o["offset"]), int(o["maxOffset"]))
        for o in obj.get("offsets") or ())
    return BrokerStats(str(obj.get("brokerName") or name), addr, int(obj["timestamp"]), queues, offsets)


def broker_stats(brokers: dict[str, str] | None = None) -> dict[str, BrokerStats | RemotingError]:
    """Broker name -> its stats or the error it gave; ``brokers`` (name -> master address)
    defaults to every master the name server knows. One request per broker, all at once."""
    brokers = master_addrs() if brokers is None else brokers
    by_addr = {addr: name for name, addr in brokers.items()}
    out: dict[str, BrokerStats | RemotingError] = {}
    for addr, reply in run(fanout_to_brokers(RequestCode.GANTRY_GET_QUEUE_STATS, by_addr)).items():
        error = reply_failure(reply, RequestCode.GANTRY_GET_QUEUE_STATS)
        out[by_addr[addr]] = error if error is not None else parse_queue_stats(by_addr[addr], addr, reply.body)
    return out
