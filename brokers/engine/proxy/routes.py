"""QueryRoute and QueryAssignment: a topic's name-server route as 5.x message queues.

Each broker of the route is given by its gRPC endpoint. The endpoint of a broker other than this one
is asked of that broker (GANTRY_GET_GRPC_ENDPOINT, 10009, any signed account may ask) and kept for
``ENDPOINT_TTL_S``; a broker that does not answer it (an older Gantry, Apache's broker) is given as
its remoting host with this endpoint's port, RocketMQ 5's convention for brokers with an embedded
proxy. Queues follow RocketMQ's RouteActivity: read-only, write-only and read-write queues numbered
in that order, each with the topic's accepted message types. An assignment (push consumers) is one
queue per readable master with id -1 (POP from any of its queues), or each queue for a FIFO group.
"""

from __future__ import annotations

import time

from brokers.engine.proxy.stubs import definition_pb2 as pb

from brokers.engine.common.perm import PERM_READ, PERM_WRITE
from brokers.engine.client.admin_types import TopicRouteData
from brokers.engine.proxy.convert import type_code

ENDPOINT_TTL_S = 30.0
MASTER_ID = 0


def split_addr(addr: str) -> tuple[str, int]:
    host, _, port = addr.rpartition(":")
    return host.strip("[]"), int(port)


def endpoints_of(addr: str) -> pb.Endpoints:
    host, port = split_addr(addr)
    out = pb.Endpoints(scheme=pb.IPv6 if ":" in host else pb.IPv4)
    out.addresses.add(host=host, port=port)
    return out


def _permission(perm: int) -> int:
    readable, writable = bool(perm & PERM_READ), bool(perm & PERM_WRITE)
    if readable and writable:
        return int(pb.READ_WRITE)
    if readable:
        return int(pb.READ)
    if writable:
        return int(pb.WRITE)
    return int(pb.NONE)


class EndpointCache:
    """Broker remoting address -> its gRPC address (None: ask it)."""

    def __init__(self) -> None:
        self._known: dict[str, tuple[str, float]] = {}

    def get(self, broker_addr: str) -> str | None:
        entry = self._known.get(broker_addr)
        if entry is None or entry[1] < time.monotonic():
            return None
        return entry[0]

    def put(self, broker_addr: str, grpc_addr: str) -> None:
        if len(self._known) > 10_000:
            self._known.clear()
        self._known[broker_addr] = (grpc_addr, time.monotonic() + ENDPOINT_TTL_S)


def message_queues(
    route: TopicRouteData, topic: pb.Resource, grpc_addrs: dict[str, str], accept_types: tuple[str, ...]
) -> list[pb.MessageQueue]:
    """The route's queues on the masters whose gRPC address is known (``grpc_addrs`` by broker name)."""
    out: list[pb.MessageQueue] = []
    types = [type_code(t) for t in accept_types]
    for qd in route.queue_datas:
        addr = grpc_addrs.get(qd.broker_name)
        if addr is None:
            continue
        broker = pb.Broker(name=qd.broker_name, id=MASTER_ID, endpoints=endpoints_of(addr))
        readable, writable = bool(qd.perm & PERM_READ), bool(qd.perm & PERM_WRITE)
        counts: tuple[tuple[int, int], ...]  # (5.x permission, queues)
        if readable and writable:
            rw = min(qd.read_queue_nums, qd.write_queue_nums)
            counts = ((pb.READ, qd.read_queue_nums - rw), (pb.WRITE, qd.write_queue_nums - rw), (pb.READ_WRITE, rw))
        elif writable:
            counts = ((pb.WRITE, qd.write_queue_nums),)
        elif readable:
            counts = ((pb.READ, qd.read_queue_nums),)
        else:
            counts = ((pb.NONE, max(1, qd.read_queue_nums, qd.write_queue_nums)),)
        queue_id = 0
        for permission, count in counts:
            for _ in range(count):
                out.append(
                    pb.MessageQueue(
                        topic=topic, id=queue_id, permission=permission, broker=broker, accept_message_types=types
                    )
                )
                queue_id += 1
    return out


def assignments(
    route: TopicRouteData, topic: pb.Resource, grpc_addrs: dict[str, str], fifo: bool
) -> list[pb.Assignment]:
    out: list[pb.Assignment] = []
    for qd in route.queue_datas:
        addr = grpc_addrs.get(qd.broker_name)
        if addr is None or not qd.perm & PERM_READ or qd.read_queue_nums <= 0:
            continue
        broker = pb.Broker(name=qd.broker_name, id=MASTER_ID, endpoints=endpoints_of(addr))
        permission = _permission(qd.perm)
        ids = range(qd.read_queue_nums) if fifo else (-1,)
        for queue_id in ids:
            out.append(
                pb.Assignment(
                    message_queue=pb.MessageQueue(topic=topic, id=queue_id, permission=permission, broker=broker)
                )
            )
    return out
