"""Who holds which queue of a group, what they should hold, and whether they got there.

:func:`observe` reads a group once: its connections (GANTRY_GET_ALL_CONSUMER_CONNECTIONS per
master, or GET_CONSUMER_CONNECTION_LIST), the readable queues of each subscribed topic (retry
topics left out, as the live check does), and every member's running info, all at once. The
result is the live check of each topic (:mod:`consumers.live`).

:func:`assess` decides, without I/O, whether a group has converged:

- when every member answered and all report one strategy the console can recompute (AVG,
  AVG_BY_CIRCLE, CONSISTENT_HASH with its default 10 virtual nodes), the expected allocation is
  known: converged means every member holds exactly its expected queues;
- otherwise (CONFIG, MACHINE_ROOM and MACHINE_ROOM_NEARBY need the members' configuration, or
  members disagree): converged means every queue is held by exactly one member and the holders
  did not change since the previous look (stable).

Worked example: a topic of 8 queues (broker-a 0..3, broker-b 0..3), AVG. Members c1, c2, c3
hold a0 a1 a2 / a3 b0 b1 / b2 b3. c4 joins; it rebalances by itself when it starts and takes
b2 b3, but the others are not told (the group disables notifications), so b2 and b3 are held
twice. A trigger makes everyone rebalance: AVG over four gives a0 a1 / a2 a3 / b0 b1 / b2 b3.
Moved (holders changed): a2 (c1 -> c2), b0 and b1 (c2 -> c3), b2 and b3 (c3, c4 -> c4): 5 —
the same count as comparing AVG over three with AVG over four (:func:`moved`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from brokers.engine.common.constants import RETRY_GROUP_TOPIC_PREFIX
from brokers.engine.common.message_queue import MessageQueue
from brokers.gateway.connections import consumer_connections, consumer_running_infos
from brokers.gateway.errors import TopicNotFound
from brokers.gateway.topic_routes import topic_route
from consumers import live
from consumers.types import LiveCheck

Holders = dict[MessageQueue, tuple[str, ...]]  # queue -> client ids holding it (sorted; () nobody)
POLL_RUNNING_INFO_TIMEOUT_S = 2.0  # a poll of a job waits this long for members; the next poll asks again


@dataclass(frozen=True)
class Observation:
    """One look at a group: members (the brokers' view), the brokers they are connected to, and
    the live check of each subscribed topic."""

    group: str
    members: tuple[str, ...]
    broker_addrs: tuple[str, ...]
    message_model: str | None
    checks: tuple[LiveCheck, ...]
    errors: tuple[str, ...] = ()

    @property
    def online(self) -> bool:
        return bool(self.members)

    @property
    def not_answering(self) -> tuple[str, ...]:
        return tuple(sorted({cid for c in self.checks for cid in c.not_answering}))

    @property
    def strategy(self) -> str:
        names = sorted({m.strategy for c in self.checks for m in c.members if m.answered})
        return ", ".join(names)

    @property
    def expected_known(self) -> bool:
        return bool(self.checks) and all(c.check is not None and c.check.expected is not None for c in self.checks)

    def queues(self) -> tuple[MessageQueue, ...]:
        """Every readable queue of the subscribed topics, then any held queue the route lacks."""
        out = dict.fromkeys(q for c in self.checks for q in c.queues)
        for c in self.checks:
            out.update(dict.fromkeys(q for m in c.members for q in m.queues))
        return tuple(out)

    def holders(self) -> Holders:
        held: dict[MessageQueue, list[str]] = {q: [] for q in self.queues()}
        for c in self.checks:
            for m in c.members:
                for q in m.queues:
                    held[q].append(m.client_id)
        return {q: tuple(sorted(set(cids))) for q, cids in held.items()}

    def expected(self) -> dict[MessageQueue, str] | None:
        """Queue -> the member the strategy gives it to, when the strategy is known (else None)."""
        if not self.expected_known:
            return None
        out: dict[MessageQueue, str] = {}
        for c in self.checks:
            for cid, queues in c.check.expected.assignment.items():  # type: ignore[union-attr]
                out.update(dict.fromkeys(queues, cid))
        return out


@dataclass(frozen=True)
class Assessment:
    converged: bool
    queues_total: int
    queues_settled: int  # held as expected (strategy known) or by exactly one member
    detail: str  # why not converged ("" when converged)

    def progress(self) -> str:
        return f"{self.queues_settled}/{self.queues_total} queues settled" + (f"; {self.detail}" if self.detail else "")


def _names(queues) -> str:
    shown = [f"{q.topic}/{q.broker_name}:{q.queue_id}" for q in list(queues)[:6]]
    return ", ".join(shown) + (" …" if len(queues) > 6 else "")


def assess(obs: Observation, previous: Holders | None = None) -> Assessment:
    """Whether ``obs`` shows a converged group (``previous``: the holders of the look before,
    for the stability rule when the expected allocation is unknown)."""
    holders = obs.holders()
    total = len(holders)
    if not obs.online:
        return Assessment(False, total, 0, f"no member of {obs.group} is online")
    if obs.not_answering:
        return Assessment(False, total, 0, f"no running info from {', '.join(obs.not_answering)}")
    if not obs.checks:
        return Assessment(True, 0, 0, "")
    expected = obs.expected()
    if expected is not None:
        settled = [q for q, cids in holders.items() if q in expected and cids == (expected[q],)]
        wrong = [q for q in holders if q not in settled]
        deviating = sorted({d.cid for c in obs.checks for d in c.check.deviations})  # type: ignore[union-attr]
        detail = ""
        if wrong or deviating:
            detail = f"{len(wrong)} queue(s) not yet held as {obs.strategy} expects ({_names(wrong)})"
        return Assessment(not detail and all(c.consistent for c in obs.checks), total, len(settled), detail)
    once = [q for q, cids in holders.items() if len(cids) == 1]
    unowned = [q for q, cids in holders.items() if not cids]
    shared = [q for q, cids in holders.items() if len(cids) > 1]
    if unowned or shared:
        parts = ([f"{len(unowned)} held by nobody ({_names(unowned)})"] if unowned else []) + (
            [f"{len(shared)} held twice ({_names(shared)})"] if shared else []
        )
        return Assessment(False, total, len(once), "; ".join(parts))
    if previous is None or previous != holders:
        return Assessment(False, total, len(once), "every queue held once; waiting one more look to see it stable")
    return Assessment(True, total, len(once), "")


def owners_text(cids: tuple[str, ...]) -> str:
    return ", ".join(cids)


def moved(before: str, after: str) -> bool:
    """Whether a queue's holders changed (texts of :func:`owners_text`)."""
    return set(filter(None, before.split(", "))) != set(filter(None, after.split(", ")))


# -- reading the cluster ---------------------------------------------------------------------------------


def subscribed_topics(subscription_table: Mapping[str, object]) -> tuple[str, ...]:
    return tuple(sorted(t for t in subscription_table if not t.startswith(RETRY_GROUP_TOPIC_PREFIX)))


def _topic_queues(topic: str) -> tuple[MessageQueue, ...] | None:
    try:
        return tuple(topic_route(topic).subscribe_queues())
    except TopicNotFound:
        return None  # subscribed to a topic that is gone: nothing to hold


def observe(group: str, masters: Mapping[str, str], timeout_s: float = POLL_RUNNING_INFO_TIMEOUT_S) -> Observation:
    """Read the group once (``masters``: master address -> broker name)."""
    conns = consumer_connections([group], masters)[group]
    members = tuple(c.client_id for c in conns.connections)
    addrs = tuple(sorted({a for addrs in conns.broker_addrs.values() for a in addrs}))
    if not members:
        return Observation(group, (), addrs, conns.message_model, (), conns.errors)
    targets = {cid: addrs_[0] for cid, addrs_ in conns.broker_addrs.items() if addrs_}
    infos = consumer_running_infos(group, targets, timeout_s)
    checks = []
    for topic in subscribed_topics(conns.subscription_table):
        queues = _topic_queues(topic)
        if queues is None:
            continue
        reports = tuple(live.member_report(cid, infos[cid], topic) for cid in sorted(infos))
        checks.append(live.live_check(group, topic, queues, reports))
    return Observation(group, members, addrs, conns.message_model, tuple(checks), conns.errors)
