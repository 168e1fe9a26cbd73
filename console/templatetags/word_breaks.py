"""``{{ name|word_breaks }}``: a long camelCase name (RocketMQ's ``diskMaxUsedSpaceRatio``) with ``<wbr>``
between its words, so a table header may break it over lines there and nowhere else. Escapes the name."""

from __future__ import annotations

import re

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

WORD_START = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@register.filter
def word_breaks(value: object) -> SafeString:
    return mark_safe(WORD_START.sub("<wbr>", escape(str(value))))
