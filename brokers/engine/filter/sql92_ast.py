"""The expression tree of a SQL92 selector: what ``sql92_parser`` builds and ``sql92_eval`` compiles.

Nodes mirror RocketMQ's expression classes, with two simplifications that change no answer:
``BETWEEN`` is kept as the AND of two comparisons (``NOT BETWEEN`` the OR of two), as RocketMQ
builds it, and a chain ``a AND b AND c`` is one :class:`Logic` node with three operands
(evaluated left to right, stopping at the first FALSE, which is what the nested binary form does),
so a long chain does not nest deeply. ``<>`` is :class:`Not` over :class:`Equality`; ``IS NULL``
is :class:`Equality` with the NULL constant; a property used as a condition (``a AND b``) is
:class:`BooleanCast`.

*Boolean* nodes (:func:`is_boolean`) give TRUE, FALSE or NULL: the literals TRUE, FALSE and
NULL, comparisons, logic, NOT, IN and the string tests. Properties, other literals and negations
give values; RocketMQ's parse-time checks (``sql92_parser``) are about this difference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

__all__ = [
    "BooleanCast",
    "Comparison",
    "Constant",
    "Equality",
    "InList",
    "Logic",
    "Negate",
    "Node",
    "Not",
    "Property",
    "StringTest",
    "is_boolean",
    "render",
]


@dataclass(frozen=True, slots=True)
class Constant:
    """A literal: None (NULL), bool, str, int (a Java Integer), JavaLong or float (a Java Double)."""

    value: object


@dataclass(frozen=True, slots=True)
class Property:
    """A message property by name (case kept); NULL when the message has none of that name."""

    name: str


@dataclass(frozen=True, slots=True)
class Negate:
    """Unary minus: the negated number, NULL for anything else."""

    operand: Node


@dataclass(frozen=True, slots=True)
class Not:
    """NOT: TRUE <-> FALSE, NULL stays NULL."""

    operand: Node


@dataclass(frozen=True, slots=True)
class BooleanCast:
    """A property used as a condition: NULL when missing, else FALSE (property values are strings, never booleans)."""

    operand: Node


@dataclass(frozen=True, slots=True)
class Logic:
    """``AND`` or ``OR`` over two or more conditions, with SQL's NULL rules."""

    op: str
    operands: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Comparison:
    """``>``, ``>=``, ``<`` or ``<=``; NULL when a side is NULL; two strings compare as doubles."""

    op: str
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Equality:
    """``=``: TRUE when both sides are NULL, NULL when only the left is, FALSE when only the right is."""

    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class InList:
    """``prop IN ('a', 'b')`` (or NOT IN): NULL when the property is missing."""

    operand: Property
    values: frozenset[str]
    negated: bool


@dataclass(frozen=True, slots=True)
class StringTest:
    """``CONTAINS``, ``STARTSWITH`` or ``ENDSWITH`` (or their NOT forms): FALSE, never NULL, when the
    left side is not a string or the searched string is empty."""

    op: str
    operand: Node
    search: str
    negated: bool


Node = Union[Constant, Property, Negate, Not, BooleanCast, Logic, Comparison, Equality, InList, StringTest]

_BOOLEAN_NODES = (Not, BooleanCast, Logic, Comparison, Equality, InList, StringTest)


def is_boolean(node: Node) -> bool:
    """Whether ``node`` is one of RocketMQ's BooleanExpressions (TRUE, FALSE, NULL literals included)."""
    if isinstance(node, Constant):
        return node.value is None or type(node.value) is bool
    return isinstance(node, _BOOLEAN_NODES)


def render(node: Node) -> str:
    """``node`` written back as a selector, for error messages (``'it''s'``, ``NULL``, ``(a > 5)``)."""
    if isinstance(node, Constant):
        value = node.value
        if value is None or type(value) is bool:
            return {None: "NULL", True: "TRUE", False: "FALSE"}[value]
        if isinstance(value, str):
            return "'" + value.replace("'", "''") + "'"
        return repr(float(value)) if isinstance(value, float) else str(int(value))  # type: ignore[call-overload]
    if isinstance(node, Property):
        return node.name
    if isinstance(node, (Negate, Not)):
        return f"({'-' if isinstance(node, Negate) else 'NOT'} {render(node.operand)})"
    if isinstance(node, BooleanCast):
        return render(node.operand)
    if isinstance(node, Logic):
        return "(" + f" {node.op} ".join(render(o) for o in node.operands) + ")"
    if isinstance(node, Comparison):
        return f"({render(node.left)} {node.op} {render(node.right)})"
    if isinstance(node, Equality):
        return f"({render(node.left)} = {render(node.right)})"
    if isinstance(node, InList):
        values = ", ".join(render(Constant(v)) for v in sorted(node.values))
        return f"({node.operand.name} {'NOT IN' if node.negated else 'IN'} ({values}))"
    return f"({render(node.operand)} {'NOT ' if node.negated else ''}{node.op} {render(Constant(node.search))})"
