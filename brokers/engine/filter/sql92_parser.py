"""Parse a SQL92 selector into an expression tree: RocketMQ's grammar, its parse-time checks, our limits.

The grammar (``SelectorParser.jj`` of Apache RocketMQ 5.x; 4.9's is the same without the string
tests CONTAINS, STARTSWITH and ENDSWITH, which came with 5.1.3); each level binds tighter than the
one above it::

    selector   := or EOF
    or         := and ( OR and )*
    and        := equality ( AND equality )*
    equality   := compare ( '=' compare | '<>' compare | IS NULL | IS NOT NULL )*
    compare    := unary ( ('>' | '>=' | '<' | '<=') unary
                        | [NOT] (CONTAINS | STARTSWITH | ENDSWITH) string
                        | [NOT] BETWEEN unary AND unary
                        | [NOT] IN '(' string ( ',' string )* ')' )*
    unary      := '+' unary | '-' unary | NOT unary | primary
    primary    := literal | property | '(' or ')'
    literal    := string | integer | float | TRUE | FALSE | NULL

So ``NOT`` binds tightest: ``NOT a > 5`` is ``(NOT a) > 5`` and is refused; write ``NOT (a > 5)``.
``=`` binds looser than ``>``. IN lists hold string literals only, and IN needs a property on its left.

RocketMQ's checks, refused here as there: ``>``/``>=``/``<``/``<=`` take numbers, properties and
negations, never string or boolean literals nor conditions; ``=`` and ``<>`` refuse a NULL literal
(use ``IS NULL``) and ``TRUE = 5`` (a boolean literal left of another literal); ``BETWEEN`` refuses
NULL bounds and, when both bounds are literals, a lower bound above the upper one (``NOT BETWEEN``
checks neither, as in RocketMQ); AND, OR, NOT and the whole selector need a condition (a property
counts: ``a AND b``), so ``5`` or ``'x' OR a = 1`` are refused.

One difference, on purpose: RocketMQ stops at the end of the first complete expression and
ignores what follows (``a = 1 b = 2`` filters by ``a = 1`` alone); we refuse the trailing tokens.

Limits (Gantry's; RocketMQ has none), each refusal naming its limit:

- MAX_EXPRESSION_LENGTH characters: selectors are rules over a few properties (Apache's examples
  and tests stay under 200 characters); 4096 leaves room for long IN lists and bounds the compile,
  which runs on the broker's event loop once per distinct expression: 4-13 ms for a 3,500-character
  chain of 250 comparisons on the 2-core development machine under load, 0.1 ms for a typical one.
- MAX_NESTING_DEPTH levels of parentheses, prefix operators (NOT, -, +) and of the tree itself
  (chains like ``a = b = c``): parsing recurses about eight calls per parenthesis and evaluation
  one per level, so 32 levels stay far inside Python's stack of 1000 frames; real selectors nest
  two or three.
- MAX_IN_LIST_VALUES values in one IN list: a selector names a few values; more is a data set
  that belongs in a tag or a key. It also bounds the set each IN builds.
"""

from __future__ import annotations

from collections.abc import Callable

from brokers.engine.filter.errors import EvaluationError, InvalidSelectorError, SelectorLimitError, where
from brokers.engine.filter.java_values import java_compare
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
    is_boolean,
    render,
)
from brokers.engine.filter.sql92_lexer import Token, tokenize

__all__ = ["MAX_EXPRESSION_LENGTH", "MAX_IN_LIST_VALUES", "MAX_NESTING_DEPTH", "parse_selector"]

MAX_EXPRESSION_LENGTH = 4096
MAX_NESTING_DEPTH = 32
MAX_IN_LIST_VALUES = 512

_COMPARISONS = (">", ">=", "<", "<=")
_STRING_TESTS = ("CONTAINS", "STARTSWITH", "ENDSWITH")
_AFTER_NOT = ("CONTAINS", "STARTSWITH", "ENDSWITH", "BETWEEN", "IN")
NULL = Constant(None)


def parse_selector(text: str) -> Node:
    """The expression tree of ``text``; InvalidSelectorError (SelectorLimitError for a limit) when it does not compile."""
    if not isinstance(text, str):
        raise InvalidSelectorError("the selector is not a string")
    if len(text) > MAX_EXPRESSION_LENGTH:
        raise SelectorLimitError(
            f"the selector has {len(text)} characters, more than the limit of {MAX_EXPRESSION_LENGTH}"
        )
    if not text.strip():
        raise InvalidSelectorError("the selector is empty")
    tree = _Parser(text, tokenize(text)).selector()
    _check_depth(tree)
    return tree


class _Parser:
    """Recursive descent over the token list, one method per grammar level."""

    def __init__(self, text: str, tokens: list[Token]) -> None:
        self.text = text
        self.tokens = tokens + [tokens[-1]] * 2  # EOF repeated: a look two tokens past the end finds EOF
        self.at = 0
        self.depth = 0

    # -- tokens ----------------------------------------------------------------------------

    def peek(self, ahead: int = 0) -> Token:
        return self.tokens[self.at + ahead]

    def accept(self, kind: str, value: object) -> bool:
        token = self.peek()
        if token.kind == kind and token.value == value:
            self.at += 1
            return True
        return False

    def expect(self, kind: str, value: object, what: str) -> Token:
        token = self.peek()
        if token.kind != kind or (value is not None and token.value != value):
            raise self.unexpected(token, what)
        self.at += 1
        return token

    def unexpected(self, token: Token, expected: str) -> InvalidSelectorError:
        found = "end of the selector" if token.kind == "EOF" else repr(token.text)
        return InvalidSelectorError(f"unexpected {found} at {where(self.text, token.position)}, expected {expected}")

    def keyword(self, word: str, ahead: int = 0) -> bool:
        token = self.peek(ahead)
        return token.kind == "KEYWORD" and token.value == word

    def nest(self, token: Token) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING_DEPTH:
            raise SelectorLimitError(
                f"the selector nests deeper than the limit of {MAX_NESTING_DEPTH} levels "
                f"at {where(self.text, token.position)}"
            )

    # -- grammar ---------------------------------------------------------------------------

    def selector(self) -> Node:
        node = self.condition(self.or_(), self.tokens[0])
        token = self.peek()
        if token.kind != "EOF":
            raise InvalidSelectorError(
                f"unexpected {token.text!r} at {where(self.text, token.position)} after a complete "
                "expression (join conditions with AND or OR)"
            )
        return node

    def or_(self) -> Node:
        return self.logic("OR", self.and_)

    def and_(self) -> Node:
        return self.logic("AND", self.equality)

    def logic(self, op: str, operand: Callable[[], Node]) -> Node:
        start = self.peek()
        node = operand()
        if not self.keyword(op):
            return node
        operands = list(self.flat(op, self.condition(node, start)))
        while self.keyword(op):
            self.at += 1
            start = self.peek()
            operands += self.flat(op, self.condition(operand(), start))
        return Logic(op, tuple(operands))

    @staticmethod
    def flat(op: str, node: Node) -> tuple[Node, ...]:
        return node.operands if isinstance(node, Logic) and node.op == op else (node,)

    def condition(self, node: Node, token: Token) -> Node:
        """RocketMQ's asBooleanExpression: a condition as is, a property cast, anything else refused."""
        if is_boolean(node):
            return node
        if isinstance(node, Property):
            return BooleanCast(node)
        raise InvalidSelectorError(
            f"{render(node)} at {where(self.text, token.position)} is not a condition (it gives no TRUE or FALSE)"
        )

    def equality(self) -> Node:
        start = self.peek()
        left = self.compare()
        while True:
            if self.accept("OP", "="):
                left = self.equal(left, self.compare(), start)
            elif self.accept("OP", "<>"):
                left = Not(self.equal(left, self.compare(), start))
            elif self.keyword("IS") and self.keyword("NULL", 1):
                self.at += 2
                left = Equality(left, NULL)
            elif self.keyword("IS"):
                self.at += 1
                self.expect("KEYWORD", "NOT", "NULL or NOT NULL after IS")
                self.expect("KEYWORD", "NULL", "NULL after IS NOT")
                left = Not(Equality(left, NULL))
            else:
                return left

    def equal(self, left: Node, right: Node, token: Token) -> Node:
        for side in (left, right):
            if isinstance(side, Constant) and side.value is None:
                raise InvalidSelectorError(
                    f"NULL cannot be compared with = or <> (at {where(self.text, token.position)}); "
                    "use IS NULL or IS NOT NULL"
                )
        if isinstance(left, Constant) and isinstance(right, Constant) and is_boolean(left) and not is_boolean(right):
            raise InvalidSelectorError(
                f"{render(left)} cannot be compared with {render(right)} (at {where(self.text, token.position)})"
            )
        return Equality(left, right)

    def compare(self) -> Node:
        start = self.peek()
        left = self.unary()
        while True:
            token = self.peek()
            negated = self.keyword("NOT") and self.peek(1).kind == "KEYWORD" and self.peek(1).value in _AFTER_NOT
            if negated:
                self.at += 1
                token = self.peek()
            if token.kind == "OP" and token.value in _COMPARISONS and not negated:
                self.at += 1
                left = self.ordered(str(token.value), left, self.unary(), token)
            elif token.kind == "KEYWORD" and token.value in _STRING_TESTS:
                self.at += 1
                search = self.expect("STRING", None, f"a string literal after {token.value}")
                left = StringTest(str(token.value), left, str(search.value), negated)
            elif self.keyword("BETWEEN"):
                self.at += 1
                low = self.unary()
                self.expect("KEYWORD", "AND", "AND between the bounds of BETWEEN")
                high = self.unary()
                left = self.between(left, low, high, negated, token)
            elif self.keyword("IN"):
                self.at += 1
                left = self.in_list(left, negated, start)
            else:
                return left

    def ordered(self, op: str, left: Node, right: Node, token: Token) -> Comparison:
        """RocketMQ's checkLessThanOperand on both sides of ``>``, ``>=``, ``<``, ``<=``."""
        for side in (left, right):
            if (isinstance(side, Constant) and not _is_number(side.value)) or is_boolean(side):
                hint = (
                    "NOT binds tighter than comparisons: write NOT (a > 5)"
                    if isinstance(side, Not)
                    else "only numbers, properties and negated numbers can"
                )
                raise InvalidSelectorError(
                    f"{render(side)} cannot be compared with {op} at {where(self.text, token.position)} ({hint})"
                )
        return Comparison(op, left, right)

    def between(self, value: Node, low: Node, high: Node, negated: bool, token: Token) -> Node:
        if negated:
            return Logic("OR", (self.ordered("<", value, low, token), self.ordered(">", value, high, token)))
        if isinstance(low, Constant) and isinstance(high, Constant):
            if low.value is None or high.value is None:
                raise InvalidSelectorError(
                    f"the bounds of BETWEEN at {where(self.text, token.position)} cannot be NULL"
                )
            try:
                reversed_bounds = java_compare(high.value, low.value) < 0
            except EvaluationError as exc:
                raise InvalidSelectorError(
                    f"the bounds of BETWEEN at {where(self.text, token.position)} do not compare: {exc}"
                ) from None
            if reversed_bounds:
                raise InvalidSelectorError(
                    f"the lower bound {render(low)} of BETWEEN at {where(self.text, token.position)} "
                    f"is greater than its upper bound {render(high)}"
                )
        return Logic("AND", (self.ordered(">=", value, low, token), self.ordered("<=", value, high, token)))

    def in_list(self, left: Node, negated: bool, start: Token) -> InList:
        if not isinstance(left, Property):
            raise InvalidSelectorError(
                f"IN needs a property on its left, not {render(left)} (at {where(self.text, start.position)})"
            )
        self.expect("OP", "(", "( after IN")
        values = [self.expect("STRING", None, "a string literal in the IN list").value]
        while self.accept("OP", ","):
            values.append(self.expect("STRING", None, "a string literal after , in the IN list").value)
            if len(values) > MAX_IN_LIST_VALUES:
                raise SelectorLimitError(
                    f"the IN list at {where(self.text, start.position)} has more than "
                    f"the limit of {MAX_IN_LIST_VALUES} values"
                )
        self.expect("OP", ")", ", or ) in the IN list")
        return InList(left, frozenset(str(v) for v in values), negated)

    def unary(self) -> Node:
        token = self.peek()
        if token.kind == "OP" and token.value in ("+", "-"):
            self.at += 1
            self.nest(token)
            operand = self.unary()
            self.depth -= 1
            return operand if token.value == "+" else Negate(operand)
        if self.keyword("NOT"):
            self.at += 1
            self.nest(token)
            start = self.peek()
            operand = self.condition(self.unary(), start)
            self.depth -= 1
            return Not(operand)
        return self.primary()

    def primary(self) -> Node:
        token = self.peek()
        self.at += 1
        if token.kind in ("STRING", "INTEGER", "FLOAT"):
            return Constant(token.value)
        if token.kind == "KEYWORD" and token.value in ("TRUE", "FALSE", "NULL"):
            return Constant({"TRUE": True, "FALSE": False, "NULL": None}[str(token.value)])
        if token.kind == "ID":
            return Property(str(token.value))
        if token.kind == "OP" and token.value == "(":
            self.nest(token)
            node = self.or_()
            self.expect("OP", ")", "a closing )")
            self.depth -= 1
            return node
        self.at -= 1
        raise self.unexpected(token, "a property, a literal, NOT, - or (")


def _is_number(value: object) -> bool:
    return type(value) is not bool and isinstance(value, (int, float))


def _check_depth(tree: Node) -> None:
    """SelectorLimitError when the tree is deeper than MAX_NESTING_DEPTH (chains like ``a = b = c = ...``)."""
    stack: list[tuple[Node, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_NESTING_DEPTH:
            raise SelectorLimitError(f"the selector nests deeper than the limit of {MAX_NESTING_DEPTH} levels")
        for child in _children(node):
            stack.append((child, depth + 1))


def _children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, Logic):
        return node.operands
    if isinstance(node, (Comparison, Equality)):
        return (node.left, node.right)
    if isinstance(node, (Negate, Not, BooleanCast, InList, StringTest)):
        return (node.operand,)
    return ()
