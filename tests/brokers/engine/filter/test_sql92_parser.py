"""The selector grammar: precedence as RocketMQ's, its parse-time refusals, trailing tokens, and the limits."""

from __future__ import annotations

import re

import pytest

from brokers.engine.filter.errors import InvalidSelectorError, SelectorLimitError
from brokers.engine.filter.sql92_ast import BooleanCast, Equality, Logic, Not, Property, render
from brokers.engine.filter.sql92_parser import (
    MAX_EXPRESSION_LENGTH,
    MAX_IN_LIST_VALUES,
    MAX_NESTING_DEPTH,
    parse_selector,
)


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        ("a > 5 AND b = 'x' OR c < 2", "(((a > 5) AND (b = 'x')) OR (c < 2))"),
        ("a = 1 OR b = 2 AND c = 3", "((a = 1) OR ((b = 2) AND (c = 3)))"),
        ("a > 1 = TRUE", "((a > 1) = TRUE)"),
        ("NOT (a > 5)", "(NOT (a > 5))"),
        ("a IS NULL", "(a = NULL)"),
        ("a IS NOT NULL", "(NOT (a = NULL))"),
        ("a <> 'x'", "(NOT (a = 'x'))"),
        ("a BETWEEN 1 AND 5 AND b = 1", "((a >= 1) AND (a <= 5) AND (b = 1))"),
        ("a NOT BETWEEN 1 AND 5", "((a < 1) OR (a > 5))"),
        ("a NOT IN ('y', 'x')", "(a NOT IN ('x', 'y'))"),
        (
            "a NOT CONTAINS 'x' and b startswith 'y' and c not endswith 'z'",
            "((a NOT CONTAINS 'x') AND (b STARTSWITH 'y') AND (c NOT ENDSWITH 'z'))",
        ),
        ("a > -5 AND b < +3 AND c > - -2.5", "((a > (- 5)) AND (b < 3) AND (c > (- (- 2.5))))"),
        ("a <= now", "(a <= now)"),
    ],
)
def test_precedence_follows_rocketmq(text: str, tree: str) -> None:
    assert render(parse_selector(text)) == tree


def test_a_property_alone_is_a_condition_and_chains_are_flat() -> None:
    assert parse_selector("a") == BooleanCast(Property("a"))
    node = parse_selector("a AND b AND (c AND d)")
    assert isinstance(node, Logic) and node.op == "AND" and len(node.operands) == 4
    assert parse_selector("(a IS NULL)") == Equality(Property("a"), parse_selector("a IS NULL").right)  # type: ignore[union-attr]
    assert isinstance(parse_selector("NOT a"), Not)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the selector is empty"),
        ("  \n ", "the selector is empty"),
        ("5", "5 at line 1, column 1 is not a condition"),
        ("'x' OR a = 1", "'x' at line 1, column 1 is not a condition"),
        ("NOT 5", "5 at line 1, column 5 is not a condition"),
        ("a > 'x'", "'x' cannot be compared with >"),
        ("a >= TRUE", "TRUE cannot be compared with >="),
        ("(a > 1) < 5", "(a > 1) cannot be compared with <"),
        ("NOT a > 5", "(NOT a) cannot be compared with >"),
        ("a = NULL", "NULL cannot be compared with = or <>"),
        ("NULL <> a", "NULL cannot be compared with = or <>"),
        ("TRUE = 5", "TRUE cannot be compared with 5"),
        ("a BETWEEN 10 AND 0", "the lower bound 10 of BETWEEN at line 1, column 3 is greater than its upper bound 0"),
        ("a BETWEEN NULL AND 5", "the bounds of BETWEEN at line 1, column 3 cannot be NULL"),
        ("a BETWEEN 'x' AND 'y'", "'x' cannot be compared with >="),
        ("a BETWEEN 5 AND 'x'", "do not compare"),
        ("'x' IN ('x')", "IN needs a property on its left"),
        ("a IN (1)", "expected a string literal in the IN list"),
        ("a IN ()", "expected a string literal in the IN list"),
        ("a IN ('x' 'y')", "expected , or ) in the IN list"),
        ("a CONTAINS x", "expected a string literal after CONTAINS"),
        ("a IS 5", "expected NULL or NOT NULL after IS"),
        ("a and between 2 and 10", "unexpected 'between' at line 1, column 7"),
        ("a > 1 b = 2", "unexpected 'b' at line 1, column 7 after a complete expression"),
        ("(a > 1", "unexpected end of the selector at line 1, column 7, expected a closing )"),
        ("a >", "unexpected end of the selector"),
    ],
)
def test_refusals_name_the_problem(text: str, message: str) -> None:
    with pytest.raises(InvalidSelectorError, match=re.escape(message)):
        parse_selector(text)


def test_not_between_checks_no_bounds_as_in_rocketmq() -> None:
    assert render(parse_selector("a NOT BETWEEN 10 AND 0")) == "((a < 10) OR (a > 0))"
    assert render(parse_selector("a BETWEEN 5 AND -1")) == "((a >= 5) AND (a <= (- 1)))"  # a negation is no literal


def test_the_length_limit() -> None:
    fits = "a = '" + "x" * (MAX_EXPRESSION_LENGTH - 6) + "'"
    assert len(fits) == MAX_EXPRESSION_LENGTH
    parse_selector(fits)
    with pytest.raises(SelectorLimitError, match=f"4097 characters, more than the limit of {MAX_EXPRESSION_LENGTH}"):
        parse_selector(fits + " ")


def test_the_nesting_limit_counts_parentheses_prefixes_and_chains() -> None:
    parse_selector("(" * (MAX_NESTING_DEPTH - 1) + "a > 1" + ")" * (MAX_NESTING_DEPTH - 1))
    for text in (
        "(" * (MAX_NESTING_DEPTH + 1) + "a" + ")" * (MAX_NESTING_DEPTH + 1),
        "NOT " * (MAX_NESTING_DEPTH + 1) + "a",
        "a > " + "-" * (MAX_NESTING_DEPTH + 1) + "1",
        "a = 1" + " = TRUE" * MAX_NESTING_DEPTH,
        "(" * 2000,
    ):
        with pytest.raises(SelectorLimitError, match=f"nests deeper than the limit of {MAX_NESTING_DEPTH} levels"):
            parse_selector(text)


def test_the_in_list_limit() -> None:
    values = ", ".join(f"'{i}'" for i in range(MAX_IN_LIST_VALUES))
    parse_selector(f"a IN ({values})")
    with pytest.raises(SelectorLimitError, match=f"more than the limit of {MAX_IN_LIST_VALUES} values"):
        parse_selector(f"a IN ({values}, 'one more')")


def test_a_long_and_chain_within_the_length_limit_parses_flat() -> None:
    text = " AND ".join(f"p{i} > {i}" for i in range(250))
    assert len(text) < MAX_EXPRESSION_LENGTH
    node = parse_selector(text)
    assert isinstance(node, Logic) and len(node.operands) == 250
