"""The API's JSON parser: DRF's, with a nesting limit, so a hostile body is a 400 and never a 500.

Python's json module recurses once per nesting level: a body of 100,000 ``[`` raises
RecursionError (a 500 with a traceback) and even a few hundred levels make every later walk of the
data (serializers, the audit log's JSON) recurse as deep. API inputs are small documents a few
levels deep, so anything past :data:`MAX_JSON_DEPTH` is refused as a parse error. The body's size
is limited before this (settings.MAX_BODY_BYTES, 413, console.middleware.BodySizeLimitMiddleware).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

MAX_JSON_DEPTH = 64  # the deepest API input (an allocation preview's layout) is 4 levels; Java's Jackson allows 1000


def json_depth(value: Any) -> int:
    """How deeply ``value`` nests lists and dicts (a scalar is 0, ``[]`` is 1), walked without recursion."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, depth = todo.pop()
        children: Iterable[Any]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if depth > MAX_JSON_DEPTH:
            break  # already too deep: no need to walk the rest
        todo.extend((child, depth + 1) for child in children)
    return deepest


class BoundedJSONParser(JSONParser):
    """JSONParser that answers 400 for JSON nested deeper than MAX_JSON_DEPTH (or too deep to parse)."""

    def parse(self, stream, media_type=None, parser_context=None):
        too_deep = f"JSON parse error - nested deeper than {MAX_JSON_DEPTH} levels"
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(too_deep) from None
        if json_depth(data) > MAX_JSON_DEPTH:
            raise ParseError(too_deep)
        return data
