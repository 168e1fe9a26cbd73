"""Template filters for a broker store's figures: a 0..1 ratio as a percentage, byte counts in powers of 1024.

One rule with the alerts' text (:mod:`brokers.gateway.store_disk`); None prints as "—".
"""

from __future__ import annotations

from django import template

from brokers.gateway.store_disk import format_bytes, format_ratio

register = template.Library()


@register.filter
def percent(ratio: float | None) -> str:
    """0.75 -> "75.0 %"; None -> "—"."""
    return format_ratio(ratio) or "—"


@register.filter
def binary_bytes(n: int | None) -> str:
    """1536 -> "1.5 KiB"; None -> "—"."""
    return "—" if n is None else format_bytes(n)
