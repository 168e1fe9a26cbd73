"""Topic writes: create, update, delete, send a test message. Each checks the actor's role,
refuses bad input before anything changes on a broker, writes through the admin client and
records an audit entry (console.audit).

Cluster mode gives every master of a cluster the same read/write queue counts and perm;
broker mode gives each named broker its own. A value left out (None) takes, in order: the
top-level value of the spec, the broker's current value, the default (8 queues, perm 6).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from django.core.exceptions import ValidationError
from django.utils import timezone

from brokers.engine.common.message import Message
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.topic_attributes import MESSAGE_TYPE
from brokers.engine.common.topic_config import TopicConfig
from brokers.gateway.console_producer import console_producer
from brokers.gateway.topics import (
    create_or_update_topic,
    delete_topic,
    delete_topic_in_broker,
    delete_topic_in_namesrv,
)
from brokers.gateway.types import ClusterInfo, TopicRouteData
from console.actor import Actor
from console.audit import audited
from console.errors import Conflict, InvalidInput, NotFound, one_target
from console.roles import Role
from topics import selectors
from topics.models import ShrinkProgress
from topics.rules import DEFAULT_PERM, DEFAULT_QUEUE_NUMS, validate_message_type, validate_new_topic_name
from topics.types import (
    SHRINK_DONE,
    SHRINK_STEPS,
    SHRINK_WRITE,
    SYSTEM,
    BrokerQueues,
    QueueSpec,
    SentMessage,
    ShrinkStatus,
    TopicDeletion,
    TopicDetail,
    TopicSpec,
)
from topics.unreachable import QueueEdit, check_confirmed, unreachable_messages

CONSOLE_PRODUCER_GROUP = "GANTRY_CONSOLE_PRODUCER"  # the producer group of test messages
MAX_TEST_MESSAGE_BYTES = 64 * 1024  # a test message is a probe, not a payload


@dataclass(frozen=True)
class _Target:
    broker_name: str
    cluster: str
    addr: str
    read_queue_nums: int
    write_queue_nums: int
    perm: int

    def config(self, topic: str, sys_flag: int = 0) -> TopicConfig:
        return TopicConfig(topic, self.read_queue_nums, self.write_queue_nums, self.perm, topic_sys_flag=sys_flag)

    def state(self) -> dict[str, int]:
        return {"read_queue_nums": self.read_queue_nums, "write_queue_nums": self.write_queue_nums, "perm": self.perm}


def _state(brokers: tuple[BrokerQueues, ...] | list[BrokerQueues]) -> dict[str, dict[str, int | str]]:
    """The audit form of a topic: broker name -> counts, perm and (when read) message type."""
    return {
        b.broker_name: {
            "read_queue_nums": b.read_queue_nums,
            "write_queue_nums": b.write_queue_nums,
            "perm": b.perm,
            **({"message_type": b.message_type} if b.message_type else {}),
        }
        for b in sorted(brokers, key=lambda b: b.broker_name)
    }


def _message_type_attribute(message_type: str | None) -> str | None:
    """UPDATE_AND_CREATE_TOPIC's attributes header setting ``message_type``; None changes nothing."""
    return f"+{MESSAGE_TYPE}={message_type}" if message_type else None


def _pick(*values: int | None) -> int:
    return next(v for v in values if v is not None)


def _resolve(spec: TopicSpec, info: ClusterInfo, current: dict[str, BrokerQueues]) -> list[_Target]:
    """The brokers the spec writes to, with the values each gets; InvalidInput for unknown names."""
    if spec.cluster is not None:
        if spec.cluster not in info.clusters:
            known = ", ".join(sorted(info.clusters)) or "none"
            raise InvalidInput("cluster", f"unknown cluster {spec.cluster!r}; known: {known}.")
        wanted = [(name, spec.queues, "cluster") for name in sorted(info.clusters[spec.cluster])]
    else:
        wanted = [(name, queues, f"brokers.{name}") for name, queues in spec.brokers]
        if not wanted:  # an update of the brokers the topic is on
            wanted = [(name, QueueSpec(), "brokers") for name in sorted(current)]
        if not wanted:
            raise InvalidInput("brokers", "name a cluster, or at least one broker.")
    targets = []
    for name, queues, field in wanted:
        data = info.broker_datas.get(name)
        if data is None:
            known = ", ".join(sorted(info.broker_datas)) or "none"
            raise InvalidInput(field, f"unknown broker {name!r}; known: {known}.")
        if not data.master_addr:
            raise InvalidInput(field, f"broker {name!r} has no master to write to.")
        cur = current.get(name)
        targets.append(
            _Target(
                name,
                data.cluster,
                data.master_addr,
                _pick(
                    queues.read_queue_nums,
                    spec.queues.read_queue_nums,
                    cur.read_queue_nums if cur is not None else None,
                    DEFAULT_QUEUE_NUMS,
                ),
                _pick(
                    queues.write_queue_nums,
                    spec.queues.write_queue_nums,
                    cur.write_queue_nums if cur is not None else None,
                    DEFAULT_QUEUE_NUMS,
                ),
                _pick(queues.perm, spec.queues.perm, cur.perm if cur is not None else None, DEFAULT_PERM),
            )
        )
    if not targets:
        raise InvalidInput("cluster", f"cluster {spec.cluster!r} has no broker to write to.")
    return targets


def _check_message_type(spec: TopicSpec) -> None:
    if spec.message_type is not None:
        try:
            validate_message_type(spec.message_type)
        except ValidationError as exc:
            raise InvalidInput("message_type", exc.messages[0]) from None


def _route_or_none(name: str) -> TopicRouteData | None:
    try:
        return selectors.topic_route_data(name)
    except NotFound:
        return None


def _write(
    name: str, targets: list[_Target], sys_flag: int = 0, message_types: dict[str, str | None] | None = None
) -> None:
    """UPDATE_AND_CREATE_TOPIC on each target (with the message type ``message_types`` names for its
    broker, if any); each answers once the name servers know."""
    for t in targets:
        attributes = _message_type_attribute((message_types or {}).get(t.broker_name))
        create_or_update_topic(t.addr, t.config(name, sys_flag), attributes)


def topic_create(*, actor: Actor, spec: TopicSpec) -> TopicDetail:
    """Create a topic in cluster or broker mode; Conflict (409) when it exists already."""
    actor.require(Role.OPERATOR)
    with audited(actor=actor, action="topic.create", target_type="topic", target=spec.name) as note:
        try:
            validate_new_topic_name(spec.name)
        except ValidationError as exc:
            raise InvalidInput("name", exc.messages[0]) from None
        _check_message_type(spec)
        info = selectors.cluster_info()
        try:
            validate_new_topic_name(spec.name, selectors.system_topic_names(info))
        except ValidationError as exc:
            raise InvalidInput("name", exc.messages[0]) from None
        if _route_or_none(spec.name) is not None:
            raise Conflict(f"topic {spec.name} exists already")
        targets = _resolve(spec, info, {})
        note.after = {t.broker_name: t.state() for t in targets}
        _write(spec.name, targets, message_types={t.broker_name: spec.message_type for t in targets})
        detail = _detail(spec.name)
        note.after = _state(detail.brokers)
    return detail


def _detail(name: str) -> TopicDetail:
    """The topic's detail just after a write, message types included."""
    route = selectors.topic_route_data(name)
    return selectors.detail_from_route(route, configs=selectors.route_configs(route))


def _message_types(spec: TopicSpec, targets: list[_Target], on: dict[str, BrokerQueues]) -> dict[str, str | None]:
    """The message type each target gets: the spec's; without one, a broker the topic is new on gets
    the type the topic has on its other brokers (when they agree), the others keep theirs."""
    if spec.message_type is not None:
        return {t.broker_name: spec.message_type for t in targets}
    kinds = {b.message_type for b in on.values() if b.message_type}
    carried = kinds.pop() if len(kinds) == 1 else None
    return {t.broker_name: carried for t in targets if t.broker_name not in on}


def topic_update(*, actor: Actor, spec: TopicSpec, confirm_unreachable_messages: int | None = None) -> TopicDetail:
    """Change queue counts or perm of an existing topic (NotFound, 404, when there is none).

    With neither cluster nor brokers the change applies to every broker the topic is on; a
    cluster or broker it is not on yet gets it. Lowering read queues that hold messages hides
    them from every consumer: refused (UnconfirmedUnreachable, naming the count per broker and
    safe shrink) unless ``confirm_unreachable_messages`` equals that count, read live just now.
    """
    actor.require(Role.OPERATOR)
    with audited(actor=actor, action="topic.update", target_type="topic", target=spec.name) as note:
        _check_message_type(spec)
        route = selectors.topic_route_data(spec.name)
        current = selectors.detail_from_route(route, configs=selectors.route_configs(route))
        note.before = _state(current.brokers)
        if current.type == SYSTEM:
            raise InvalidInput("name", f"{spec.name} is a system topic; it cannot be changed here.")
        info = selectors.cluster_info()
        on = {b.broker_name: b for b in current.brokers}
        targets = _resolve(spec, info, on)
        hidden = unreachable_messages(
            spec.name,
            [
                QueueEdit(
                    t.broker_name,
                    t.addr,
                    on[t.broker_name].read_queue_nums,
                    t.read_queue_nums,
                    t.write_queue_nums,
                    on[t.broker_name].perm,
                    t.perm,
                )
                for t in targets
                if t.broker_name in on
            ],
        )
        check_confirmed(hidden, confirm_unreachable_messages)
        if hidden.total:
            note.reason = f"confirmed: {hidden.total} message{'s' if hidden.total != 1 else ''} made unreachable ({hidden.summary()})"
        sys_flag = max((qd.topic_sys_flag for qd in route.queue_datas), default=0)
        _write(spec.name, targets, sys_flag, _message_types(spec, targets, on))
        detail = _detail(spec.name)
        note.after = _state(detail.brokers)
    return detail


def topic_delete(*, actor: Actor, name: str, cluster: str | None = None, broker: str | None = None) -> TopicDeletion:
    """Delete a topic everywhere, from one cluster, or from one broker.

    From one broker: the broker drops it, the name servers drop the route, and the topic's
    other brokers write their config again, which re-registers their queues (the name server
    protocol has no "drop one broker's queues" request).
    """
    actor.require(Role.OPERATOR)
    one_target(cluster, broker)
    with audited(actor=actor, action="topic.delete", target_type="topic", target=name) as note:
        route = selectors.topic_route_data(name)
        current = selectors.detail_from_route(route)
        note.before = _state(current.brokers)
        info = selectors.cluster_info()
        if current.type == SYSTEM or name in selectors.system_topic_names(info):
            raise InvalidInput("name", f"{name} is a system topic; it cannot be deleted.")
        if broker is not None:
            deletion = _delete_on_broker(name, broker, current, info)
        elif cluster is not None:
            if cluster not in info.clusters:
                raise InvalidInput(
                    "cluster", f"unknown cluster {cluster!r}; known: {', '.join(sorted(info.clusters)) or 'none'}."
                )
            names = tuple(b.broker_name for b in current.brokers if b.cluster == cluster)
            if not names:
                raise InvalidInput("cluster", f"topic {name} is not on cluster {cluster}.")
            delete_topic(name, cluster=cluster)
            deletion = TopicDeletion(name, names, f"cluster:{cluster}")
        else:
            delete_topic(name)
            deletion = TopicDeletion(name, tuple(b.broker_name for b in current.brokers), "all")
            ShrinkProgress.objects.filter(topic=name).delete()  # a topic made again later starts afresh
        rest = [b for b in current.brokers if b.broker_name not in deletion.brokers]
        note.after = _state(rest)
    return replace(deletion, remaining=tuple(b.broker_name for b in rest))


def _delete_on_broker(name: str, broker: str, current: TopicDetail, info: ClusterInfo) -> TopicDeletion:
    if broker not in info.broker_datas:
        raise InvalidInput(
            "broker", f"unknown broker {broker!r}; known: {', '.join(sorted(info.broker_datas)) or 'none'}."
        )
    on = {b.broker_name: b for b in current.brokers}
    if broker not in on:
        raise InvalidInput("broker", f"topic {name} is not on broker {broker}.")
    addr = info.broker_datas[broker].master_addr
    if not addr:
        raise InvalidInput("broker", f"broker {broker!r} has no master to delete on.")
    rest = [b for b in current.brokers if b.broker_name != broker]
    delete_topic_in_broker(addr, name)
    delete_topic_in_namesrv(name)
    if rest:
        _write(
            name,
            [_Target(b.broker_name, b.cluster, b.addr, b.read_queue_nums, b.write_queue_nums, b.perm) for b in rest],
        )
    return TopicDeletion(name, (broker,), f"broker:{broker}")


def topic_send_test_message(
    *, actor: Actor, name: str, body: str, tags: str = "", keys: str = "", broker: str | None = None
) -> SentMessage:
    """Send one message to the topic (on ``broker`` when given) and say where it was stored."""
    actor.require(Role.OPERATOR)
    with audited(actor=actor, action="topic.send_test_message", target_type="topic", target=name) as note:
        payload = body.encode("utf-8")
        if not payload:
            raise InvalidInput("body", "the message body is empty.")
        if len(payload) > MAX_TEST_MESSAGE_BYTES:
            raise InvalidInput("body", f"a test message may have at most {MAX_TEST_MESSAGE_BYTES} bytes.")
        route = selectors.topic_route_data(name)
        producer = console_producer(CONSOLE_PRODUCER_GROUP)
        try:
            mq = None
            if broker is not None:
                mq = _writable_queue(route, broker, producer.fetch_publish_message_queues(name))
            result = producer.send(Message(name, payload, tags=tags or None, keys=keys or None), mq)
        finally:
            producer.close()
        sent = SentMessage(
            name,
            result.msg_id,
            result.offset_msg_id,
            result.message_queue.broker_name,
            result.message_queue.queue_id,
            result.queue_offset,
            result.status.value,
        )
        note.after = sent
    return sent


def _writable_queue(route: TopicRouteData, broker: str, queues: list[MessageQueue]) -> MessageQueue:
    if route.broker_data(broker) is None:
        raise InvalidInput("broker", f"topic {route.topic} is not on broker {broker}.")
    mine = [q for q in queues if q.broker_name == broker]
    if not mine:
        raise InvalidInput("broker", f"broker {broker} has no writable queue of topic {route.topic}.")
    return mine[0]


def _shrink_state(status: ShrinkStatus) -> dict:
    return {"step": status.step, "target_queue_nums": status.target_queue_nums, "brokers": _state(status.brokers)}


def topic_shrink(*, actor: Actor, name: str, target_queue_nums: int, step: str) -> ShrinkStatus:
    """Take a safe-shrink step: ``write`` lowers every broker's write queues to the target (new
    messages go to the first queues only); ``read`` lowers the read queues once every consumer
    group has consumed the tail queues to their end and producers had time to see the new route
    (Conflict, 409, naming what is left, before that). Nothing changes when a step is refused.
    """
    actor.require(Role.OPERATOR)
    with audited(actor=actor, action="topic.shrink", target_type="topic", target=name) as note:
        if step not in SHRINK_STEPS:
            raise InvalidInput("step", f"must be one of {', '.join(SHRINK_STEPS)}.")
        status = selectors.topic_shrink_status(name=name, target_queue_nums=target_queue_nums)
        note.before = _shrink_state(status)
        if selectors.topic_type(name) == SYSTEM:
            raise InvalidInput("name", f"{name} is a system topic; it cannot be changed here.")
        widest = max(status.brokers, key=lambda b: b.read_queue_nums)
        if status.step == SHRINK_DONE:
            raise InvalidInput(
                "target_queue_nums",
                f"the topic has at most {widest.read_queue_nums} read queues on every broker "
                f"({widest.broker_name}); give a lower target to shrink it.",
            )
        if step == SHRINK_WRITE:
            targets = [b for b in status.brokers if b.write_queue_nums > target_queue_nums]
            if not targets:
                note.reason = "the write queues were already lowered"
            _write(
                name,
                [
                    _Target(b.broker_name, b.cluster, b.addr, b.read_queue_nums, target_queue_nums, b.perm)
                    for b in targets
                ],
            )
            ShrinkProgress.objects.update_or_create(
                topic=name,
                defaults={
                    "target_queue_nums": target_queue_nums,
                    "write_lowered_at": timezone.now(),
                    "read_lowered_at": None,
                },
            )
        else:
            if status.step == SHRINK_WRITE:
                raise Conflict(
                    f"lower the write queues to {target_queue_nums} first (step write); "
                    "consumers must drain the tail queues after producers stop writing to them"
                )
            if not status.ready:
                raise Conflict("the tail queues are not drained yet: " + "; ".join(status.blockers))
            targets = [b for b in status.brokers if b.read_queue_nums > target_queue_nums]
            _write(
                name,
                [
                    _Target(b.broker_name, b.cluster, b.addr, target_queue_nums, b.write_queue_nums, b.perm)
                    for b in targets
                ],
            )
            ShrinkProgress.objects.filter(topic=name, target_queue_nums=target_queue_nums).update(
                read_lowered_at=timezone.now()
            )
        after = selectors.topic_shrink_status(name=name, target_queue_nums=target_queue_nums)
        note.after = {**_shrink_state(after), "step": step}
    return after
