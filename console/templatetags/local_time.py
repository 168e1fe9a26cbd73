"""``{{ when|local_time }}``: a time in the viewer's time zone with that zone shown.

console.preferences activates the user's zone for each page; this renders an aware datetime (naive
ones are UTC, like everything Gantry stores) in it as ``2024-05-01 20:00:00 CST (UTC+08:00)``, or
``2024-05-01 12:00:00 UTC`` for UTC, so a reader always knows which clock a time is on. A format of
Django's ``date`` filter may be given: ``{{ t|local_time:"Y-m-d H:i" }}``. None renders as nothing.
"""

from __future__ import annotations

from datetime import datetime
from datetime import timezone as dt_timezone

from django import template
from django.utils import dateformat, timezone

register = template.Library()


def zone_label(local: datetime) -> str:
    """``UTC``, or the zone's abbreviation (when it has one) and its offset: ``CST (UTC+08:00)``."""
    offset = local.strftime("%z")
    offset = f"{offset[:3]}:{offset[3:]}" if offset else "+00:00"
    abbreviation = local.tzname() or ""
    if offset == "+00:00" and abbreviation in ("UTC", "GMT", ""):
        return "UTC" if abbreviation != "GMT" else "GMT"
    if abbreviation and abbreviation[0] not in "+-":
        return f"{abbreviation} (UTC{offset})"
    return f"UTC{offset}"


@register.filter
def local_time(value: object, fmt: str = "Y-m-d H:i:s") -> str:
    if not isinstance(value, datetime):
        return "" if value is None else str(value)
    if timezone.is_naive(value):
        value = value.replace(tzinfo=dt_timezone.utc)
    local = timezone.localtime(value)
    return f"{dateformat.format(local, fmt)} {zone_label(local)}"
