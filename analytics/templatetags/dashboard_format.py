"""Template filters for the dashboards: the §4 JSON carries ISO 8601 strings and plain numbers;
these turn them into what a person reads (UTC times, rates, byte rates, durations).

The same units as static/js/dashboards.js: msgs/s, bytes/s (KiB, MiB, GiB: powers of 1024),
messages.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from analytics.chart_text import CHART_TEXT

register = template.Library()

_BYTE_UNITS = ("bytes/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s")


@register.filter
def as_datetime(value: object) -> datetime | None:
    """An aware datetime from a datetime or an ISO 8601 string (``...Z`` or with an offset); None stays None."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    text = str(value).strip()
    try:
        when = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


@register.filter
def rate(value: Any) -> str:
    """A messages-per-second figure: whole numbers from 100, one decimal from 1 (``12.5``, ``50``), else 2 digits."""
    if value is None:
        return "—"
    number = float(value)
    if number == 0:
        return "0"
    if abs(number) >= 100:
        return f"{number:,.0f}"
    if abs(number) >= 1:
        return _trim_zero(f"{number:.1f}")
    return f"{number:.2g}"


def _trim_zero(text: str) -> str:
    return text[:-2] if text.endswith(".0") else text


@register.filter
def bytes_rate(value: Any) -> str:
    """Bytes per second in powers of 1024: ``10.0 KiB/s``."""
    if value is None:
        return "—"
    number = float(value)
    unit = 0
    while abs(number) >= 1024 and unit < len(_BYTE_UNITS) - 1:
        number /= 1024
        unit += 1
    return f"{number:.0f} {_BYTE_UNITS[unit]}" if unit == 0 else f"{_trim_zero(f'{number:.1f}')} {_BYTE_UNITS[unit]}"


@register.filter
def duration(seconds: Any) -> str:
    """A duration for people: ``45 s``, ``12 min 5 s``, ``3 h 20 min``, ``2 d 4 h``; None is ``—``."""
    if seconds is None:
        return "—"
    total = int(round(float(seconds)))
    if total < 60:
        return f"{total} s"
    minutes, secs = divmod(total, 60)
    if minutes < 60:
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"


@register.filter
def slope(value: Any) -> str:
    """A backlog slope in messages per second, signed: ``+12.5/s``, ``-0.3/s``."""
    if value is None:
        return "—"
    number = float(value)
    return f"{number:+.1f}/s" if abs(number) >= 0.1 or number == 0 else f"{number:+.2g}/s"


HEADLINE_CHARS = 200


@register.filter
def headline(text: object, limit: int = HEADLINE_CHARS) -> str:
    """The first line of an error, cut at ``limit`` characters (a Spark error carries a Java stack)."""
    first = str(text or "").strip().splitlines()[0] if str(text or "").strip() else ""
    first = first if len(first) <= limit else first[: limit - 1].rstrip() + "…"
    return first.rstrip(".")  # the template ends the sentence


@register.filter
def has_more(text: object, limit: int = HEADLINE_CHARS) -> bool:
    """Whether ``headline`` leaves something out (more lines, or a longer first line)."""
    lines = str(text or "").strip().splitlines()
    return len(lines) > 1 or (bool(lines) and len(lines[0]) > limit)


@register.simple_tag
def chart_text() -> SafeString:
    """The dashboards' script text in the page's language, as JSON in ``<div id="chart-text" data-json>`` (an
    attribute, not an inline script: the Content-Security-Policy allows none)."""
    return format_html(
        '<div id="chart-text" data-json="{}" hidden></div>',
        json.dumps({key: str(text) for key, text in CHART_TEXT.items()}),
    )


@register.filter
def range_name(value: object) -> str:
    """A range (``hour``, ``day``, ``week``) in the page's language, for "last hour"."""
    return str(CHART_TEXT.get(f"range.{value}", value))
