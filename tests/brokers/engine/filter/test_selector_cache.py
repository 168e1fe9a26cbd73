"""One compile per distinct expression; refusals kept too; the cache stays within its bounds."""

from __future__ import annotations

import pytest

from brokers.engine.filter.errors import InvalidSelectorError, SelectorLimitError
from brokers.engine.filter.selector_cache import SelectorCache, compile_expression


def test_the_same_expression_compiles_once_and_the_type_is_case_blind() -> None:
    cache = SelectorCache()
    first = cache.compile("SQL92", "a > 5")
    assert cache.compile("sql92", "a > 5") is first
    assert cache.compile("SQL92", "a > 6") is not first
    assert len(cache) == 2
    assert compile_expression("SQL92", "region = 'eu'").matches({"region": "eu"})


def test_a_refusal_is_kept_and_raised_fresh_each_time() -> None:
    cache = SelectorCache()
    errors = []
    for _ in range(3):
        with pytest.raises(InvalidSelectorError, match="unexpected 'b'") as caught:
            cache.compile("SQL92", "a > 1 b")
        errors.append(caught.value)
    assert len(cache) == 1 and errors[0] is not errors[1]
    with pytest.raises(SelectorLimitError):
        cache.compile("SQL92", "a = '" + "x" * 5000 + "'")


def test_only_sql92_compiles() -> None:
    with pytest.raises(InvalidSelectorError, match="the expression type 'CLASS' is not supported"):
        SelectorCache().compile("CLASS", "a > 1")


def test_least_recently_used_entries_go_first_by_count_and_by_characters() -> None:
    cache = SelectorCache(max_entries=3, max_chars=1000)
    a = cache.compile("SQL92", "a > 1")
    cache.compile("SQL92", "b > 1")
    cache.compile("SQL92", "a > 1")  # a is now the most recently used
    cache.compile("SQL92", "c > 1")
    cache.compile("SQL92", "d > 1")  # evicts b, the least recently used
    assert len(cache) == 3 and cache.compile("SQL92", "a > 1") is a
    long = "e = '" + "x" * 990 + "'"
    cache.compile("SQL92", long)
    assert len(cache) == 1  # 996 characters leave no room for the others
