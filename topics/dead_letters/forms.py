"""Forms of the dead-letter page: which page to show, and the export's time range."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from console.errors import InvalidInput
from console.times import parse_time_ms
from topics.dead_letters.types import MAX_EXPORT


class DeadLetterPageForm(forms.Form):
    page = forms.IntegerField(label=_("Page"), required=False, min_value=1)
    page_size = forms.IntegerField(label=_("Page size"), required=False, min_value=1, max_value=100)


class _TimeField(forms.CharField):
    """ISO 8601 (no zone = UTC) or ms since the epoch; empty means no bound."""

    def clean(self, value) -> int | None:
        value = super().clean(value)
        if not value:
            return None
        try:
            return parse_time_ms(value, self.label or "time")
        except InvalidInput as exc:
            raise forms.ValidationError(next(iter(exc.fields.values()))[0]) from None


class DeadLetterExportForm(forms.Form):
    begin = _TimeField(required=False, label=_("Moved from"))
    end = _TimeField(required=False, label=_("Moved until"))
    limit = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_EXPORT,
        label=_("At most"),
        widget=forms.NumberInput(attrs={"placeholder": f"{MAX_EXPORT}"}),
    )
