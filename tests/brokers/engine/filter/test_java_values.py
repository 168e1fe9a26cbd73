"""Java's conversions and comparisons as RocketMQ's evaluator applies them (ComparisonExpression.__compare)."""

from __future__ import annotations

import math

import pytest

from brokers.engine.filter.errors import EvaluationError
from brokers.engine.filter.java_values import (
    JavaLong,
    double_compare,
    java_boolean,
    java_compare,
    parse_java_double,
    parse_java_integer,
)


@pytest.mark.parametrize(
    ("text", "bits", "value"),
    [
        ("7", 32, 7),
        ("+7", 32, 7),
        ("-7", 32, -7),
        ("007", 32, 7),
        ("2147483647", 32, 2147483647),
        ("-2147483648", 32, -2147483648),
        ("9223372036854775807", 64, 9223372036854775807),
        ("٣", 32, 3),  # Character.digit takes any decimal digit
    ],
)
def test_integers_parse_as_integer_value_of(text: str, bits: int, value: int) -> None:
    assert parse_java_integer(text, bits) == value
    assert type(parse_java_integer(text, bits)) is (JavaLong if bits == 64 else int)


@pytest.mark.parametrize(
    ("text", "bits"),
    [
        ("", 32),
        ("+", 32),
        ("7.0", 32),
        (" 7", 32),
        ("7 ", 32),
        ("1_000", 32),
        ("0x10", 32),
        ("2147483648", 32),
        ("9223372036854775808", 64),
        ("1" * 5000, 64),
    ],
)
def test_what_integer_value_of_refuses(text: str, bits: int) -> None:
    with pytest.raises(EvaluationError):
        parse_java_integer(text, bits)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("7", 7.0),
        ("7.", 7.0),
        (".5", 0.5),
        ("-1e3", -1000.0),
        ("+2.5E-1", 0.25),
        ("7f", 7.0),
        ("7D", 7.0),
        (" \t7\n", 7.0),
        ("Infinity", math.inf),
        ("-Infinity", -math.inf),
        ("0x1.8p1", 3.0),
        ("-0X10P0", -16.0),
        ("1e999", math.inf),
    ],
)
def test_doubles_parse_as_double_value_of(text: str, value: float) -> None:
    assert parse_java_double(text) == value


@pytest.mark.parametrize("text", ["", ".", "e5", "1e", "inf", "nan", "infinity", "1_0", "0x10", "7 7", "٣"])
def test_what_double_value_of_refuses(text: str) -> None:
    with pytest.raises(EvaluationError):
        parse_java_double(text)


def test_nan_parses_and_compares_above_everything() -> None:
    nan = parse_java_double("NaN")
    assert nan != nan
    assert double_compare(nan, math.inf) == 1 and double_compare(nan, nan) == 0 and double_compare(1.0, nan) == -1
    assert double_compare(-0.0, 0.0) == -1 and double_compare(0.0, -0.0) == 1 and double_compare(2.0, 2.0) == 0


def test_boolean_value_of() -> None:
    assert [java_boolean(t) for t in ("true", "TRUE", "tRuE", "yes", "1", "", "true ")] == [
        True,
        True,
        True,
        False,
        False,
        False,
        False,
    ]


@pytest.mark.parametrize(
    ("left", "right", "sign"),
    [
        (5, JavaLong(5), 0),
        (JavaLong(6), 5, 1),
        (5, 5.5, -1),
        (5.5, 5, 1),
        (JavaLong((1 << 53) + 1), float(1 << 53), 0),  # as a double
        ("7", 5, 1),
        (5, "7", -1),
        ("5", JavaLong(5), 0),
        ("5", 5.0, 0),
        (5.0, "6", -1),
        ("true", True, 0),
        ("TRUE", True, 0),
        ("x", False, 0),
        ("x", "y", -1),
        ("b", "a", 1),
        (True, 5, -1),
        (5, True, -1),
        (True, False, 1),
        (False, False, 0),
    ],
)
def test_java_compare(left: object, right: object, sign: int) -> None:
    result = java_compare(left, right)
    assert (result > 0) - (result < 0) == sign


@pytest.mark.parametrize(("left", "right"), [("7.5", 5), (5, "x"), ("3000000000", 5), (True, "true"), (5.0, "x")])
def test_java_compare_throws_where_rocketmq_throws(left: object, right: object) -> None:
    with pytest.raises(EvaluationError):
        java_compare(left, right)
