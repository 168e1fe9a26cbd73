"""Times typed by people and scripts: the one rule, shared by every form and serializer.

A time is milliseconds since the epoch (a JSON integer or a string of digits) or ISO 8601 text
(``2024-05-01T12:00:00Z``; without a zone it is UTC). Anything else is refused with
:class:`console.errors.InvalidInput` naming the field.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from console.errors import InvalidInput

_MS_RE = re.compile(r"-?\d{1,16}")
MAX_MS = 253402300799999  # 9999-12-31T23:59:59.999Z
# what parse_time_ms accepts, for the OpenAPI schema: ms in range, or an RFC 3339 time of years well inside it
TIME_SCHEMA = {
    "oneOf": [
        {"type": "integer", "minimum": 0, "maximum": MAX_MS, "description": "ms since the epoch"},
        {"type": "string", "format": "date-time", "pattern": r"^(19[89]\d|[2-8]\d{3})-"},
    ]
}
TIME_HINT = "give an ISO 8601 time (2024-05-01T12:00:00Z; no zone means UTC) or milliseconds since the epoch"


def parse_time_ms(value: object, field_name: str) -> int:
    """A time as milliseconds since the epoch: an int, a digit string, or ISO 8601."""
    if isinstance(value, bool):
        raise InvalidInput(field_name, f"{value!r} is not a time; {TIME_HINT}.")
    if isinstance(value, int):
        ms = value
    elif isinstance(value, str) and _MS_RE.fullmatch(value.strip()):
        ms = int(value.strip())
    elif isinstance(value, str) and value.strip():
        text = value.strip()
        try:
            when = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
        except ValueError:
            raise InvalidInput(field_name, f"{value!r} is not a time; {TIME_HINT}.") from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=timezone.utc)
        ms = int(when.timestamp() * 1000)
    else:
        raise InvalidInput(field_name, f"{value!r} is not a time; {TIME_HINT}.")
    if not 0 <= ms <= MAX_MS:
        raise InvalidInput(field_name, f"{value!r} is out of range; {TIME_HINT}.")
    return ms
