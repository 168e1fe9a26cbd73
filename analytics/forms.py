"""The dashboards' one filter, the time range, read from ``?range=`` like every list filter of the
console (console.query_filters): a range it does not know is refused, not replaced by the default."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from analytics import selectors
from console.query_filters import ChoiceFilter, FilterForm

RANGES = tuple(selectors.RANGES)  # hour, day, week; the first is the default


class RangeForm(FilterForm):
    range = ChoiceFilter(choices=[(r, r) for r in RANGES], initial=RANGES[0], label=_("Range"))

    def filters_from(self, data: dict) -> str:
        return data.get("range", RANGES[0])
