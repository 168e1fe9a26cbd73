"""The rules consumer-side input follows, shared by the console forms and the API serializers.

Each function takes plain values (JSON or form text already split) and returns what the
services and selectors take, or raises :class:`console.errors.InvalidInput` naming the field
(dotted for nested ones: ``params.virtual_node_cnt``, ``queues.3.queue_id``), so the form and
the API give the same message.

Strategy parameters, as JSON (the registry's keyword parameters, made serialisable):

=======================  ======================================================================
``AVG``, ``AVG_BY_CIRCLE``  none
``CONFIG``               ``message_queue_list``: queue dicts (required)
``MACHINE_ROOM``         ``consumeridcs``: room names (required); a broker ``room@name`` is in ``room``
``MACHINE_ROOM_NEARBY``  ``inner``: a strategy name (required); where brokers and clients run:
                         ``broker_rooms`` {broker: room}, ``consumer_rooms`` {client id: room},
                         else the part of the name before ``separator`` (default ``@``)
``CONSISTENT_HASH``      ``virtual_node_cnt``: 1..1000 (default 10)
=======================  ======================================================================
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from brokers.engine.common.constants import MAX_QUEUE_NUMS
from brokers.engine.common.message_queue import MessageQueue
from brokers.engine.common.queue_nums import MIN_QUEUE_NUMS, is_valid_queue_nums
from brokers.engine.common.topic_validator import InvalidNameError, validate_group, validate_topic
from console.errors import InvalidInput
from console.times import TIME_HINT, parse_time_ms  # noqa: F401 (the rule of time input, shared with topics)
from brokers.engine.client.allocation import (
    AllocateMessageQueueStrategy,
    AllocationError,
    get_strategy,
    strategy_names,
)

MAX_CLIENTS = 1000  # a preview of more clients than this is not a console page any more
MAX_QUEUES = 8192  # nor of more queues (1,024 per broker on 8 brokers)
MAX_VIRTUAL_NODES = 1000  # CONSISTENT_HASH builds clients x nodes ring points
DEFAULT_SEPARATOR = "@"  # RocketMQ's room@broker naming
NEARBY_INNER = ("AVG", "AVG_BY_CIRCLE", "CONSISTENT_HASH")  # strategies NEARBY may wrap from a form or JSON

PARAMS: dict[str, tuple[str, ...]] = {
    "AVG": (),
    "AVG_BY_CIRCLE": (),
    "CONFIG": ("message_queue_list",),
    "MACHINE_ROOM": ("consumeridcs",),
    "MACHINE_ROOM_NEARBY": ("inner", "broker_rooms", "consumer_rooms", "separator", "virtual_node_cnt"),
    "CONSISTENT_HASH": ("virtual_node_cnt",),
}


# -- names -------------------------------------------------------------------------------------------


def checked_group(name: object, field_name: str = "group") -> str:
    try:
        return validate_group(name)
    except InvalidNameError as exc:
        raise InvalidInput(field_name, str(exc)) from None


def checked_topic(name: object, field_name: str = "topic") -> str:
    try:
        return validate_topic(name)
    except InvalidNameError as exc:
        raise InvalidInput(field_name, str(exc)) from None


# -- queues and clients --------------------------------------------------------------------------------


def parse_queue(value: object, field_name: str) -> MessageQueue:
    """A queue dict ``{"topic", "broker_name", "queue_id"}`` as a MessageQueue."""
    if not isinstance(value, Mapping):
        raise InvalidInput(field_name, 'must be an object {"topic", "broker_name", "queue_id"}.')
    unknown = sorted(set(value) - {"topic", "broker_name", "queue_id"})
    if unknown:
        raise InvalidInput(f"{field_name}.{unknown[0]}", "unknown field.")
    for key in ("topic", "broker_name", "queue_id"):
        if key not in value:
            raise InvalidInput(f"{field_name}.{key}", "This field is required.")
    topic, broker, queue_id = value["topic"], value["broker_name"], value["queue_id"]
    checked_topic(topic, f"{field_name}.topic")
    if not isinstance(broker, str) or not broker.strip():
        raise InvalidInput(f"{field_name}.broker_name", "must be a non-empty string.")
    if isinstance(queue_id, bool) or not isinstance(queue_id, int):
        raise InvalidInput(f"{field_name}.queue_id", "must be an integer.")
    if not 0 <= queue_id < MAX_QUEUE_NUMS:
        raise InvalidInput(f"{field_name}.queue_id", f"must be from 0 to {MAX_QUEUE_NUMS - 1}, got {queue_id}.")
    return MessageQueue(topic, broker, queue_id)


def parse_queues(values: object, field_name: str = "queues", *, allow_empty: bool = False) -> tuple[MessageQueue, ...]:
    if not isinstance(values, (list, tuple)):
        raise InvalidInput(field_name, "must be a list of queue objects.")
    if not values and not allow_empty:
        raise InvalidInput(field_name, "give at least one queue.")
    if len(values) > MAX_QUEUES:
        raise InvalidInput(field_name, f"at most {MAX_QUEUES} queues.")
    return tuple(parse_queue(v, f"{field_name}.{i}") for i, v in enumerate(values))


def parse_cids(values: object, field_name: str = "cids", *, allow_empty: bool = False) -> tuple[str, ...]:
    if not isinstance(values, (list, tuple)):
        raise InvalidInput(field_name, "must be a list of client ids.")
    if not values and not allow_empty:
        raise InvalidInput(field_name, "give at least one client id.")
    if len(values) > MAX_CLIENTS:
        raise InvalidInput(field_name, f"at most {MAX_CLIENTS} client ids.")
    for i, cid in enumerate(values):
        if not isinstance(cid, str) or not cid.strip():
            raise InvalidInput(f"{field_name}.{i}", "must be a non-empty string.")
    return tuple(dict.fromkeys(c.strip() for c in values))


def parse_assignment(value: object, field_name: str = "current") -> dict[str, tuple[MessageQueue, ...]]:
    """``{cid: [queue dict, ...]}`` (what members hold now)."""
    if not isinstance(value, Mapping):
        raise InvalidInput(field_name, "must be an object {client id: [queue, ...]}.")
    if len(value) > MAX_CLIENTS:
        raise InvalidInput(field_name, f"at most {MAX_CLIENTS} clients.")
    out = {}
    for cid, queues in value.items():
        if not str(cid).strip():
            raise InvalidInput(field_name, "a client id is empty.")
        out[str(cid)] = parse_queues(queues, f"{field_name}.{cid}", allow_empty=True)
    return out


def split_words(text: str) -> list[str]:
    """Names typed in a form: separated by commas, spaces or new lines."""
    return [w for w in re.split(r"[\s,;]+", text or "") if w]


def parse_counts(text: str, field_name: str) -> dict[str, int]:
    """``broker-a:8, broker-b:4`` as ``{broker: count}`` (a form's hypothetical layout)."""
    out: dict[str, int] = {}
    for word in split_words(text):
        name, sep, count = word.rpartition(":")
        if not sep or not name or not count.isdigit():
            raise InvalidInput(field_name, f"{word!r} is not broker:count (like broker-a:8).")
        n = int(count)
        if not is_valid_queue_nums(n):
            raise InvalidInput(field_name, f"{word!r}: the count must be from {MIN_QUEUE_NUMS} to {MAX_QUEUE_NUMS}.")
        out[name] = n
    return out


def parse_queue_words(text: str, topic: str, field_name: str) -> list[dict]:
    """``broker-a:0 broker-b:3`` (a form's queue list) as queue dicts of ``topic``."""
    out = []
    for word in split_words(text):
        name, sep, qid = word.rpartition(":")
        if not sep or not name or not qid.isdigit():
            raise InvalidInput(field_name, f"{word!r} is not broker:queue (like broker-a:0).")
        out.append({"topic": topic, "broker_name": name, "queue_id": int(qid)})
    return out


def parse_rooms(text: str, field_name: str) -> dict[str, str]:
    """``broker-a=hz, cid1=sh`` as ``{name: room}``."""
    out = {}
    for word in split_words(text):
        name, sep, room = word.partition("=")
        if not sep or not name or not room:
            raise InvalidInput(field_name, f"{word!r} is not name=room (like broker-a=hz).")
        out[name] = room
    return out


# -- strategies ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RoomResolver:
    """Where brokers and clients run, for MACHINE_ROOM_NEARBY: a map, else the name's prefix."""

    broker_rooms: dict[str, str] = field(default_factory=dict)
    consumer_rooms: dict[str, str] = field(default_factory=dict)
    separator: str = DEFAULT_SEPARATOR

    def _prefix(self, name: str) -> str:
        return name.split(self.separator, 1)[0] if self.separator and self.separator in name else ""

    def broker_deploy_in(self, mq: MessageQueue) -> str:
        return self.broker_rooms.get(mq.broker_name) or self._prefix(mq.broker_name)

    def consumer_deploy_in(self, cid: str) -> str:
        return self.consumer_rooms.get(cid) or self._prefix(cid)


MAX_NAMED = 4  # names listed in a refusal before "and N more"


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:MAX_NAMED])
    return f"{shown} and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else shown


class MissingRooms(InvalidInput):
    """MACHINE_ROOM_NEARBY cannot tell where some brokers or clients run (the core's
    "Machine room is null for mq ...", said in an operator's words and naming the field to fill)."""

    def __init__(self, field_name: str, brokers: list[str], cids: list[str]) -> None:
        self.brokers, self.cids = brokers, cids
        if brokers:
            name, example = f"{field_name}.broker_rooms", f'{{"{brokers[0]}": "hz"}}'
        else:
            name, example = f"{field_name}.consumer_rooms", f'{{"{cids[0]}": "hz"}}'
        super().__init__(
            name,
            f"{self.summary()}: give each its machine room here, e.g. {example}, "
            f"or name it with its room before {DEFAULT_SEPARATOR} (hz{DEFAULT_SEPARATOR}{(brokers or cids)[0]}).",
        )

    def summary(self) -> str:
        parts = []
        if self.brokers:
            parts.append(f"broker{'s' if len(self.brokers) > 1 else ''} {_names(self.brokers)}")
        if self.cids:
            parts.append(f"client{'s' if len(self.cids) > 1 else ''} {_names(self.cids)}")
        return f"MACHINE_ROOM_NEARBY does not know the machine room of {' and '.join(parts)}"

    def form_message(self) -> str:
        """The same refusal for the console form's one rooms field (name=room words)."""
        first = (self.brokers or self.cids)[0]
        return (
            f"{self.summary()}. Type where each runs as name=room, e.g. {first}=hz, "
            f"or name it with its room before {DEFAULT_SEPARATOR} (hz{DEFAULT_SEPARATOR}{first})."
        )


def check_nearby_rooms(
    params: Mapping[str, Any], queues: tuple[MessageQueue, ...], cids: tuple[str, ...], field_name: str = "params"
) -> None:
    """Refuse (:class:`MissingRooms`) MACHINE_ROOM_NEARBY parameters that leave a broker or a
    client of the input without a room, before the core would fail on the first one."""
    resolver = RoomResolver(
        _string_map(params.get("broker_rooms", {}), f"{field_name}.broker_rooms"),
        _string_map(params.get("consumer_rooms", {}), f"{field_name}.consumer_rooms"),
        params.get("separator", DEFAULT_SEPARATOR),
    )
    brokers = [
        b for b in dict.fromkeys(q.broker_name for q in queues) if not resolver.broker_deploy_in(MessageQueue("", b, 0))
    ]
    missing_cids = [c for c in dict.fromkeys(cids) if not resolver.consumer_deploy_in(c)]
    if brokers or missing_cids:
        raise MissingRooms(field_name, brokers, missing_cids)


def checked_strategy_name(name: object, field_name: str = "strategy") -> str:
    if not isinstance(name, str) or name not in strategy_names():
        raise InvalidInput(field_name, f"unknown strategy {name!r}; use one of {', '.join(strategy_names())}.")
    return name


def _string_map(value: object, field_name: str) -> dict[str, str]:
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) and v for k, v in value.items()
    ):
        raise InvalidInput(field_name, "must be an object of names to room names (strings).")
    return dict(value)


def strategy_kwargs(name: str, params: object, field_name: str = "params") -> dict[str, Any]:
    """The registry keyword parameters of strategy ``name`` from its JSON ``params``."""
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise InvalidInput(field_name, "must be an object of strategy parameters.")
    allowed = PARAMS.get(name, ())
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        hint = f"{name} takes {', '.join(allowed)}" if allowed else f"{name} takes no parameters"
        raise InvalidInput(f"{field_name}.{unknown[0]}", f"unknown parameter; {hint}.")
    kwargs: dict[str, Any] = {}
    if "virtual_node_cnt" in params:
        n = params["virtual_node_cnt"]
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_VIRTUAL_NODES:
            raise InvalidInput(f"{field_name}.virtual_node_cnt", f"must be an integer from 1 to {MAX_VIRTUAL_NODES}.")
        if name == "CONSISTENT_HASH":
            kwargs["virtual_node_cnt"] = n
    if name == "CONFIG":
        if "message_queue_list" not in params:
            raise InvalidInput(
                f"{field_name}.message_queue_list", "CONFIG needs message_queue_list: the queues every client consumes."
            )
        kwargs["message_queue_list"] = parse_queues(params["message_queue_list"], f"{field_name}.message_queue_list")
    elif name == "MACHINE_ROOM":
        rooms = params.get("consumeridcs")
        if rooms is None:
            raise InvalidInput(
                f"{field_name}.consumeridcs",
                "MACHINE_ROOM needs consumeridcs: the machine rooms whose queues are consumed.",
            )
        if not isinstance(rooms, (list, tuple)) or not rooms or not all(isinstance(r, str) and r for r in rooms):
            raise InvalidInput(f"{field_name}.consumeridcs", "must be a non-empty list of room names.")
        kwargs["consumeridcs"] = tuple(rooms)
    elif name == "MACHINE_ROOM_NEARBY":
        inner = params.get("inner")
        if inner is None:
            raise InvalidInput(
                f"{field_name}.inner",
                f"MACHINE_ROOM_NEARBY needs inner: the strategy it wraps ({', '.join(NEARBY_INNER)}).",
            )
        if inner not in NEARBY_INNER:
            raise InvalidInput(f"{field_name}.inner", f"must be one of {', '.join(NEARBY_INNER)}.")
        separator = params.get("separator", DEFAULT_SEPARATOR)
        if not isinstance(separator, str):
            raise InvalidInput(f"{field_name}.separator", "must be a string.")
        inner_kwargs = (
            {"virtual_node_cnt": params["virtual_node_cnt"]}
            if inner == "CONSISTENT_HASH" and "virtual_node_cnt" in params
            else {}
        )
        kwargs["inner"] = get_strategy(inner, **inner_kwargs)
        kwargs["resolver"] = RoomResolver(
            _string_map(params.get("broker_rooms", {}), f"{field_name}.broker_rooms"),
            _string_map(params.get("consumer_rooms", {}), f"{field_name}.consumer_rooms"),
            separator,
        )
    return kwargs


def build_strategy(
    name: object, params: object = None, *, field_name: str = "strategy", params_field: str = "params"
) -> AllocateMessageQueueStrategy:
    """The strategy ``name`` built from JSON ``params``; InvalidInput naming the field otherwise."""
    name = checked_strategy_name(name, field_name)
    try:
        return get_strategy(name, **strategy_kwargs(name, params, params_field))
    except AllocationError as exc:
        raise InvalidInput(params_field, str(exc)) from None
