"""``{{ job.reason|promotion_text }}``: a promotion job's stored English sentence in the page's language."""

from __future__ import annotations

from django import template

from brokers.promotion.texts import PROMOTION_SENTENCES

register = template.Library()


@register.filter
def promotion_text(value: object) -> str:
    return PROMOTION_SENTENCES.text(str(value or ""))
