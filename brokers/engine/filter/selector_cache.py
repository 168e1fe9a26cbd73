"""Compile a subscription's expression once, whatever number of pulls use it (RocketMQ keeps a parse cache too).

A subscription's filter is a pure function of its expression type and text, so compiled filters
are kept by ``(type, text)``: every consumer (and every pull, held pull and CHECK_CLIENT_CONFIG)
with the same expression shares one. A refusal is kept as well, so a consumer that pulls with a
malformed expression over and over is answered from the cache instead of by a parse each time.

The cache is least-recently-used and bounded twice: MAX_ENTRIES expressions and MAX_CACHED_CHARS
characters of expression text in all. A compiled selector takes about 60 bytes per character of
its text (a 3,500-character one 215 KB), so the cache holds at most about 8 MB whoever
subscribes with what.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from brokers.engine.filter.errors import InvalidSelectorError
from brokers.engine.filter.sql92_eval import CompiledSelector, compile_selector_text

__all__ = ["EXPRESSION_SQL92", "MAX_CACHED_CHARS", "MAX_ENTRIES", "SelectorCache", "compile_expression"]

EXPRESSION_SQL92 = "SQL92"
MAX_ENTRIES = 1024  # distinct expressions a broker's consumers use at once; RocketMQ keeps 100
MAX_CACHED_CHARS = 128 * 1024  # 32 expressions at the 4096-character limit, or 1024 of 128 characters


class SelectorCache:
    """An LRU of compiled selectors (and refusals) by (expression type, expression)."""

    def __init__(self, max_entries: int = MAX_ENTRIES, max_chars: int = MAX_CACHED_CHARS) -> None:
        self.max_entries = max_entries
        self.max_chars = max_chars
        self._entries: OrderedDict[tuple[str, str], CompiledSelector | _Refusal] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def compile(self, expression_type: str, expression: str) -> CompiledSelector:
        """The compiled filter of ``expression``; InvalidSelectorError when it does not compile or the type is not SQL92."""
        key = (expression_type.upper(), expression)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
        if entry is None:
            entry = _compile(*key)
            self._keep(key, entry)
        if isinstance(entry, _Refusal):
            raise entry.error_type(entry.message)  # a fresh error: a kept one would grow a traceback per raise
        return entry

    def _keep(self, key: tuple[str, str], entry: CompiledSelector | _Refusal) -> None:
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = entry
            self._chars += len(key[1])
            while len(self._entries) > self.max_entries or (self._chars > self.max_chars and len(self._entries) > 1):
                (_, text), _ = self._entries.popitem(last=False)
                self._chars -= len(text)


@dataclass(frozen=True, slots=True)
class _Refusal:
    """A kept compile error: its type and message."""

    error_type: type[InvalidSelectorError]
    message: str


def _compile(expression_type: str, expression: str) -> CompiledSelector | _Refusal:
    if expression_type != EXPRESSION_SQL92:
        return _Refusal(
            InvalidSelectorError, f"the expression type {expression_type!r} is not supported (TAG or SQL92)"
        )
    try:
        return compile_selector_text(expression)
    except InvalidSelectorError as exc:
        return _Refusal(type(exc), str(exc))


_SHARED = SelectorCache()


def compile_expression(expression_type: str, expression: str) -> CompiledSelector:
    """Compile through the process's shared cache (see :class:`SelectorCache`)."""
    return _SHARED.compile(expression_type, expression)
