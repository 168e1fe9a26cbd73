"""plain_acl.yml read by PyYAML: every scalar a string, and the clear refusals (with the line) of what an ACL file must not hold."""

from __future__ import annotations

import pytest

from brokers.engine.acl.plain_acl_config import AclConfigError, parse_plain_acl_text
from brokers.engine.acl.plain_acl_yaml import MAX_ACL_FILE_BYTES, MAX_DEPTH, AclYamlError, load_plain_acl_yaml


@pytest.mark.parametrize(
    "text, expected",
    [
        ("", None),
        ("# only a comment\n\n", None),
        ("---\na: 1\n", {"a": "1"}),
        ("a: 1\n...\n", {"a": "1"}),
        ("a: 12345678\nb: true\nc:\nd: ~\ne: null", {"a": "12345678", "b": "true", "c": None, "d": None, "e": None}),
        ("a: ''\nb: \"~\"\nc: 'null'", {"a": "", "b": "~", "c": "null"}),  # quoted: strings, not None
        ("a:\n  - x\n  - y", {"a": ["x", "y"]}),
        ("a:\n- x\n- y\nb: z", {"a": ["x", "y"], "b": "z"}),  # a list indented like its key
        ("a: [x, 'y z', \"w\"]\nb: []", {"a": ["x", "y z", "w"], "b": []}),
        ("a: 'it''s'\nb: \"q\\\"\\u00e9\\n\"", {"a": "it's", "b": 'q"é\n'}),
        ("a: x # comment\nb: 'v # not a comment' # comment", {"a": "x", "b": "v # not a comment"}),
        (
            "a: 10.10.*.*\nb: 1050::5:600:300c:*\nc: 192.168.0.{1,2}",
            {"a": "10.10.*.*", "b": "1050::5:600:300c:*", "c": "192.168.0.{1,2}"},
        ),
        ("'quoted key': v", {"quoted key": "v"}),
        ("l:\n  - k: 1\n    m: 2\n  -\n    k: 3\n  - - n", {"l": [{"k": "1", "m": "2"}, {"k": "3"}, ["n"]]}),
        ("a:\n    b:\n        c: d\n    e: f", {"a": {"b": {"c": "d"}, "e": "f"}}),
        ("a: x#y", {"a": "x#y"}),
        ("l:\n  - k: v\n    p:\n    - a\n    - b\n    s: t\n", {"l": [{"k": "v", "p": ["a", "b"], "s": "t"}]}),
        # what snakeyaml reads and the hand-written reader refused: flow mappings, block and multi-line scalars
        ("a: {b: 1, c: [d]}", {"a": {"b": "1", "c": ["d"]}}),
        ("a: |\n  text\nb: >-\n  folded\n  line", {"a": "text\n", "b": "folded line"}),
        ("a: one\n  two", {"a": "one two"}),
    ],
)
def test_reads(text: str, expected: object) -> None:
    assert load_plain_acl_yaml(text) == expected


def test_yaml_1_1_types_stay_strings() -> None:
    """BaseLoader resolves nothing: the schema, not YAML 1.1, decides what yes, on, 0777 or 1e3 mean."""
    text = "a: yes\nb: on\nc: 0777\nd: 1e3\ne: 0x1F\nf: 2001-01-01\ng: .inf\nh: 1_000\ni: NO\n"
    assert load_plain_acl_yaml(text) == {
        "a": "yes",
        "b": "on",
        "c": "0777",
        "d": "1e3",
        "e": "0x1F",
        "f": "2001-01-01",
        "g": ".inf",
        "h": "1_000",
        "i": "NO",
    }
    config = parse_plain_acl_text("accounts:\n  - accessKey: 0777777\n    secretKey: 12345678\n    admin: true\n")
    assert config.account("0777777").secret_key == "12345678"
    with pytest.raises(AclConfigError, match=r"accounts\[0\]\.admin: must be true or false, got 'yes'"):
        parse_plain_acl_text("accounts:\n  - accessKey: account1\n    secretKey: secret12\n    admin: yes\n")


@pytest.mark.parametrize(
    "text, message",
    [
        ("a: *", "line 1: a * starts an alias, which this file does not allow; quote a * pattern: '*'"),
        ("a: &x 1", "line 1: an anchor (&x) is not allowed"),
        ("a: &x [1]\nb: *x", "line 1: an anchor (&x) is not allowed"),
        ("b: *x", "line 1: an alias (*x) is not allowed"),
        ("a: !!str 1", "line 1: a tag (tag:yaml.org,2002:str) is not allowed"),
        ("a:\n  b: !custom x", "line 2: a tag (!custom) is not allowed"),
        ("a:\n\tb: 1", "line 2: found character '\\t' that cannot start any token"),
        ("a: 1\nb: 2\na: 3", "line 3: the key 'a' appears twice in one mapping"),
        ("l:\n  - k: 1\n    k: 2", "line 3: the key 'k' appears twice"),
        ("? [a]\n: b", "line 1: a key must be a name, not a collection"),
        ("? \n: b", "line 1: a key must be a name, not an empty value"),
        ("a: b: c", "line 1: mapping values are not allowed here"),
        ("a: 'open", "line 1: found unexpected end of stream (while scanning a quoted scalar)"),
        ("a: [x, y", "line 1: expected ',' or ']'"),
        ('a: "\\q"', "line 1: found unknown escape character 'q'"),
        ("a:\n    b: 1\n  c: 2", "line 3: expected <block end>"),
        ("a: 1\n  continued: x", "line 2: mapping values are not allowed here"),
        ("- a\nb: 1", "line 2: expected <block end>"),
        ("a: 1\n---\nb: 2", "line 2: a second YAML document; only one is read"),
        ("a: ok\nb: \x01", "line 2: the character #x0001 is not allowed in YAML"),
    ],
)
def test_refuses_with_the_line(text: str, message: str) -> None:
    with pytest.raises(AclYamlError) as caught:
        load_plain_acl_yaml(text)
    assert message in str(caught.value)


def test_an_alias_bomb_is_refused_before_any_expansion() -> None:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    with pytest.raises(AclYamlError, match="line 1: an anchor"):
        load_plain_acl_yaml("\n".join(lines))


def test_nesting_is_bounded() -> None:
    load_plain_acl_yaml("a: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1))  # the mapping is the first level
    with pytest.raises(AclYamlError, match=f"line 1: nested too deeply \\(more than {MAX_DEPTH} levels\\)"):
        load_plain_acl_yaml("a: " + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "\n")
    with pytest.raises(AclYamlError, match="nested too deeply"):
        load_plain_acl_yaml("".join(" " * i + f"k{i}:\n" for i in range(1000)))


def test_the_size_is_bounded_in_utf8_bytes() -> None:
    filler = "# " + "x" * (MAX_ACL_FILE_BYTES - 2 - len("\na: b\n")) + "\na: b\n"
    assert len(filler.encode()) == MAX_ACL_FILE_BYTES and load_plain_acl_yaml(filler) == {"a": "b"}
    over = "# " + "é" * (MAX_ACL_FILE_BYTES // 2) + "\n"
    with pytest.raises(AclYamlError, match=f"more than the {MAX_ACL_FILE_BYTES} an ACL file may have"):
        load_plain_acl_yaml(over)
    with pytest.raises(AclConfigError, match=r"^acl\.yml: the file has \d+ bytes"):
        parse_plain_acl_text(over, source="acl.yml")
