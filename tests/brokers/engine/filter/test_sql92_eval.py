"""Evaluation of SQL92 selectors: every operator, NULL semantics, numbers against strings, Java's conversions.

Each case is (selector, properties, expected value): TRUE, FALSE or None (NULL, unknown). A message
matches only on TRUE; ``ERROR`` marks the cases where RocketMQ's evaluator throws, which is no match.
"""

from __future__ import annotations

import random

import pytest

from brokers.engine.filter.errors import EvaluationError, InvalidSelectorError
from brokers.engine.filter.sql92_eval import compile_selector_text

ERROR = "error"


def value_of(selector: str, props: dict[str, str]) -> object:
    compiled = compile_selector_text(selector)
    try:
        value = compiled.evaluate(props)
    except EvaluationError:
        assert compiled.matches(props) is False
        return ERROR
    assert compiled.matches(props) is (value is True)
    return value


CASES = [
    # comparisons of numbers: the property becomes the constant's type
    ("a > 5", {"a": "7"}, True),
    ("a > 5", {"a": "5"}, False),
    ("a >= 5", {"a": "5"}, True),
    ("a < 5", {"a": "-7"}, True),
    ("a <= 5", {"a": "6"}, False),
    ("a > 5", {}, None),
    ("a > 5", {"a": "7.5"}, ERROR),  # Integer.valueOf("7.5") throws
    ("a > 5.0", {"a": "7.5"}, True),
    ("a > 5", {"a": "abc"}, ERROR),
    ("a > 5", {"a": " 7"}, ERROR),
    ("a > 5", {"a": "+7"}, True),
    ("a > 5", {"a": "3000000000"}, ERROR),  # past an Integer
    ("a > 3000000000", {"a": "3000000001"}, True),
    ("a > 3.1E10", {"a": "3.1415E10"}, True),
    ("a > 3.14", {"a": "3.1415"}, True),
    ("a > 5.0", {"a": " 7 "}, True),  # Double.valueOf trims
    ("a > 5.0", {"a": "7f"}, True),
    ("a > 5.0", {"a": "0x1.8p3"}, True),
    ("a > 5.0", {"a": "NaN"}, True),
    ("a < 5.0", {"a": "-Infinity"}, True),
    ("a > 5.0", {"a": "1_000"}, ERROR),
    ("a > -5", {"a": "-3"}, True),
    ("a > - -5", {"a": "6"}, True),
    ("-a > 5", {"a": "-7"}, None),
    # two properties compared by order: both as doubles, never as text
    ("a > b", {"a": "20", "b": "10"}, True),
    ("a > b", {"a": "10", "b": "20"}, False),
    ("a > b", {"a": "x", "b": "y"}, ERROR),
    ("a BETWEEN up AND low", {"a": "3.14"}, None),
    ("a BETWEEN up AND low", {"a": "3.14", "up": "up", "low": "low"}, ERROR),
    # equality: numbers by value, strings by text, NULL rules
    ("a = 5", {"a": "5"}, True),
    ("a = 5", {"a": "05"}, True),
    ("a = '5'", {"a": "05"}, False),
    ("a = 5", {"a": "x"}, ERROR),
    ("a = 5.0", {"a": "5"}, True),
    ("a = 'hello'", {"a": "hello"}, True),
    ("a = b", {"a": "3.14", "b": "3.14"}, True),
    ("a <> b", {"a": "3.14", "b": "3.141"}, True),
    ("a = b", {}, True),
    ("a = 'x'", {}, None),
    ("'x' = a", {}, False),
    ("a <> 'x'", {}, None),
    ("a = TRUE", {"a": "TRUE"}, True),
    ("a = TRUE", {"a": "yes"}, False),
    ("a = FALSE", {"a": "no"}, True),
    ("TRUE = a", {"a": "true"}, ERROR),  # RocketMQ throws (a Boolean left of a String)
    ("5 = TRUE", {}, False),
    ("(a > 1) = TRUE", {"a": "2"}, True),
    ("(a > 1) = FALSE", {}, None),
    # IS NULL
    ("a IS NULL", {}, True),
    ("a IS NULL", {"a": "x"}, False),
    ("a IS NOT NULL", {"a": "x"}, True),
    ("a IS NOT NULL", {}, False),
    # BETWEEN
    ("a BETWEEN 2 AND 10", {"a": "2"}, True),
    ("a BETWEEN 2 AND 10", {"a": "11"}, False),
    ("a BETWEEN 2 AND 10", {}, None),
    ("a NOT BETWEEN 2 AND 10", {"a": "1"}, True),
    ("a NOT BETWEEN 2 AND 10", {"a": "5"}, False),
    ("a NOT BETWEEN 2 AND 10", {}, None),
    ("a BETWEEN 0 AND 100", {"a": "abc"}, ERROR),
    # IN
    ("a IN ('3', '4', '5')", {"a": "4"}, True),
    ("a IN ('3', '4')", {"a": "6"}, False),
    ("a IN ('3')", {}, None),
    ("a NOT IN ('3', '4')", {"a": "6"}, True),
    ("a NOT IN ('3', '4')", {"a": "3"}, False),
    ("a NOT IN ('3')", {}, None),
    ("a IN ('it''s')", {"a": "it's"}, True),
    # string tests: FALSE, never NULL, on a missing property; FALSE for an empty search
    ("v CONTAINS 'x'", {"v": "axb"}, True),
    ("v STARTSWITH 'ax'", {"v": "axb"}, True),
    ("v ENDSWITH 'xb'", {"v": "axb"}, True),
    ("v CONTAINS 'u'", {"v": "axb"}, False),
    ("v NOT CONTAINS 'u'", {"v": "axb"}, True),
    ("v NOT STARTSWITH 'ax'", {"v": "axb"}, False),
    ("v NOT ENDSWITH 'u'", {"v": "axb"}, True),
    ("v CONTAINS 'x'", {}, False),
    ("v NOT CONTAINS 'x'", {}, False),
    ("v NOT ENDSWITH 'x'", {}, False),
    ("v CONTAINS ''", {"v": "axb"}, False),
    ("v NOT CONTAINS ''", {"v": "axb"}, False),
    ("' ' CONTAINS ' '", {}, True),
    ("'s' ENDSWITH '\\'", {}, False),
    ("(a > 1) CONTAINS 'x'", {"a": "2"}, False),
    # logic with NULL
    ("a = 1 AND b = 1", {"a": "1", "b": "1"}, True),
    ("a = 1 AND b = 1", {"a": "2"}, False),
    ("a = 1 AND b = 1", {"a": "1"}, None),
    ("a = 1 OR b = 1", {"b": "1"}, True),
    ("a = 1 OR b = 1", {"a": "2"}, None),
    ("a = 1 OR b = 1", {"a": "2", "b": "2"}, False),
    ("NOT (a = 1)", {}, None),
    ("NOT (a = 1)", {"a": "2"}, True),
    ("a IS NULL OR a = 'hello'", {}, True),
    ("a IS NULL OR a = 'hello'", {"a": "abc"}, False),
    ("a > 5 OR b = 'x'", {"a": "abc", "b": "x"}, ERROR),  # the failing left side throws out of the OR
    ("b = 'x' OR a > 5", {"a": "abc", "b": "x"}, True),  # OR stops at its first TRUE
    ("a = 1 AND a > 5", {"a": "2", "b": "x"}, False),
    # literals and a property as a condition
    ("TRUE", {}, True),
    ("FALSE", {}, False),
    ("NULL", {}, None),
    ("NOT NULL", {}, None),
    ("a", {}, None),
    ("a", {"a": "true"}, False),
    ("NOT a", {"a": "true"}, True),
    ("a OR TRUE", {}, True),
    # what messages carry: user properties and TAGS
    ("TAGS = 'TagA' AND region = 'eu'", {"TAGS": "TagA", "region": "eu", "KEYS": "k"}, True),
    ("TAGS IS NOT NULL AND TAGS = '''''tag'''''", {"TAGS": "''tag''"}, True),
    ("tags = 'TagA'", {"TAGS": "TagA"}, None),  # names are case-sensitive
    ("a <= now", {"a": "1", "now": "2"}, True),
]


@pytest.mark.parametrize(("selector", "props", "expected"), CASES)
def test_evaluation(selector: str, props: dict[str, str], expected: object) -> None:
    assert value_of(selector, props) == expected


def test_rocketmqs_all_in_one_examples() -> None:
    props = {"a": "3", "b": "3", "c": "elva"}
    for op in ("contains", "startswith", "endswith"):
        assert compile_selector_text(f"a not in ('4', '4', '5') and b between 3 and 10 and c not {op} 'axbc'").matches(
            props
        )


def test_one_compiled_selector_serves_many_messages() -> None:
    selector = compile_selector_text("price > 100 AND TAGS IN ('book', 'pen')")
    messages = [{"price": str(p), "TAGS": t} for p in (50, 150, 250) for t in ("book", "pen", "cup")]
    assert [m for m in messages if selector.matches(m)] == [
        {"price": "150", "TAGS": "book"},
        {"price": "150", "TAGS": "pen"},
        {"price": "250", "TAGS": "book"},
        {"price": "250", "TAGS": "pen"},
    ]


def _random_selector(rng: random.Random, depth: int = 0) -> str:
    leaves = ["a", "b", "TAGS", "5", "-2", "2.5", "'x'", "'7'", "TRUE", "NULL", "3000000000"]
    operand = rng.choice(leaves)
    roll = rng.random()
    if depth > 3 or roll < 0.3:
        op = rng.choice(
            [
                "=",
                "<>",
                ">",
                ">=",
                "<",
                "<=",
                "IS NULL",
                "IS NOT NULL",
                "IN ('x', '7')",
                "NOT IN ('x')",
                "CONTAINS 'x'",
                "NOT STARTSWITH ''",
                "BETWEEN 1 AND 9",
                "NOT BETWEEN -1 AND 2.5",
            ]
        )
        if op in ("=", "<>", ">", ">=", "<", "<="):
            return f"{operand} {op} {rng.choice(leaves)}"
        return f"{operand} {op}"
    if roll < 0.5:
        return f"NOT ({_random_selector(rng, depth + 1)})"
    return f"({_random_selector(rng, depth + 1)}) {rng.choice(['AND', 'OR'])} ({_random_selector(rng, depth + 1)})"


def test_any_selector_either_refuses_to_compile_or_answers_every_message() -> None:
    rng = random.Random(20240501)
    values = ["7", "7.5", "x", "", "true", "-3", "3000000001", "NaN", " 5", "1e3"]
    compiled = 0
    for _ in range(2000):
        try:
            selector = compile_selector_text(_random_selector(rng))
        except InvalidSelectorError:
            continue
        compiled += 1
        for _ in range(5):
            props = {name: rng.choice(values) for name in ("a", "b", "TAGS") if rng.random() < 0.7}
            assert selector.matches(props) in (True, False)
    assert compiled > 500
