"""Tokens of the SQL92 selector: literals typed as RocketMQ types them, comments, and lexical errors."""

from __future__ import annotations

import re

import pytest

from brokers.engine.filter.errors import InvalidSelectorError
from brokers.engine.filter.java_values import JavaLong
from brokers.engine.filter.sql92_lexer import tokenize


def kinds_and_values(text: str) -> list[tuple[str, object]]:
    return [(t.kind, t.value) for t in tokenize(text)][:-1]


def test_keywords_any_case_names_keep_their_case_and_longest_match_wins() -> None:
    assert kinds_and_values("a aNd TAGS between ANDY in_1 $x") == [
        ("ID", "a"),
        ("KEYWORD", "AND"),
        ("ID", "TAGS"),
        ("KEYWORD", "BETWEEN"),
        ("ID", "ANDY"),
        ("ID", "in_1"),
        ("ID", "$x"),
    ]
    assert kinds_and_values("a<>b<=c>=d<e>f=g") == [
        ("ID", "a"),
        ("OP", "<>"),
        ("ID", "b"),
        ("OP", "<="),
        ("ID", "c"),
        ("OP", ">="),
        ("ID", "d"),
        ("OP", "<"),
        ("ID", "e"),
        ("OP", ">"),
        ("ID", "f"),
        ("OP", "="),
        ("ID", "g"),
    ]


def test_integers_are_ints_in_32_bits_longs_past_them_and_an_l_suffix_changes_nothing() -> None:
    values = kinds_and_values("5 2147483647 2147483648 9223372036854775807 5L 0")
    assert values == [
        ("INTEGER", 5),
        ("INTEGER", 2147483647),
        ("INTEGER", 2147483648),
        ("INTEGER", 9223372036854775807),
        ("INTEGER", 5),
        ("INTEGER", 0),
    ]
    assert [type(v) for _, v in values] == [int, int, JavaLong, JavaLong, int, int]


@pytest.mark.parametrize(
    ("text", "value"), [("5.5", 5.5), ("5.", 5.0), (".5", 0.5), ("5e3", 5000.0), ("5.5E-1", 0.55), ("1E+2", 100.0)]
)
def test_floats(text: str, value: float) -> None:
    assert kinds_and_values(text) == [("FLOAT", value)]


def test_no_hexadecimal_or_octal_literals_as_in_rocketmq() -> None:
    assert kinds_and_values("0x1F") == [("INTEGER", 0), ("ID", "x1F")]
    assert kinds_and_values("017") == [("INTEGER", 0), ("INTEGER", 17)]


def test_strings_double_their_quotes_and_may_span_lines() -> None:
    assert kinds_and_values("'it''s' '' 'a\nb' ''''") == [
        ("STRING", "it's"),
        ("STRING", ""),
        ("STRING", "a\nb"),
        ("STRING", "'"),
    ]


def test_comments_and_whitespace_separate_tokens() -> None:
    assert kinds_and_values("a/* c */>\t5 -- rest\n\fAND\rb") == [
        ("ID", "a"),
        ("OP", ">"),
        ("INTEGER", 5),
        ("KEYWORD", "AND"),
        ("ID", "b"),
    ]
    assert kinds_and_values("a -- no line end") == [
        ("ID", "a"),
        ("OP", "-"),
        ("OP", "-"),
        ("ID", "no"),
        ("ID", "line"),
        ("ID", "end"),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a ! b", "unexpected character '!' at line 1, column 3"),
        ("a = 'open", "the string opened at line 1, column 5 is never closed"),
        ("a /* open", "a comment opened at line 1, column 3 is never closed"),
        ("a\n= é", "unexpected character 'é' at line 2, column 3"),
        ("a > 9223372036854775808", "outside the range of a long"),
        ("a > 1e309", "greater than"),
        ("a > 0.0", "less than 4.9E-324"),
        ("a > 1e-400", "less than 4.9E-324"),
    ],
)
def test_lexical_errors_name_the_problem_and_its_place(text: str, message: str) -> None:
    with pytest.raises(InvalidSelectorError, match=re.escape(message)):
        tokenize(text)
