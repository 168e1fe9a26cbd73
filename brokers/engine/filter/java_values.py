"""The Java value rules RocketMQ's SQL92 evaluator applies, so a selector picks the same messages here.

Values during evaluation are ``None`` (SQL NULL: a missing property), ``bool``, ``str`` (every
property value is a string), ``int`` (a Java Integer constant), :class:`JavaLong` (a Java Long
constant: a literal outside the int range) and ``float`` (a Java Double).

:func:`java_compare` is RocketMQ's ``ComparisonExpression.__compare`` with string conversion on
(its parser always turns it on). Two values of one type compare as Java compares them (Double by
``Double.compare``: NaN above everything, -0.0 below 0.0). Otherwise the left type decides:

=========== ============================================================================
left        right
=========== ============================================================================
Integer     Long: both as longs; Double: both as doubles; String: ``Integer.valueOf(right)``
Long        Integer: both as longs; Double: both as doubles; String: ``Long.valueOf(right)``
Double      Integer or Long: right as a double; String: ``Double.valueOf(right)``
String      Boolean: ``Boolean.valueOf(left)``; Integer, Long, Double: left converted to that type
Boolean     String: RocketMQ throws (a ClassCastException); anything else: "less" (-1)
=========== ============================================================================

Any other pair answers -1 ("less"), so ``=`` is false. A string that is not a number of the
type it is converted to raises :class:`EvaluationError`: the message does not match, as
Apache's broker logs the exception and answers "no match". ``a > 5`` with ``a = "7.5"`` is such
a case: 5 is an Integer, so ``"7.5"`` goes through ``Integer.valueOf`` and fails; ``a > 5.0`` matches.
"""

from __future__ import annotations

import re
import struct

from brokers.engine.filter.errors import EvaluationError

__all__ = [
    "INT_MAX",
    "INT_MIN",
    "LONG_MAX",
    "LONG_MIN",
    "JavaLong",
    "double_compare",
    "java_boolean",
    "java_compare",
    "parse_java_double",
    "parse_java_integer",
]

INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1
LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1
_MAX_INTEGER_DIGITS = 20  # past this a decimal string is outside the long range whatever it says

_JAVA_TRIMMED = "".join(map(chr, range(33)))  # String.trim() drops every char <= ' ' at both ends
_DECIMAL_DOUBLE = re.compile(r"([+-]?)(?:(NaN)|(Infinity)|((?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)[fFdD]?)\Z")
_HEX_DOUBLE = re.compile(r"([+-]?)(0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?\Z")
_DOUBLE_BITS = struct.Struct(">q")
_CANONICAL_NAN_BITS = 0x7FF8000000000000


class JavaLong(int):
    """An integer of Java type Long: a literal outside the int range, or such a literal negated.

    RocketMQ types ``5`` as an Integer and ``3000000000`` as a Long, and converts a property to the
    constant's type, so ``a > 5`` refuses ``a = "3000000000"`` where ``a > 3000000000`` would not."""

    __slots__ = ()

    def __neg__(self) -> JavaLong:
        return JavaLong(-int(self))

    def __repr__(self) -> str:
        return f"{int(self)}L"


def parse_java_integer(text: str, bits: int) -> int:
    """``Integer.valueOf`` (bits 32) or ``Long.valueOf`` (bits 64): an optional sign and decimal
    digits, nothing else (no spaces, no ``_``, no ``.``); EvaluationError otherwise or out of range."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or len(digits) > _MAX_INTEGER_DIGITS or not digits.isdecimal():
        raise EvaluationError(f"{text!r} is not an integer")
    value = int(text)
    limit = 1 << (bits - 1)
    if not -limit <= value < limit:
        raise EvaluationError(f"{text!r} is outside the range of a {bits}-bit integer")
    return JavaLong(value) if bits == 64 else value


def parse_java_double(text: str) -> float:
    """``Double.valueOf``: trimmed; a decimal (``5``, ``5.``, ``.5``, ``5e3``, an ``f``/``d`` suffix
    allowed), ``NaN``, ``Infinity`` or a hexadecimal float (``0x1.8p1``); EvaluationError otherwise."""
    trimmed = text.strip(_JAVA_TRIMMED)
    match = _DECIMAL_DOUBLE.match(trimmed)
    if match is not None:
        sign, nan, infinity, number = match.groups()
        if nan:
            return float("nan")
        magnitude = float("inf") if infinity else float(number)
        return -magnitude if sign == "-" else magnitude
    match = _HEX_DOUBLE.match(trimmed)
    if match is not None:
        magnitude = float.fromhex(match.group(2))
        return -magnitude if match.group(1) == "-" else magnitude
    raise EvaluationError(f"{text!r} is not a number")


def java_boolean(text: str) -> bool:
    """``Boolean.valueOf``: true for ``true`` in any case, false for every other string."""
    return len(text) == 4 and text.isascii() and text.lower() == "true"


def _double_bits(value: float) -> int:
    return _CANONICAL_NAN_BITS if value != value else _DOUBLE_BITS.unpack(struct.pack(">d", value))[0]


def double_compare(left: float, right: float) -> int:
    """``Double.compare``: -1, 0 or 1; NaN equals NaN and is above everything, -0.0 is below 0.0."""
    if left < right:
        return -1
    if left > right:
        return 1
    a, b = _double_bits(left), _double_bits(right)
    return (a > b) - (a < b)


_KINDS = {bool: "B", int: "I", JavaLong: "L", float: "D", str: "S"}


def _converted(text: str, kind: str) -> object:
    """The string ``text`` as a value of the Java type ``kind`` (RocketMQ's ``X.valueOf(text)``)."""
    if kind == "I":
        return parse_java_integer(text, 32)
    if kind == "L":
        return parse_java_integer(text, 64)
    if kind == "D":
        return parse_java_double(text)
    return java_boolean(text)


def java_compare(left: object, right: object) -> int:
    """Compare two non-null values as RocketMQ's evaluator does (see the module docstring): <0, 0 or >0.

    EvaluationError when a string does not convert, or for a Boolean left of a String."""
    lk, rk = _KINDS[type(left)], _KINDS[type(right)]
    if lk != rk:
        if lk == "B":
            if rk == "S":
                raise EvaluationError("a boolean cannot be compared with a string on its right")
            return -1
        if lk == "S":
            left = _converted(left, rk)  # type: ignore[arg-type]
        elif rk == "S":
            right = _converted(right, lk)  # type: ignore[arg-type]
        elif rk == "B":
            return -1
    if type(left) is float or type(right) is float:
        return double_compare(float(left), float(right))  # type: ignore[arg-type]
    return int((left > right) - (left < right))  # type: ignore[operator]  # same kind by now: int, JavaLong or str
