"""json_depth_exceeds: whether a JSON text nests deeper than a limit, in time linear in its size.

Python's ``json`` decoder recurses once per nesting level: a header of 100k ``[`` raises
RecursionError deep in the decoder (once logged as a traceback), and a limit well
below the interpreter's recursion limit keeps the decoder's stack small. The check runs before
decoding:

- a text with no more ``{``/``[`` than the limit cannot nest deeper: two ``bytes.count`` calls
  (C speed) answer the common case;
- otherwise strings are skipped by one regular expression (brackets inside them do not count)
  and the brackets are counted in one pass; the pass stops as soon as the limit is passed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["json_depth_exceeds"]

# A JSON string (with escapes) or one bracket; anything else is skipped by finditer.
# An unterminated string runs to the end of the text, so every quote starts a match and no
# position is scanned twice (a string that failed to match would be rescanned from each quote).
_TOKENS_B = re.compile(rb'"(?:[^"\\]+|\\.)*(?:"|\\?\Z)|[\[\]{}]', re.DOTALL)
_TOKENS_S = re.compile(r'"(?:[^"\\]+|\\.)*(?:"|\\?\Z)|[\[\]{}]', re.DOTALL)
_OPEN = frozenset((b"{", b"[", "{", "["))
_CLOSE = frozenset((b"}", b"]", "}", "]"))


def json_depth_exceeds(text: bytes | bytearray | str, max_depth: int) -> bool:
    """True when ``text`` opens more than ``max_depth`` objects/arrays inside one another.

    >>> json_depth_exceeds(b'{"a":{"b":[1]}}', 3), json_depth_exceeds(b'{"a":{"b":[1]}}', 2)
    (False, True)
    >>> json_depth_exceeds('{"s":"[[[[[["}', 1)
    False
    """
    tokens: Iterator[re.Match[str]] | Iterator[re.Match[bytes]]
    if isinstance(text, str):
        if text.count("{") + text.count("[") <= max_depth:
            return False
        tokens = _TOKENS_S.finditer(text)
    else:
        if text.count(b"{") + text.count(b"[") <= max_depth:
            return False
        tokens = _TOKENS_B.finditer(text)
    depth = 0
    for match in tokens:
        token = match.group()
        if token in _OPEN:
            depth += 1
            if depth > max_depth:
                return True
        elif token in _CLOSE:
            depth -= 1
    return False
