"""Tokens of RocketMQ's SQL92 selector, as its JavaCC grammar (``SelectorParser.jj``) cuts them.

=========== =====================================================================================
kind        text
=========== =====================================================================================
KEYWORD     NOT AND OR BETWEEN IN TRUE FALSE NULL IS CONTAINS STARTSWITH ENDSWITH, any case
ID          ``[A-Za-z_$][A-Za-z0-9_$]*`` that is no keyword: a property name, case kept (``TAGS``)
INTEGER     ``0`` or ``[1-9][0-9]*`` with an optional ``L``: an Integer when it fits 32 bits, else
            a Long; past 64 bits it is refused. No hexadecimal or octal literals: RocketMQ's
            grammar removed them, so ``0x1F`` and ``017`` do not parse.
FLOAT       ``5.5``, ``5.``, ``.5``, ``5e10``, ``5.5E-3``: a Double. RocketMQ refuses one above
            Double.MAX_VALUE and one below Double.MIN_VALUE (4.9E-324): ``0.0`` is refused.
STRING      ``'...'`` with ``''`` for a quote inside: ``'it''s'`` is ``it's``; may span lines
OP          ``=`` ``<>`` ``>`` ``>=`` ``<`` ``<=`` ``(`` ``)`` ``,`` ``+`` ``-``
EOF         the end
=========== =====================================================================================

Spaces, tabs, line breaks and form feeds separate tokens; ``/* ... */`` and ``-- ...`` up to a
line break are comments (``--`` with no line break after it is two minus signs, as in JavaCC).
The longest match wins (``ANDY`` is a name, ``<>`` one operator). Anything else is a lexical
error naming the character and its place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from brokers.engine.filter.errors import InvalidSelectorError, where
from brokers.engine.filter.java_values import INT_MAX, LONG_MAX, JavaLong

__all__ = ["KEYWORDS", "Token", "tokenize"]

KEYWORDS = frozenset(
    {"NOT", "AND", "OR", "BETWEEN", "IN", "TRUE", "FALSE", "NULL", "IS", "CONTAINS", "STARTSWITH", "ENDSWITH"}
)
DOUBLE_MAX = 1.7976931348623157e308
DOUBLE_MIN = 5e-324  # Java's Double.MIN_VALUE (printed 4.9E-324): the smallest positive double

_FLOAT = r"[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+"
# One pattern, tried at each position; FLOAT before INTEGER so ``5.5`` is one token (the longest match).
_TOKEN = re.compile(
    r"(?P<SPACE>[ \t\n\r\f]+)"
    r"|(?P<COMMENT>--[^\n\r]*[\n\r]|/\*.*?\*/)"
    r"|(?P<STRING>'[^']*(?:''[^']*)*')"
    rf"|(?P<FLOAT>{_FLOAT})"
    r"|(?P<INTEGER>0|[1-9][0-9]*[lL]?)"
    r"|(?P<ID>[A-Za-z_$][A-Za-z0-9_$]*)"
    r"|(?P<OP>>=|<=|<>|[><=(),+-])",
    re.DOTALL,
)


@dataclass(frozen=True, slots=True)
class Token:
    """One token: its kind, its text as written, its value (keyword in upper case, number, decoded
    string) and the index of its first character."""

    kind: str
    text: str
    value: object
    position: int


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text``, ending with an EOF token; InvalidSelectorError on a lexical error."""
    tokens: list[Token] = []
    append = tokens.append
    i, n = 0, len(text)
    match = _TOKEN.match
    while i < n:
        found = match(text, i)
        if found is None:
            raise InvalidSelectorError(_lexical_error(text, i))
        kind, raw = found.lastgroup, found.group()
        if kind == "ID":
            upper = raw.upper()
            append(Token("KEYWORD", raw, upper, i) if upper in KEYWORDS else Token("ID", raw, raw, i))
        elif kind == "OP":
            append(Token("OP", raw, raw, i))
        elif kind == "STRING":
            append(Token("STRING", raw, raw[1:-1].replace("''", "'"), i))
        elif kind in ("INTEGER", "FLOAT"):
            append(_number(text, raw, kind, i))
        i = found.end()
    append(Token("EOF", "", None, n))
    return tokens


def _lexical_error(text: str, i: int) -> str:
    if text.startswith("'", i):
        return f"the string opened at {where(text, i)} is never closed"
    if text.startswith("/*", i):
        return f"a comment opened at {where(text, i)} is never closed"
    return f"unexpected character {text[i]!r} at {where(text, i)}"


def _number(text: str, raw: str, kind: str, start: int) -> Token:
    """The numeric literal ``raw`` at ``start``, typed as RocketMQ types it (Integer, Long or Double)."""
    if kind == "FLOAT":
        value = float(raw)
        if value > DOUBLE_MAX:
            raise InvalidSelectorError(
                f"the number {raw} at {where(text, start)} is greater than {DOUBLE_MAX!r}, the largest double"
            )
        if value < DOUBLE_MIN:
            raise InvalidSelectorError(
                f"the number {raw} at {where(text, start)} is less than 4.9E-324, the smallest double "
                "RocketMQ accepts (write 0 for zero)"
            )
        return Token("FLOAT", raw, value, start)
    digits = raw.rstrip("lL")
    if len(digits) > len(str(LONG_MAX)) or int(digits) > LONG_MAX:
        raise InvalidSelectorError(f"the number {raw} at {where(text, start)} is outside the range of a long (64 bits)")
    number = int(digits)
    return Token("INTEGER", raw, number if number <= INT_MAX else JavaLong(number), start)
