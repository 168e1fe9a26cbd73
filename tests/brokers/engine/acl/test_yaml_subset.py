"""The YAML subset of plain_acl.yml: what is read, and the clear errors for what is not."""
from __future__ import annotations

import pytest

from brokers.engine.acl.yaml_subset import YamlSubsetError, load_yaml_subset


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", None),
        ("# only a comment\n\n", None),
        ("---\na: 1\n", {"a": "1"}),
        ("a: 12345678\nb: true\nc:\nd: ~\ne: null", {"a": "12345678", "b": "true", "c": None, "d": None, "e": None}),
        ("a:\n  - x\n  - y", {"a": ["x", "y"]}),
        ("a:\n- x\n- y\nb: z", {"a": ["x", "y"], "b": "z"}),  # a list indented like its key
        ("a: [x, 'y z', \"w\"]\nb: []", {"a": ["x", "y z", "w"], "b": []}),
        ("a: 'it''s'\nb: \"q\\\"\\u00e9\\n\"", {"a": "it's", "b": 'q"é\n'}),
        ("a: x # comment\nb: 'v # not a comment' # comment", {"a": "x", "b": "v # not a comment"}),
        ("a: 10.10.*.*\nb: 1050::5:600:300c:*\nc: 192.168.0.{1,2}", {"a": "10.10.*.*", "b": "1050::5:600:300c:*", "c": "192.168.0.{1,2}"}),
        ("'quoted key': v", {"quoted key": "v"}),
        ("l:\n  - k: 1\n    m: 2\n  -\n    k: 3\n  - - n", {"l": [{"k": "1", "m": "2"}, {"k": "3"}, ["n"]]}),
        ("a:\n    b:\n        c: d\n    e: f", {"a": {"b": {"c": "d"}, "e": "f"}}),
        ("a: x#y", {"a": "x#y"}),
        ("l:\n  - k: v\n    p:\n    - a\n    - b\n    s: t\n", {"l": [{"k": "v", "p": ["a", "b"], "s": "t"}]}),
    ],
)
def test_reads(text: str, expected: object) -> None:
    assert load_yaml_subset(text) == expected


@pytest.mark.parametrize(
    "text, message",
    [
        ("a: *", "line 1: an alias (a bare * must be quoted"),
        ("a: &x 1", "line 1: an anchor"),
        ("a: !!str 1", "line 1: a tag"),
        ("a: |\n  text", "line 1: a block scalar"),
        ("a: {b: 1}", "line 1: a flow mapping"),
        ("a:\n\tb: 1", "line 2: a tab in the indentation"),
        ("a: 1\nb: 2\na: 3", "line 3: the key 'a' appears twice"),
        ("a: b: c", "line 1: a 'key: value' inside a value"),
        ("a: 'open", "line 1: a quoted value must close on its line"),
        ("a: [x, [y]]", "line 1: nested flow collections"),
        ("a: [x, y", "line 1: a flow list [ ... ] must close"),
        ("a: \"\\q\"", "line 1: unknown escape \\q"),
        ("a: 'x' y", "line 1: unexpected text after a quoted value"),
        ("a:\n    b: 1\n  c: 2", "line 3: unexpected indentation"),
        ("a: 1\n  continued", "line 2: unexpected indentation"),
        ("- a\nb: 1", "line 2: a 'key: value' among list items"),
        ("  a: 1\nb: 2", "line 2: does not continue the block above it"),
        ("a:\n  - x\n  y: 1", "line 3: a 'key: value' among list items"),
        ("a:\n  - x\n    y: 1", "line 3: unexpected indentation after a list item"),
        ("a: 1\n---\nb: 2", "line 2: only one YAML document"),
        ("just a scalar line\nand another", "line 1: expected 'key: value'"),
    ],
)
def test_refuses_with_the_line(text: str, message: str) -> None:
    with pytest.raises(YamlSubsetError) as caught:
        load_yaml_subset(text)
    assert message in str(caught.value)
