"""Evaluate a SQL92 selector against a message's properties, as RocketMQ's expression classes do.

:func:`compile_selector_text` parses once and turns the tree into nested closures, one per node:
evaluating a message is then one call, with no tree walk or type dispatch per node. The result
of the whole selector is TRUE, FALSE or NULL (unknown); a message matches only on TRUE.

Null semantics (a missing property is NULL), as RocketMQ 4.9/5.x answer them:

- ``>``, ``>=``, ``<``, ``<=``: NULL when either side is NULL. ``a > 5`` with no ``a`` is not TRUE,
  and neither is ``NOT (a > 5)``.
- ``=``: both NULL -> TRUE; the left NULL -> NULL; the right NULL -> FALSE. ``<>`` is NOT of that.
- ``IS NULL`` / ``IS NOT NULL``: TRUE or FALSE, never NULL.
- ``IN`` / ``NOT IN``: NULL when the property is missing (so neither matches).
- ``CONTAINS``, ``STARTSWITH``, ``ENDSWITH`` and their NOT forms: FALSE when the left side is
  missing (so neither form matches), and FALSE for an empty search string.
- ``AND``: FALSE if any side is FALSE, else NULL if any is NULL, else TRUE; ``OR`` the dual.
- A property alone as a condition: NULL when missing, FALSE otherwise.

Values compare by the Java rules of ``java_values`` (a property string becomes a number when
the other side is a number; two property strings compared with ``>`` both become doubles). A
conversion that fails makes the whole selector fail for that message: it does not match, even
under an OR whose other side is TRUE, exactly as RocketMQ's evaluator throws out of the OR.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from brokers.engine.filter.errors import EvaluationError
from brokers.engine.filter.java_values import JavaLong, double_compare, java_compare, parse_java_double
from brokers.engine.filter.sql92_ast import (
    BooleanCast,
    Comparison,
    Constant,
    Equality,
    InList,
    Logic,
    Negate,
    Node,
    Not,
    Property,
    StringTest,
)
from brokers.engine.filter.sql92_parser import parse_selector

__all__ = ["CompiledSelector", "compile_selector_text", "compile_tree"]

Properties = Mapping[str, str]
Evaluate = Callable[[Properties], object]

_ORDER_TESTS: dict[str, Callable[[int], bool]] = {
    ">": lambda r: r > 0,
    ">=": lambda r: r >= 0,
    "<": lambda r: r < 0,
    "<=": lambda r: r <= 0,
}


@dataclass(frozen=True)
class CompiledSelector:
    """One compiled selector: ``matches(properties)`` is the filter a pull applies per message."""

    expression: str
    tree: Node = field(repr=False)
    evaluate: Evaluate = field(repr=False, compare=False)

    def matches(self, properties: Properties) -> bool:
        """True when the selector is TRUE for these properties; NULL, FALSE or an evaluation error are no match."""
        try:
            return self.evaluate(properties) is True
        except EvaluationError:
            return False


def compile_selector_text(expression: str) -> CompiledSelector:
    """Parse and compile ``expression``; InvalidSelectorError (or SelectorLimitError) when it does not compile."""
    tree = parse_selector(expression)
    return CompiledSelector(expression, tree, compile_tree(tree))


def compile_tree(node: Node) -> Evaluate:
    """The function computing ``node``'s value (None for NULL) from a message's properties."""
    kind = type(node)
    if kind is Constant:
        return _constant(node.value)  # type: ignore[union-attr]
    if kind is Property:
        name = node.name  # type: ignore[union-attr]
        return lambda props: props.get(name)
    if kind is Logic:
        return _logic(node)  # type: ignore[arg-type]
    if kind is Comparison:
        return _ordered(node)  # type: ignore[arg-type]
    if kind is Equality:
        return _equality(node)  # type: ignore[arg-type]
    if kind is InList:
        return _in_list(node)  # type: ignore[arg-type]
    if kind is StringTest:
        return _string_test(node)  # type: ignore[arg-type]
    return _unary(node)


def _constant(value: object) -> Evaluate:
    return lambda props: value


def _unary(node: Node) -> Evaluate:
    operand = compile_tree(node.operand)  # type: ignore[union-attr]
    if type(node) is Negate:

        def negate(props: Properties) -> object:
            value = operand(props)
            return -value if type(value) in (int, JavaLong, float) else None  # type: ignore[operator]

        return negate
    if type(node) is Not:

        def not_(props: Properties) -> object:
            value = operand(props)
            return None if value is None else value is not True

        return not_
    assert type(node) is BooleanCast

    def cast(props: Properties) -> object:
        value = operand(props)
        return None if value is None else value is True

    return cast


def _logic(node: Logic) -> Evaluate:
    operands = tuple(compile_tree(o) for o in node.operands)
    decisive = node.op == "OR"  # OR stops at the first TRUE, AND at the first FALSE

    def logic(props: Properties) -> object:
        unknown = False
        for operand in operands:
            value = operand(props)
            if value is None:
                unknown = True
            elif value is decisive:
                return decisive
        return None if unknown else not decisive

    return logic


def _ordered(node: Comparison) -> Evaluate:
    left, right, test = compile_tree(node.left), compile_tree(node.right), _ORDER_TESTS[node.op]

    def ordered(props: Properties) -> object:
        lv = left(props)
        if lv is None:
            return None
        rv = right(props)
        if rv is None:
            return None
        if type(lv) is str and type(rv) is str:  # RocketMQ compares two strings as doubles, never as text
            return test(double_compare(parse_java_double(lv), parse_java_double(rv)))
        return test(java_compare(lv, rv))

    return ordered


def _equality(node: Equality) -> Evaluate:
    left, right = compile_tree(node.left), compile_tree(node.right)

    def equality(props: Properties) -> object:
        lv, rv = left(props), right(props)
        if lv is None or rv is None:
            return True if lv is rv else (None if lv is None else False)
        return java_compare(lv, rv) == 0

    return equality


def _in_list(node: InList) -> Evaluate:
    name, values, negated = node.operand.name, node.values, node.negated

    def in_list(props: Properties) -> object:
        value = props.get(name)
        if type(value) is not str:
            return None
        return (value in values) is not negated

    return in_list


def _string_test(node: StringTest) -> Evaluate:
    operand, search, negated = compile_tree(node.operand), node.search, node.negated
    if not search:
        return _constant(False)
    test: Callable[[str], bool] = {
        "CONTAINS": lambda value: search in value,
        "STARTSWITH": lambda value: value.startswith(search),
        "ENDSWITH": lambda value: value.endswith(search),
    }[node.op]

    def string_test(props: Properties) -> object:
        value = operand(props)
        if type(value) is not str:
            return False
        return test(value) is not negated

    return string_test
