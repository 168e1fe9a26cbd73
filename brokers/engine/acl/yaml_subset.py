"""A reader for the subset of YAML that RocketMQ's ``plain_acl.yml`` uses, standard library only.

Why not PyYAML: the engine stays standard-library only (DESIGN §2), and a plain ACL file needs very
little of YAML. Reading every scalar as a string also fixes a trap: YAML 1.1 loaders turn
``secretKey: 12345678`` into an int and ``admin: yes`` or ``on`` into booleans; here the ACL schema
(:mod:`~brokers.engine.acl.plain_acl_config`) decides what each field means and says which field is
wrong.

What is read (everything RocketMQ writes or documents for this file)::

    # comments, on their own line or after a value
    key: value                      block mappings (keys unique)
    key:                            a nested block, more indented ...
      - item                        ... or a list, indented or not ("indentless")
    - accessKey: RocketMQ           list items holding mappings, continued at the item's column
      secretKey: "quoted"           'single' ('' escapes a quote) and "double" (backslash escapes)
    topicPerms: [a=PUB, b=SUB]      one-line flow lists of scalars; [] is an empty list
    whiteRemoteAddress:             an empty value, ~ or null: None

What is refused, with the line number: tabs in indentation, anchors, aliases and tags (so a bare
``*`` must be quoted, as any YAML parser demands), block scalars (``|``, ``>``), flow mappings,
multi-line scalars, duplicate keys, and indentation that fits no level.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_NULLS = frozenset({"~", "null", "Null", "NULL"})
_FORBIDDEN_STARTS = {
    "*": "an alias (a bare * must be quoted: '*')",
    "&": "an anchor",
    "!": "a tag",
    "|": "a block scalar",
    ">": "a block scalar",
    "{": "a flow mapping",
    "%": "a directive",
    "@": "a reserved character",
    "`": "a reserved character",
}
_DOUBLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "n": "\n", "t": "\t", "r": "\r", "0": "\0", " ": " "}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
_KEY_END = re.compile(r":(?=\s|$)")


class YamlSubsetError(ValueError):
    """The text is not in the YAML subset this reader accepts; the message names the line."""


@dataclass(frozen=True, slots=True)
class _Line:
    number: int  # 1-based, for messages
    indent: int
    text: str  # without the indentation; may still end with a comment


def load_yaml_subset(text: str) -> Any:
    """Parse ``text``; return nested dicts, lists, strings and None (an empty document is None)."""
    lines = _lines(text)
    if not lines:
        return None
    value, index = _node(lines, 0, lines[0].indent)
    if index < len(lines):
        raise YamlSubsetError(f"line {lines[index].number}: does not continue the block above it (check its indentation)")
    return value


def _lines(text: str) -> list[_Line]:
    lines: list[_Line] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.lstrip(" ")
        if not stripped.strip() or stripped.lstrip(" \t").startswith("#"):
            continue
        if stripped.startswith("\t"):
            raise YamlSubsetError(f"line {number}: a tab in the indentation (YAML indents with spaces)")
        body = stripped.rstrip()
        if body in ("---", "...") and not lines:
            continue
        if body in ("---", "..."):
            raise YamlSubsetError(f"line {number}: only one YAML document is read")
        lines.append(_Line(number, len(raw) - len(stripped), body))
    return lines


def _is_item(text: str) -> bool:
    return text == "-" or text.startswith("- ")


def _node(lines: list[_Line], index: int, indent: int) -> tuple[Any, int]:
    if _is_item(lines[index].text):
        return _sequence(lines, index, indent)
    return _mapping(lines, index, indent)


def _sequence(lines: list[_Line], index: int, indent: int, *, indentless: bool = False) -> tuple[list[Any], int]:
    items: list[Any] = []
    while index < len(lines) and lines[index].indent == indent and _is_item(lines[index].text):
        line = lines[index]
        rest = line.text[1:]
        column = indent + 1 + (len(rest) - len(rest.lstrip(" ")))
        rest = rest.lstrip(" ")
        if not rest or rest.startswith("#"):
            if index + 1 < len(lines) and lines[index + 1].indent > indent:
                value, index = _node(lines, index + 1, lines[index + 1].indent)
            else:
                value, index = None, index + 1
        elif _is_item(rest) or _split_key(rest, line.number) is not None:
            # "- key: v" or "- - v": a block starting at the item's column, continued by later lines there
            lines[index] = _Line(line.number, column, rest)
            value, index = _node(lines, index, column)
        else:
            value, index = _inline_value(rest, line.number), index + 1
        items.append(value)
    if index < len(lines) and lines[index].indent > indent:
        raise YamlSubsetError(f"line {lines[index].number}: unexpected indentation after a list item")
    if not indentless and index < len(lines) and lines[index].indent == indent and _split_key(lines[index].text, 0):
        raise YamlSubsetError(f"line {lines[index].number}: a 'key: value' among list items; expected '- ...'")
    return items, index


def _mapping(lines: list[_Line], index: int, indent: int) -> tuple[dict[str, Any], int]:
    result: dict[str, Any] = {}
    while index < len(lines) and lines[index].indent == indent:
        line = lines[index]
        if _is_item(line.text):
            raise YamlSubsetError(f"line {line.number}: a list item where a 'key: value' was expected")
        split = _split_key(line.text, line.number)
        if split is None:
            raise YamlSubsetError(f"line {line.number}: expected 'key: value', got {line.text!r}")
        key, rest = split
        if key in result:
            raise YamlSubsetError(f"line {line.number}: the key {key!r} appears twice in one mapping")
        rest = rest.strip()
        if rest and not rest.startswith("#"):
            result[key], index = _inline_value(rest, line.number), index + 1
            continue
        following = lines[index + 1] if index + 1 < len(lines) else None
        if following is not None and following.indent > indent:
            result[key], index = _node(lines, index + 1, following.indent)
        elif following is not None and following.indent == indent and _is_item(following.text):
            result[key], index = _sequence(lines, index + 1, indent, indentless=True)  # a list indented like its key
        else:
            result[key], index = None, index + 1
    if index < len(lines) and lines[index].indent > indent:
        raise YamlSubsetError(f"line {lines[index].number}: unexpected indentation (a value continued on another line?)")
    return result, index


def _split_key(text: str, number: int) -> tuple[str, str] | None:
    """``key: rest`` -> (key, rest); None when the text holds no key."""
    if text[0] in "'\"":
        key, end = _quoted(text, 0, number)
        after = text[end:].lstrip(" ")
        if after.startswith(":") and (len(after) == 1 or after[1] in " \t"):
            return key, after[1:]
        return None
    match = _KEY_END.search(text)
    if match is None or text.lstrip().startswith("#"):
        return None
    key = text[: match.start()].rstrip()
    if not key or " #" in key:
        return None
    return key, text[match.end() :]


def _inline_value(text: str, number: int) -> Any:
    """A value on the line of its key or item: a quoted or plain scalar or a one-line flow list."""
    if text[0] in "'\"":
        value, end = _quoted(text, 0, number)
        _expect_end(text[end:], number)
        return value
    if text[0] == "[":
        return _flow_list(text, number)
    return _plain(_cut_comment(text), number)


def _plain(text: str, number: int) -> str | None:
    text = text.strip()
    if not text or text in _NULLS:
        return None
    what = _FORBIDDEN_STARTS.get(text[0])
    if what is not None:
        raise YamlSubsetError(f"line {number}: {what} is not supported in this file: {text!r}")
    if _KEY_END.search(text):
        raise YamlSubsetError(f"line {number}: a 'key: value' inside a value; quote the value if it holds ': '")
    return text


def _cut_comment(text: str) -> str:
    match = re.search(r"\s#", text)
    return text if match is None else text[: match.start()]


def _expect_end(rest: str, number: int) -> None:
    rest = rest.strip()
    if rest and not rest.startswith("#"):
        raise YamlSubsetError(f"line {number}: unexpected text after a quoted value: {rest!r}")


def _flow_list(text: str, number: int) -> list[str | None]:
    items: list[str | None] = []
    pos = 1
    while True:
        while pos < len(text) and text[pos] == " ":
            pos += 1
        if pos >= len(text):
            raise YamlSubsetError(f"line {number}: a flow list [ ... ] must close on its line")
        if text[pos] == "]" and not items:
            pos += 1
            break
        if text[pos] in "'\"":
            value, pos = _quoted(text, pos, number)
        else:
            end = pos
            while end < len(text) and text[end] not in ",]":
                if text[end] in "[{":
                    raise YamlSubsetError(f"line {number}: nested flow collections are not supported")
                end += 1
            value, pos = _plain(text[pos:end], number), end
        items.append(value)
        while pos < len(text) and text[pos] == " ":
            pos += 1
        if pos < len(text) and text[pos] == ",":
            pos += 1
            continue
        if pos < len(text) and text[pos] == "]":
            pos += 1
            break
        if pos >= len(text):
            raise YamlSubsetError(f"line {number}: a flow list [ ... ] must close on its line")
        raise YamlSubsetError(f"line {number}: expected ',' or ']' in a flow list")
    _expect_end(text[pos:], number)
    return items


def _quoted(text: str, start: int, number: int) -> tuple[str, int]:
    """Read the quoted scalar opening at ``start``; return it and the index after its closing quote."""
    quote = text[start]
    out: list[str] = []
    pos = start + 1
    while pos < len(text):
        char = text[pos]
        if char == quote:
            if quote == "'" and text[pos + 1 : pos + 2] == "'":
                out.append("'")
                pos += 2
                continue
            return "".join(out), pos + 1
        if char == "\\" and quote == '"':
            pos = _escape(text, pos, number, out)
            continue
        out.append(char)
        pos += 1
    raise YamlSubsetError(f"line {number}: a quoted value must close on its line")


def _escape(text: str, pos: int, number: int, out: list[str]) -> int:
    code = text[pos + 1 : pos + 2]
    if code in _DOUBLE_ESCAPES:
        out.append(_DOUBLE_ESCAPES[code])
        return pos + 2
    width = _HEX_ESCAPES.get(code)
    digits = text[pos + 2 : pos + 2 + width] if width else ""
    if width and len(digits) == width and all(c in "0123456789abcdefABCDEF" for c in digits):
        out.append(chr(int(digits, 16)))
        return pos + 2 + width
    raise YamlSubsetError(f"line {number}: unknown escape \\{code} in a double-quoted value")
