"""A consumer group's POP state (RocketMQ 5's message-level consumption) on every master at once.

One GANTRY_GET_POP_STATE (10010, ``brokers/engine/broker/processors/pop_state.py``) per master
broker, all at once: per queue the group popped, its next cursor, its deliveries in flight and the
first ``max_entries`` of them per broker (offset, pop time, invisible until, delivery attempt).
POP state lives on masters only (it is not replicated), so slaves are not asked. A broker that
answers REQUEST_CODE_NOT_SUPPORTED (Apache RocketMQ) has no POP state to show here: left out, no
error; any other failure is an error of the result, naming the broker.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone

from brokers.engine.client.admin_bodies import load_object
from brokers.engine.client.plan import Reply
from brokers.engine.remoting.codes import RequestCode, ResponseCode
from brokers.engine.remoting.errors import RemotingError
from brokers.engine.remoting.headers.replication import GetPopStateRequestHeader
from brokers.gateway.client import answered, fanout_to_brokers, run

CODE = RequestCode.GANTRY_GET_POP_STATE


def _dt(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


@dataclass(frozen=True, slots=True)
class PopDelivery:
    """One message popped and not acked: taken again once ``invisible_until`` passes, unless acked."""

    offset: int
    pop_time: int  # ms
    invisible_until: int  # ms
    attempt: int  # the 5.x delivery attempt (reconsume times + 1)
    msg_id: str  # the record's offset message id ("" when the broker did not say)

    @property
    def pop_at(self) -> datetime:
        return _dt(self.pop_time)

    @property
    def invisible_until_at(self) -> datetime:
        return _dt(self.invisible_until)


@dataclass(frozen=True, slots=True)
class PopQueue:
    broker_name: str
    topic: str
    queue_id: int
    cursor: int  # the next offset the group never popped
    in_flight: int  # deliveries not acked, all of them (``deliveries`` may list fewer)
    deliveries: tuple[PopDelivery, ...]


@dataclass(frozen=True, slots=True)
class GroupPopState:
    group: str
    queues: tuple[PopQueue, ...]  # by topic, broker, queue id
    truncated: bool  # a broker listed fewer deliveries than it has in flight
    errors: tuple[str, ...] = ()

    @property
    def has_state(self) -> bool:
        return bool(self.queues)

    @property
    def in_flight(self) -> int:
        return sum(q.in_flight for q in self.queues)

    @property
    def deliveries(self) -> tuple[tuple[PopQueue, PopDelivery], ...]:
        """Every delivery listed, with its queue, in the queues' order then by offset."""
        return tuple((q, d) for q in self.queues for d in q.deliveries)


def parse_pop_state(body: dict, broker_name: str) -> tuple[list[PopQueue], bool]:
    """The queues of one broker's answer (named ``broker_name`` when it does not say), and its truncated flag."""
    name = str(body.get("brokerName") or broker_name)
    queues = []
    for q in body.get("queues") or ():
        deliveries = tuple(
            PopDelivery(
                int(d["offset"]),
                int(d["popTime"]),
                int(d["invisibleUntil"]),
                int(d["attempt"]),
                str(d.get("msgId") or ""),
            )
            for d in q.get("deliveries") or ()
        )
        queues.append(
            PopQueue(name, str(q["topic"]), int(q["queueId"]), int(q["cursor"]), int(q["inFlight"]), deliveries)
        )
    return queues, bool(body.get("truncated"))


def group_pop_state(
    group: str, masters: Mapping[str, str], *, topic: str | None = None, max_entries: int | None = None
) -> GroupPopState:
    """The group's POP state on each master (``masters``: address -> broker name), asked all at once."""
    ext = GetPopStateRequestHeader(consumer_group=group, topic=topic or None, max_entries=max_entries).encode()
    queues: list[PopQueue] = []
    errors: list[str] = []
    truncated = False
    for addr, reply in run(fanout_to_brokers(CODE, masters, ext)).items():
        if isinstance(reply, Reply) and reply.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED:
            continue  # not a Gantry broker: no POP state to read
        answer = answered(reply, CODE)
        if isinstance(answer, RemotingError):
            errors.append(f"{masters[addr]} ({addr}): {answer}")
            continue
        try:
            found, cut = parse_pop_state(load_object(answer.body), masters[addr])
        except (KeyError, TypeError, ValueError) as exc:
            errors.append(f"{masters[addr]} ({addr}): unreadable POP state: {exc}")
            continue
        queues.extend(found)
        truncated = truncated or cut
    queues.sort(key=lambda q: (q.topic, q.broker_name, q.queue_id))
    return GroupPopState(group, tuple(queues), truncated, tuple(errors))
