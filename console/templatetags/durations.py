"""``{{ seconds|duration }}``: a span of seconds in its two largest units ("12.5 s", "3 min 4 s",
"2 h 5 min", "1 d 3 h"), the units translated. Never ``m:ss``: a time of day reads HH:MM:SS on every page."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.translation import pgettext

register = template.Library()


def _units() -> tuple[tuple[int, str], ...]:
    return (
        (86400, pgettext("duration unit", "d")),
        (3600, pgettext("duration unit", "h")),
        (60, pgettext("duration unit", "min")),
        (1, pgettext("duration unit", "s")),
    )


@register.filter
def duration(value: Any) -> str:
    """None or a non-number reads "—"."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return "—"
    units = _units()
    if seconds < 60:
        return (
            f"{seconds:.1f} {units[3][1]}"
            if seconds < 10 and seconds != int(seconds)
            else f"{int(seconds)} {units[3][1]}"
        )
    whole = int(seconds)
    for i, (size, name) in enumerate(units[:-1]):
        if whole >= size:
            smaller_size, smaller_name = units[i + 1]
            return f"{whole // size} {name} {(whole % size) // smaller_size} {smaller_name}"
    return f"{whole} {units[3][1]}"
