"""RequestHeader: a request's custom header (RocketMQ's ``CommandCustomHeader``) as a frozen dataclass.

A subclass declares one field per ``extFields`` entry. The wire name is the camelCase of the
Python name (``queue_id`` → ``queueId``, ``is_force`` → ``isForce``) unless the field's metadata
says otherwise (``field(default=None, metadata=wire("bname"))``). The annotation gives the type
and the requiredness:

===================  ================================  ========================================
annotation           missing or empty on the wire      decoded from
===================  ================================  ========================================
``str`` (no default)  refused: ``the custom field <x> is missing``  the text as sent
``int`` (no default)  refused, as above                 a decimal (Java int/long), else refused:
                                                        ``the custom field <x> is not an integer: '..'``
``T = value``        the default                       as above; ``bool``: Java's
``T | None = None``  None                              ``Boolean.parseBoolean`` ("true", any case)
===================  ================================  ========================================

An empty value counts as missing, as the ROCKETMQ binary header has it (length 0 reads as null),
except in a ``str`` field declared with :func:`empty_is_a_value` (a JSON header carries it, and the
ACL's ``topicPerms=""`` clears a list that an absent ``topicPerms`` keeps).
``encode()`` writes every field that is not None: ints in decimal, booleans as ``true``/``false``
(what Java's ``String.valueOf`` writes), and a field with older names (``wire("cleanOffset",
"removeOffset")``) under each of them; ``decode()`` reads the first name present. Unknown
``extFields`` are ignored both ways, as Java's ``decodeCommandCustomHeader`` does.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Mapping
from typing import ClassVar, Self, get_args, get_origin, get_type_hints

from brokers.engine.remoting.command import RemotingCommand
from brokers.engine.remoting.errors import RemotingCommandError

__all__ = ["HeaderField", "RequestHeader", "empty_is_a_value", "header_fields", "wire"]

_WIRE = "rocketmq.wire"
_ALSO = "rocketmq.wire_also"
_LABEL = "rocketmq.label"
_KEEP_EMPTY = "rocketmq.keep_empty"
_SCALARS: tuple[type, ...] = (str, int, bool)


def wire(name: str, *also: str, label: str | None = None) -> dict[str, object]:
    """Field metadata: the wire name ``name`` (when not the camelCase of the Python name), the
    older names ``also`` the field is read from when ``name`` is absent and written under as well,
    and the ``label`` a refusal names it by (default ``name``; SEND_MESSAGE_V2's ``e`` is queueId)."""
    return {_WIRE: name, _ALSO: also, _LABEL: label or name}


def empty_is_a_value(*names: str) -> dict[str, object]:
    """Field metadata of a ``str`` field whose empty value is a value, not a missing field: decoded
    as ``""`` (a required one is refused only when absent). ``names``, when given, as :func:`wire`'s."""
    return {**(wire(*names) if names else {}), _KEEP_EMPTY: True}


def camel_case(name: str) -> str:
    """``queue_id`` → ``queueId``: the Java field name of a snake_case attribute."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@dataclasses.dataclass(frozen=True, slots=True)
class HeaderField:
    """One declared field: attribute, wire names (first is the one RocketMQ uses), scalar type,
    requiredness, and the value a missing optional field takes."""

    attr: str
    names: tuple[str, ...]
    kind: type
    required: bool
    default: object = None
    label: str = ""
    keeps_empty: bool = False

    @property
    def name(self) -> str:
        return self.names[0]


_FIELDS: dict[type, tuple[HeaderField, ...]] = {}  # per class, filled on first use (a race only repeats the work)


def header_fields(cls: type[RequestHeader]) -> tuple[HeaderField, ...]:
    """The declared fields of a header class, in declaration order (checked once per class)."""
    known = _FIELDS.get(cls)
    if known is None:
        known = _FIELDS[cls] = _declared_fields(cls)
    return known


def _declared_fields(cls: type[RequestHeader]) -> tuple[HeaderField, ...]:
    hints = get_type_hints(cls)
    out: list[HeaderField] = []
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        optional = False
        if get_origin(hint) is types.UnionType:
            args = [a for a in get_args(hint) if a is not type(None)]
            optional = len(args) < len(get_args(hint))
            hint = args[0] if len(args) == 1 else None
        if hint not in _SCALARS:
            raise TypeError(f"{cls.__name__}.{f.name}: a header field is str, int or bool, optionally | None")
        if f.default_factory is not dataclasses.MISSING:
            raise TypeError(f"{cls.__name__}.{f.name}: a header field's default is a plain value")
        has_default = f.default is not dataclasses.MISSING
        if optional and not has_default:
            raise TypeError(f"{cls.__name__}.{f.name}: an optional header field needs a default")
        name = f.metadata.get(_WIRE) or camel_case(f.name)
        also = tuple(f.metadata.get(_ALSO, ()))
        default = f.default if has_default else None
        label = f.metadata.get(_LABEL) or name
        keeps_empty = bool(f.metadata.get(_KEEP_EMPTY))
        if keeps_empty and hint is not str:
            raise TypeError(f"{cls.__name__}.{f.name}: only a str field keeps an empty value")
        out.append(HeaderField(f.name, (name, *also), hint, not has_default, default, label, keeps_empty))
    return tuple(out)


# The decode/encode loops run per request on the data path (PULL_MESSAGE, POP_MESSAGE): they walk
# plain tuples, set the frozen instance's slots directly (as the dataclass __init__ does) and
# parse inline, which keeps a 12-field header at a few microseconds.
_Plan = tuple[tuple[str, str, tuple[str, ...], type, bool, object, str, bool], ...]
_PLANS: dict[type, _Plan] = {}
_set = object.__setattr__


def _plan(cls: type[RequestHeader]) -> _Plan:
    plan = _PLANS.get(cls)
    if plan is None:
        plan = _PLANS[cls] = tuple(
            (f.attr, f.name, f.names[1:], f.kind, f.required, f.default, f.label, f.keeps_empty)
            for f in header_fields(cls)
        )
    return plan


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RequestHeader:
    """Base of every request header: subclasses are ``@dataclass(frozen=True, slots=True, kw_only=True)``.

    ``CODES`` names the request codes that carry the header (documentation and tests: the codes
    list of :mod:`brokers.engine.remoting.headers` is checked against it).
    """

    CODES: ClassVar[tuple[int, ...]] = ()

    def encode(self) -> dict[str, str]:
        """The ``extFields`` of this header: every field that is not None, as Java writes it."""
        ext: dict[str, str] = {}
        for attr, name, also, kind, _required, _default, _label, _keeps_empty in _plan(type(self)):
            value = getattr(self, attr)
            if value is None:
                continue
            text = value if kind is str else ("true" if value else "false") if kind is bool else str(value)
            ext[name] = text
            for other in also:
                ext[other] = text
        return ext

    @classmethod
    def decode(cls, request: RemotingCommand | Mapping[str, str]) -> Self:
        """Read the header from a request (or its ``extFields``); RemotingCommandError names the
        first field that is required and missing, or not a number where one is declared."""
        get = (request.ext_fields if isinstance(request, RemotingCommand) else request).get
        header = object.__new__(cls)
        value: object
        for attr, name, also, kind, required, default, label, keeps_empty in _plan(cls):
            raw = get(name)
            if not raw and also:
                raw = next((v for v in map(get, also) if v), raw)
            if not raw:
                if keeps_empty and raw is not None:
                    value = raw
                elif required:
                    raise RemotingCommandError(f"the custom field <{label}> is missing", label)
                else:
                    value = default
            elif kind is str:
                value = raw
            elif kind is int:
                try:
                    value = int(raw)
                except ValueError:
                    raise RemotingCommandError(
                        f"the custom field <{label}> is not an integer: {raw!r}", label
                    ) from None
            else:
                value = raw.strip().lower() == "true"
            _set(header, attr, value)
        return header
