"""Read and write the JSON dialect of Java RocketMQ (fastjson 1.2.x).

fastjson departs from JSON in two ways that matter on the wire and in config files:

- maps with Integer/Long keys are written with **bare number keys**: ``{"brokerAddrs":{0:"a:1"}}``;
- maps keyed by an object (MessageQueue) are written with the **key object inline**:
  ``{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:{"brokerOffset":5}}}``.

:func:`loads` reads standard JSON and both forms (plus single-quoted strings, which fastjson
also accepts).  Bare number keys become ``int``; quoted keys stay ``str`` (use
:func:`int_keys` to normalise a map that may arrive either way).  An inline object key with
exactly MessageQueue's properties becomes a :class:`MessageQueue`; any other object key becomes
a tuple of sorted ``(name, value)`` pairs.

:func:`dumps` writes the same dialect: int keys bare, MessageQueue/tuple keys inline, sorted
keys, optional fastjson "pretty" layout (newline + tab).  :func:`dumps_standard` writes strict
JSON (quoted keys, sorted, non-ASCII escaped), what 4.9.4+ name servers send for routes.
"""

from __future__ import annotations

import json
import math
import operator
import re
from collections.abc import Callable, Mapping
from typing import Any, NoReturn

from brokers.engine.common.message_queue import MessageQueue

__all__ = ["MAX_DEPTH", "JsonCompatError", "dumps", "dumps_standard", "int_keys", "loads", "to_plain"]

_MQ_FIELDS = frozenset({"brokerName", "queueId", "topic"})
_NUMBER_RE = re.compile(r"-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?")
_WHITESPACE = " \t\n\r"
_END = "\x00"  # what peek() returns past the end; matches no branch of the grammar
# Nesting the fallback parser accepts: RocketMQ's bodies nest about 6 deep; each level costs two
# Python frames, so 200 stays far from the interpreter's recursion limit (1000).
MAX_DEPTH = 200


# json's string scanner (C when available; typeshed does not declare it): (value, end) of the literal at pos
_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]


class JsonCompatError(ValueError):
    """Text that is neither JSON nor fastjson's dialect; the message gives the position."""


# -- reading ----------------------------------------------------------------------------------


def loads(text: str | bytes | bytearray) -> Any:
    """Parse standard JSON or fastjson output (bare number keys, inline object keys)."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8")
    try:
        return json.loads(text)
    except ValueError:
        pass
    except RecursionError:  # nested deeper than the interpreter allows: no dialect helps
        raise JsonCompatError("JSON nested too deep") from None
    parser = _Parser(text)
    value = parser.value()
    parser.skip_ws()
    if parser.pos != len(text):
        parser.fail("extra data after the value")
    return value


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.depth = 0

    def fail(self, message: str) -> NoReturn:
        raise JsonCompatError(f"{message} at position {self.pos}")

    def skip_ws(self) -> None:
        text, pos = self.text, self.pos
        while pos < len(text) and text[pos] in _WHITESPACE:
            pos += 1
        self.pos = pos

    def peek(self) -> str:
        self.skip_ws()
        return self.text[self.pos] if self.pos < len(self.text) else _END

    def expect(self, char: str) -> None:
        if self.peek() != char:
            self.fail(f"expected {char!r}")
        self.pos += 1

    def value(self) -> Any:
        char = self.peek()
        if char == "{":
            return self.obj()
        if char == "[":
            return self.array()
        if char in "\"'":
            return self.string()
        if char == "-" or char.isdigit():
            return self.number()
        for word, result in (("true", True), ("false", False), ("null", None)):
            if self.text.startswith(word, self.pos):
                self.pos += len(word)
                return result
        self.fail("unexpected end of text" if char == _END else "unexpected character")

    def nest(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.fail(f"JSON nested deeper than {MAX_DEPTH}")

    def obj(self) -> dict[str, Any]:
        self.expect("{")
        self.nest()
        out: dict[str, Any] = {}
        if self.peek() == "}":
            self.pos += 1
            self.depth -= 1
            return out
        while True:
            char = self.peek()
            if char in "\"'":
                key: Any = self.string()
            elif char == "-" or char.isdigit():
                key = self.number()
            elif char == "{":
                key = _object_key(self.obj())
            else:
                self.fail("expected an object key")
            self.expect(":")
            out[key] = self.value()
            char = self.peek()
            self.pos += 1
            if char == "}":
                self.depth -= 1
                return out
            if char != ",":
                self.pos -= 1
                self.fail("expected ',' or '}'")

    def array(self) -> list[Any]:
        self.expect("[")
        self.nest()
        out: list[Any] = []
        if self.peek() == "]":
            self.pos += 1
            self.depth -= 1
            return out
        while True:
            out.append(self.value())
            char = self.peek()
            self.pos += 1
            if char == "]":
                self.depth -= 1
                return out
            if char != ",":
                self.pos -= 1
                self.fail("expected ',' or ']'")

    def string(self) -> str:
        quote = self.text[self.pos]
        if quote == '"':
            try:
                value, self.pos = _scanstring(self.text, self.pos + 1)
            except ValueError as exc:
                self.fail(f"bad string ({exc})")
            return value
        end = self.pos + 1  # single-quoted: translate to a double-quoted literal
        chunks = []
        while end < len(self.text) and self.text[end] != "'":
            if self.text[end] == "\\" and end + 1 < len(self.text):
                chunks.append(self.text[end : end + 2] if self.text[end + 1] != "'" else "'")
                end += 2
                continue
            chunks.append('\\"' if self.text[end] == '"' else self.text[end])
            end += 1
        if end >= len(self.text):
            self.fail("unterminated string")
        self.pos = end + 1
        text: str = json.loads('"' + "".join(chunks) + '"')
        return text

    def number(self) -> int | float:
        match = _NUMBER_RE.match(self.text, self.pos)
        if not match:
            self.fail("bad number")
        self.pos = match.end()
        if match.group(1) or match.group(2):
            return float(match.group(0))
        return int(match.group(0))


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted(((str(k), _freeze(v)) for k, v in value.items()), key=lambda kv: kv[0]))
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def _object_key(data: dict[str, Any]) -> Any:
    if set(data) == _MQ_FIELDS:
        try:
            return MessageQueue.from_json(data)
        except (TypeError, ValueError):
            pass
    return _freeze(data)


def int_keys(mapping: Mapping[Any, Any] | None) -> dict[int, Any]:
    """Return ``mapping`` with its keys as ints, whether they arrived bare (0) or quoted ("0")."""
    return {int(k): v for k, v in (mapping or {}).items()}


# -- writing ----------------------------------------------------------------------------------


def to_plain(value: Any, default: Callable[[Any], Any] | None = None) -> Any:
    """Convert objects with ``to_json()`` (MessageQueue, TopicConfig, ...) and sets to JSON values."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, Mapping):
        return {k: to_plain(v, default) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(v, default) for v in value]
    if isinstance(value, (set, frozenset)):
        return [to_plain(v, default) for v in sorted(value, key=_sort_key)]
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return to_plain(to_json(), default)
    if default is not None:
        return to_plain(default(value), default)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _sort_key(key: Any) -> tuple[Any, ...]:
    if isinstance(key, bool):
        return (1, int(key), "")
    if isinstance(key, (int, float)):
        return (1, key, "")
    if isinstance(key, str):
        return (2, 0, key)
    if isinstance(key, MessageQueue):
        return (3, 0, (key.topic, key.broker_name, key.queue_id))
    return (4, 0, repr(key))


def dumps(
    value: Any, *, pretty: bool = False, sort_keys: bool = True, default: Callable[[Any], Any] | None = None
) -> str:
    """Write fastjson's dialect: bare int keys, inline MessageQueue/tuple keys, sorted keys.

    ``pretty`` gives fastjson's PrettyFormat (newline and one tab per level), used for the
    broker's config files.
    """
    out: list[str] = []
    _write(value, out, pretty, 0, sort_keys, default)
    return "".join(out)


# json's own C helpers (typeshed does not declare them); json.dumps(s, ensure_ascii=False) for one string
_encode_str: Callable[[str], str] = json.encoder.c_encode_basestring or json.encoder.py_encode_basestring  # type: ignore[attr-defined]
_int_text = int.__repr__  # what json.dumps writes for ints (IntEnum members included)
_first = operator.itemgetter(0)
_NATURAL_ORDER_KEYS = frozenset({str, int, MessageQueue})  # their own order is _sort_key's among keys of one type


def _write(
    value: Any, out: list[str], pretty: bool, depth: int, sort_keys: bool, default: Callable[[Any], Any] | None
) -> None:
    # scalars written directly: the same text as json.dumps(value, ensure_ascii=False), without its
    # per-call encoder set-up (bodies of thousands of queues write tens of thousands of them)
    if isinstance(value, str):
        out.append(_encode_str(value))
        return
    if value is None:
        out.append("null")
        return
    if isinstance(value, bool):
        out.append("true" if value else "false")
        return
    if isinstance(value, int):
        out.append(_int_text(value))
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value} has no JSON form")
        out.append(repr(value))
        return
    if isinstance(value, Mapping):
        items = list(value.items())
        if sort_keys and len(items) > 1:
            if type(items[0][0]) in _NATURAL_ORDER_KEYS:
                try:  # same order as _sort_key when every key is of one of these types
                    items.sort(key=_first)
                except TypeError:  # mixed key types
                    items.sort(key=lambda kv: _sort_key(kv[0]))
            else:
                items.sort(key=lambda kv: _sort_key(kv[0]))
        if not items:
            out.append("{}")
            return
        if not pretty and sort_keys and type(items[0][0]) is MessageQueue:
            text = _queue_table_text(items)
            if text is not None:
                out.append(text)
                return
        out.append("{")
        for i, (key, item) in enumerate(items):
            if i:
                out.append(",")
            if pretty:
                out.append("\n" + "\t" * (depth + 1))
            _write_key(key, out, pretty, depth + 1, sort_keys, default)
            out.append(":")
            _write(item, out, pretty, depth + 1, sort_keys, default)
        if pretty:
            out.append("\n" + "\t" * depth)
        out.append("}")
        return
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value, key=_sort_key) if isinstance(value, (set, frozenset)) else list(value)
        if not items:
            out.append("[]")
            return
        out.append("[")
        for i, item in enumerate(items):
            if i:
                out.append(",")
            if pretty:
                out.append("\n" + "\t" * (depth + 1))
            _write(item, out, pretty, depth + 1, sort_keys, default)
        if pretty:
            out.append("\n" + "\t" * depth)
        out.append("]")
        return
    _write(to_plain(value, default), out, pretty, depth, sort_keys, default)


def _queue_table_text(items: list[tuple[Any, Any]]) -> str | None:
    """The text of a sorted table keyed by MessageQueue whose values are ints or flat maps of str
    to int (an offset table, a ConsumeStats or TopicStatsTable offsetTable), exactly as the general
    writer below writes it; None, with nothing written, for any other shape. Stats bodies hold one
    such entry per queue: 8,000 for a list of 1,000 groups. A map's text comes from a template per
    set of field names (``_FLAT_SHAPES``), so each entry costs one ``%`` format."""
    encode, int_text, shapes = _encode_str, _int_text, _FLAT_SHAPES
    parts: list[str] = []
    for key, value in items:
        if type(key) is not MessageQueue:
            return None
        head = f'{{"brokerName":{encode(key.broker_name)},"queueId":{int_text(key.queue_id)},"topic":{encode(key.topic)}}}:'
        if type(value) is int:
            parts.append(head + int_text(value))
            continue
        if type(value) is not dict:
            return None
        names = tuple(value)
        shape = shapes.get(names)
        if shape is None:
            if len(shapes) >= 64 or not all(type(n) is str for n in names):
                return None
            order = tuple(sorted(names))
            template = "{" + ",".join(encode(n).replace("%", "%%") + ":%d" for n in order) + "}"
            shape = shapes[names] = (order, template, order == names)
        order, template, in_order = shape
        numbers = tuple(value.values()) if in_order else tuple(value[n] for n in order)
        for number in numbers:
            if type(number) is not int:
                return None
        parts.append(head + template % numbers)
    return "{" + ",".join(parts) + "}"


# field names of a flat map (in its own order) -> (sorted, "%" template of its text, already sorted);
# bounded: the few shapes of offset wrappers
_FLAT_SHAPES: dict[tuple[str, ...], tuple[tuple[str, ...], str, bool]] = {}


def _write_key(
    key: Any, out: list[str], pretty: bool, depth: int, sort_keys: bool, default: Callable[[Any], Any] | None
) -> None:
    if isinstance(key, str):
        out.append(_encode_str(key))
    elif isinstance(key, bool):
        out.append('"true"' if key else '"false"')
    elif isinstance(key, int):
        out.append(str(key))  # bare, as fastjson writes Integer/Long keys
    elif isinstance(key, MessageQueue):
        if pretty or not sort_keys:
            _write(key.to_json(), out, pretty, depth, sort_keys, default)
        else:  # the same text, written at once: stats bodies hold one such key per queue
            out.append(
                f'{{"brokerName":{_encode_str(key.broker_name)},"queueId":{_int_text(key.queue_id)},"topic":{_encode_str(key.topic)}}}'
            )
    elif isinstance(key, tuple) and all(isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) for p in key):
        _write(dict(key), out, pretty, depth, sort_keys, default)  # a key read back by loads()
    else:
        _write(to_plain(key, default), out, pretty, depth, sort_keys, default)


def dumps_standard(value: Any, *, default: Callable[[Any], Any] | None = None) -> str:
    """Write strict JSON: quoted (stringified) keys, sorted, compact, non-ASCII escaped."""
    return json.dumps(
        _stringify_keys(to_plain(value, default)), sort_keys=True, separators=(",", ":"), ensure_ascii=True
    )


def _stringify_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {(str(k).lower() if isinstance(k, bool) else str(k)): _stringify_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_stringify_keys(v) for v in value]
    return value
