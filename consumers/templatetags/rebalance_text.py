"""``{{ job.reason|rebalance_text }}``: a rebalance job's stored English sentence in the page's language."""

from __future__ import annotations

from django import template

from consumers.rebalance.texts import REBALANCE_SENTENCES

register = template.Library()


@register.filter
def rebalance_text(value: object) -> str:
    return REBALANCE_SENTENCES.text(str(value or ""))
